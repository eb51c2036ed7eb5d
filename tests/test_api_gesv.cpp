// tandem::sgesv through the public API. Oracles: the residual
// ||A x - b|| / (||A|| ||x|| n eps) < 30 and LAPACK's INFO on every backend;
// on the cpu backend LAPACK's sgetrf + sgetrs bit for bit (A, ipiv and X).
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

std::string describe(const std::string& backend, int n, int nrhs, uint64_t seed) {
    return backend + " n=" + std::to_string(n) + " nrhs=" + std::to_string(nrhs) +
           " seed=" + std::to_string(seed);
}

struct GesvResult {
    int info;
    std::vector<float> lu;
    std::vector<int> ipiv;
    std::vector<float> x;
    Report report;
};

GesvResult run_gesv(const Options& options, int n, int nrhs, const std::vector<float>& a, int lda,
                    const std::vector<float>& b, int ldb) {
    GesvResult r{0, a, std::vector<int>(static_cast<size_t>(n), -7), b, {}};
    r.info = sgesv(n, nrhs, r.lu.data(), lda, r.ipiv.data(), r.x.data(), ldb, options, &r.report);
    return r;
}

// Solves with a fresh matrix of `kind` and checks INFO 0, the residual, the
// factorization residual, padding, the Report, and LAPACK's bits when `exact`.
void check_gesv(const BackendCase& c, MatrixKind kind, int n, int nrhs) {
    const uint64_t seed = test_seed();
    SCOPED_TRACE(describe(c.name(), n, nrhs, seed));
    const int lda = n + 1, ldb = n + 2;
    const std::vector<float> a = make_matrix(n, n, lda, kind, seed);
    const std::vector<float> b = make_matrix(n, nrhs, ldb, MatrixKind::random, seed + 1);
    const GesvResult r = run_gesv(c.options(), n, nrhs, a, lda, b, ldb);
    EXPECT_EQ(r.info, 0);
    EXPECT_EQ(r.report.info, 0);
    EXPECT_EQ(r.report.backend, c.backend);
    EXPECT_GE(r.report.seconds, 0.0);
    EXPECT_LT(solve_residual(n, nrhs, a.data(), lda, r.x.data(), ldb, b.data(), ldb),
              kResidualBound);
    EXPECT_LT(factorization_residual(n, n, a.data(), lda, r.lu.data(), lda, r.ipiv.data()),
              kResidualBound);
    EXPECT_EQ(padding_changes(n, n, lda, r.lu.data()), 0);
    EXPECT_EQ(padding_changes(n, nrhs, ldb, r.x.data()), 0);
    if (c.backend == Backend::host && n > 0) {
        EXPECT_GE(r.report.steps, 1);
        EXPECT_EQ(r.report.inverse_steps + r.report.trsm_steps, r.report.steps);
    }
    if (c.equals_lapack()) {
        const LapackFactors f = lapack_getrf(n, n, a, lda);
        EXPECT_EQ(r.ipiv, f.ipiv);
        EXPECT_EQ(first_bit_difference(r.lu, f.lu), -1);
        EXPECT_EQ(first_bit_difference(r.x, lapack_getrs('N', n, nrhs, f, lda, b, ldb)), -1);
    }
}

class GesvKinds : public BackendTest<std::tuple<BackendCase, MatrixKind>> {};

TEST_P(GesvKinds, SolvesWithSmallResidual) {
    const BackendCase c = std::get<0>(GetParam());
    const MatrixKind kind = std::get<1>(GetParam());
    for (int n : {1, 2, 3, 17, 63, 65, 100, 257})
        for (int nrhs : {1, 4}) check_gesv(c, kind, n, nrhs);
}

INSTANTIATE_TEST_SUITE_P(
    Api, GesvKinds,
    testing::Combine(testing::ValuesIn(api_backend_cases()),
                     testing::Values(MatrixKind::random, MatrixKind::diagonally_dominant,
                                     MatrixKind::badly_scaled, MatrixKind::ill_conditioned)),
    [](const auto& p) {
        return std::get<0>(p.param).name() + "_" + kind_name(std::get<1>(p.param));
    });

class GesvBackends : public BackendTest<BackendCase> {};

TEST_P(GesvBackends, SolvesLargerSystemsWithManyRightHandSides) {
    const BackendCase c = GetParam();
    check_gesv(c, MatrixKind::random, 300, 33);
    check_gesv(c, MatrixKind::random, 129, 130);
}

