// LAPACK (through LAPACKE) run on copies of a test's inputs: the oracle for
// INFO on every backend, and for every bit of the results on the cpu backend,
// which calls the same LAPACK.
#ifndef TANDEM_TESTS_LAPACK_ORACLE_HPP
#define TANDEM_TESTS_LAPACK_ORACLE_HPP

#include <lapacke.h>

#include <algorithm>
#include <vector>

namespace tandem::test {

struct LapackFactors {
    std::vector<float> lu;  // column-major, the lda of the input
    std::vector<int> ipiv;  // min(m, n) entries (at least one, so data() is never null)
    int info = 0;
};

// sgetrf of the column-major m x n matrix a (lda), on a copy.
inline LapackFactors lapack_getrf(int m, int n, const std::vector<float>& a, int lda) {
    LapackFactors f{a, std::vector<int>(static_cast<size_t>(std::max(1, std::min(m, n))), 0), 0};
    f.info = LAPACKE_sgetrf(LAPACK_COL_MAJOR, m, n, f.lu.data(), lda, f.ipiv.data());
    f.ipiv.resize(static_cast<size_t>(std::min(m, n)));
    return f;
}

// sgetrs with LAPACK's factors; returns X (column-major, the ldb of b).
inline std::vector<float> lapack_getrs(char trans, int n, int nrhs, const LapackFactors& f, int lda,
                                       std::vector<float> b, int ldb) {
    std::vector<int> ipiv = f.ipiv;
    ipiv.resize(std::max<size_t>(ipiv.size(), 1));
    LAPACKE_sgetrs(LAPACK_COL_MAJOR, trans, n, nrhs, f.lu.data(), lda, ipiv.data(), b.data(), ldb);
    return b;
}

}  // namespace tandem::test

#endif  // TANDEM_TESTS_LAPACK_ORACLE_HPP
