// tandem::sgetrs through the public API, given LAPACK's factors (so the solve
// is tested apart from tandem's factorization). Oracles: the residual
// ||op(A) x - b|| / (||op(A)|| ||x|| n eps) < 30 on every backend, and
// LAPACK's sgetrs bit for bit on the cpu backend.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "api_backends.hpp"
#include "lapack_oracle.hpp"
#include "tandem/tandem.hpp"
#include "test_support.hpp"

namespace tandem::test {
namespace {

constexpr char kAllTrans[] = {'N', 'T', 'C', 'n', 't', 'c'};

std::string describe(const std::string& backend, char trans, int n, int nrhs, uint64_t seed) {
    return backend + " trans=" + std::string(1, trans) + " n=" + std::to_string(n) +
           " nrhs=" + std::to_string(nrhs) + " seed=" + std::to_string(seed);
}

double residual_for(char trans, int n, int nrhs, const std::vector<float>& a, int lda,
                    const std::vector<float>& x, const std::vector<float>& b, int ldb) {
    return trans == 'N' || trans == 'n'
               ? solve_residual(n, nrhs, a.data(), lda, x.data(), ldb, b.data(), ldb)
               : solve_residual_trans(n, nrhs, a.data(), lda, x.data(), ldb, b.data(), ldb);
}

// One solve with LAPACK's factors of a fresh matrix of `kind`: INFO 0, small
// residual, A, ipiv and B's padding untouched; with `exact`, LAPACK's X.
void check_getrs(const BackendCase& c, MatrixKind kind, char trans, int n, int nrhs) {
    const uint64_t seed = test_seed();
    SCOPED_TRACE(describe(c.name(), trans, n, nrhs, seed));
    const int lda = n + 2, ldb = n + 3;
    const std::vector<float> a = make_matrix(n, n, lda, kind, seed);
    const LapackFactors f = lapack_getrf(n, n, a, lda);
    ASSERT_EQ(f.info, 0);
    const std::vector<float> b = make_matrix(n, nrhs, ldb, MatrixKind::random, seed + 1);
    const std::vector<float> lu_before = f.lu;
    const std::vector<int> ipiv_before = f.ipiv;

    std::vector<float> x = b;
    Report report;
    EXPECT_EQ(sgetrs(trans, n, nrhs, f.lu.data(), lda, f.ipiv.data(), x.data(), ldb, c.options(),
                     &report),
              0);
    EXPECT_EQ(report.info, 0);
    EXPECT_EQ(report.backend, c.backend);
    EXPECT_GE(report.seconds, 0.0);
    EXPECT_LT(residual_for(trans, n, nrhs, a, lda, x, b, ldb), kResidualBound);
    EXPECT_EQ(padding_changes(n, nrhs, ldb, x.data()), 0);
    EXPECT_EQ(first_bit_difference(f.lu, lu_before), -1);
    EXPECT_EQ(f.ipiv, ipiv_before);
    if (c.equals_lapack()) {
        EXPECT_EQ(first_bit_difference(x, lapack_getrs(trans, n, nrhs, f, lda, b, ldb)), -1);
    }
}

class GetrsKinds : public BackendTest<std::tuple<BackendCase, MatrixKind>> {};

TEST_P(GetrsKinds, SolvesEveryTransWithSmallResidual) {
    const BackendCase c = std::get<0>(GetParam());
    const MatrixKind kind = std::get<1>(GetParam());
    for (int n : {1, 2, 3, 17, 65, 100, 257})
        for (int nrhs : {1, 3, 17})
            for (char trans : kAllTrans) check_getrs(c, kind, trans, n, nrhs);
}

INSTANTIATE_TEST_SUITE_P(
    Api, GetrsKinds,
    testing::Combine(testing::ValuesIn(api_backend_cases_short()),
                     testing::Values(MatrixKind::random, MatrixKind::diagonally_dominant,
                                     MatrixKind::badly_scaled, MatrixKind::ill_conditioned)),
    [](const auto& p) {
        return std::get<0>(p.param).name() + "_" + kind_name(std::get<1>(p.param));
    });

class GetrsBackends : public BackendTest<BackendCase> {};

TEST_P(GetrsBackends, SolvesWithOddSizesAndManyRightHandSides) {
    const BackendCase c = GetParam();
    for (int n : {63, 130})
        for (int nrhs : {2, 64, 65})
            for (char trans : {'N', 'T'}) check_getrs(c, MatrixKind::random, trans, n, nrhs);
}

// Row-major A and B are the transposed storage of column-major ones: the
// result must be the transposed storage of the column-major result.
TEST_P(GetrsBackends, RowMajorIsTransposedStorageOfColMajor) {
    const BackendCase c = GetParam();
    for (int n : {1, 17, 65})
        for (int nrhs : {1, 5})
            for (char trans : kAllTrans) {
                const uint64_t seed = test_seed();
                SCOPED_TRACE(describe(c.name(), trans, n, nrhs, seed));
                const int lda = n, ldb = n;
                const int lda_row = n + 1, ldb_row = nrhs + 2;
                const std::vector<float> a = make_matrix(n, n, lda, MatrixKind::random, seed);
                const LapackFactors f = lapack_getrf(n, n, a, lda);
                ASSERT_EQ(f.info, 0);
                const std::vector<float> b =
                    make_matrix(n, nrhs, ldb, MatrixKind::random, seed + 1);

                std::vector<float> x_col = b;
                ASSERT_EQ(sgetrs(trans, n, nrhs, f.lu.data(), lda, f.ipiv.data(), x_col.data(), ldb,
                                 c.options()),
                          0);
                const std::vector<float> lu_row = to_row_major(n, n, f.lu.data(), lda, lda_row);
                std::vector<float> x_row = to_row_major(n, nrhs, b.data(), ldb, ldb_row);
                ASSERT_EQ(sgetrs(trans, n, nrhs, lu_row.data(), lda_row, f.ipiv.data(),
                                 x_row.data(), ldb_row, c.options(Layout::row_major)),
                          0);
                EXPECT_EQ(padding_changes(nrhs, n, ldb_row, x_row.data()), 0);
                const std::vector<float> x_row_as_col =
                    to_col_major(n, nrhs, x_row.data(), ldb_row, ldb);
                EXPECT_EQ(first_bit_difference(x_row_as_col, x_col), -1);
                EXPECT_LT(residual_for(trans, n, nrhs, a, lda, x_row_as_col, b, ldb),
                          kResidualBound);
            }
}

TEST_P(GetrsBackends, NothingToSolveLeavesBUntouched) {
    const BackendCase c = GetParam();
    const uint64_t seed = test_seed();
    SCOPED_TRACE(c.name() + " seed=" + std::to_string(seed));
    const int n = 9, ldb = n + 1;
    const std::vector<float> a = make_matrix(n, n, n, MatrixKind::random, seed);
    const LapackFactors f = lapack_getrf(n, n, a, n);
    std::vector<float> b(static_cast<size_t>(ldb * 3), kPadding);
    const std::vector<float> before = b;
    EXPECT_EQ(sgetrs('N', n, 0, f.lu.data(), n, f.ipiv.data(), b.data(), ldb, c.options()), 0);
    EXPECT_EQ(sgetrs('T', n, 0, f.lu.data(), n, f.ipiv.data(), nullptr, ldb, c.options()), 0);
    EXPECT_EQ(sgetrs('N', 0, 3, nullptr, 1, nullptr, b.data(), 1, c.options()), 0);
    EXPECT_EQ(sgetrs('N', 0, 0, nullptr, 1, nullptr, nullptr, 1, c.options()), 0);
    EXPECT_EQ(first_bit_difference(b, before), -1);
}

INSTANTIATE_TEST_SUITE_P(Api, GetrsBackends, testing::ValuesIn(api_backend_cases()),
                         [](const auto& p) { return p.param.name(); });

}  // namespace
}  // namespace tandem::test