// U(j,j) = 0 exactly: INFO = j+1 as LAPACK's, A holds the completed
// factorization, and B is left untouched (solving would divide by zero).
TEST_P(GesvBackends, SingularMatrixLeavesBUntouched) {
    const BackendCase c = GetParam();
    for (int n : {1, 17, 65, 100})
        for (int zero_column : {0, n / 2, n - 1}) {
            const uint64_t seed = test_seed();
            SCOPED_TRACE(describe(c.name(), n, 3, seed) + " zero column " +
                         std::to_string(zero_column));
            const int lda = n, ldb = n + 1;
            std::vector<float> a = make_matrix(n, n, lda, MatrixKind::random, seed);
            for (int i = 0; i < n; ++i) a[static_cast<size_t>(i + zero_column * lda)] = 0.0f;
            const std::vector<float> b = make_matrix(n, 3, ldb, MatrixKind::random, seed + 1);
            const GesvResult r = run_gesv(c.options(), n, 3, a, lda, b, ldb);
            const LapackFactors f = lapack_getrf(n, n, a, lda);
            EXPECT_EQ(r.info, zero_column + 1);
            EXPECT_EQ(r.info, f.info);
            EXPECT_EQ(r.report.info, r.info);
            EXPECT_EQ(first_bit_difference(r.x, b), -1);
            EXPECT_LT(factorization_residual(n, n, a.data(), lda, r.lu.data(), lda, r.ipiv.data()),
                      kResidualBound);
            if (c.equals_lapack()) {
                EXPECT_EQ(r.ipiv, f.ipiv);
                EXPECT_EQ(first_bit_difference(r.lu, f.lu), -1);
            }
        }
}

TEST_P(GesvBackends, RowMajorIsTransposedStorageOfColMajor) {
    const BackendCase c = GetParam();
    for (int n : {1, 17, 65, 100})
        for (int nrhs : {1, 6}) {
            const uint64_t seed = test_seed();
            SCOPED_TRACE(describe(c.name(), n, nrhs, seed));
            const int lda = n, ldb = n, lda_row = n + 2, ldb_row = nrhs + 1;
            const std::vector<float> a = make_matrix(n, n, lda, MatrixKind::random, seed);
            const std::vector<float> b = make_matrix(n, nrhs, ldb, MatrixKind::random, seed + 1);
            const GesvResult col = run_gesv(c.options(), n, nrhs, a, lda, b, ldb);
            const GesvResult row = run_gesv(c.options(Layout::row_major), n, nrhs,
                                            to_row_major(n, n, a.data(), lda, lda_row), lda_row,
                                            to_row_major(n, nrhs, b.data(), ldb, ldb_row), ldb_row);
            EXPECT_EQ(row.info, 0);
            EXPECT_EQ(row.info, col.info);
            EXPECT_EQ(row.ipiv, col.ipiv);
            EXPECT_EQ(padding_changes(n, n, lda_row, row.lu.data()), 0);
            EXPECT_EQ(padding_changes(nrhs, n, ldb_row, row.x.data()), 0);
            const std::vector<float> x = to_col_major(n, nrhs, row.x.data(), ldb_row, ldb);
            if (c.layouts_bit_identical()) {
                EXPECT_EQ(
                    first_bit_difference(to_col_major(n, n, row.lu.data(), lda_row, lda), col.lu),
                    -1);
                EXPECT_EQ(first_bit_difference(x, col.x), -1);
            }
            EXPECT_LT(solve_residual(n, nrhs, a.data(), lda, x.data(), ldb, b.data(), ldb),
                      kResidualBound);
        }
}

TEST_P(GesvBackends, NothingToSolve) {
    const BackendCase c = GetParam();
    const uint64_t seed = test_seed();
    SCOPED_TRACE(c.name() + " seed=" + std::to_string(seed));
    // nrhs = 0 still factors A, as LAPACK's sgesv does.
    const int n = 20;
    const std::vector<float> a = make_matrix(n, n, n, MatrixKind::random, seed);
    std::vector<float> lu = a;
    std::vector<int> ipiv(n, -7);
    EXPECT_EQ(sgesv(n, 0, lu.data(), n, ipiv.data(), nullptr, n, c.options()), 0);
    EXPECT_LT(factorization_residual(n, n, a.data(), n, lu.data(), n, ipiv.data()), kResidualBound);
    // n = 0: nothing is touched.
    std::vector<float> b(4, kPadding);
    int pivot = -7;
    EXPECT_EQ(sgesv(0, 4, nullptr, 1, &pivot, b.data(), 1, c.options()), 0);
    EXPECT_EQ(sgesv(0, 0, nullptr, 1, nullptr, nullptr, 1, c.options()), 0);
    EXPECT_EQ(pivot, -7);
    EXPECT_EQ(first_bit_difference(b, std::vector<float>(4, kPadding)), -1);
}

INSTANTIATE_TEST_SUITE_P(Api, GesvBackends, testing::ValuesIn(api_backend_cases()),
                         [](const auto& p) { return p.param.name(); });

}  // namespace
}  // namespace tandem::test
