// The oracles of test_support checked on inputs whose answer is known exactly,
// so that a residual test passing means the residual works, not that it is blind.
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace tandem::test {
namespace {

// P A = L U with small integers, so L * U is exact in float:
// L = [1 0 0; 0.5 1 0; 0.25 0.5 1], U = [4 2 1; 0 3 2; 0 0 2], ipiv = {3, 3, 3}.
struct ExactLU {
    std::vector<float> lu{4, 0.5f, 0.25f, 2, 3, 0.5f, 1, 2, 2};
    std::vector<int> ipiv{3, 3, 3};
    std::vector<float> a;  // P^T L U
    ExactLU() {
        std::vector<float> plu(9, 0.0f);  // L U
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
                for (int p = 0; p <= std::min(i, j); ++p)
                    plu[i + 3 * j] += (p == i ? 1.0f : lu[i + 3 * p]) * lu[p + 3 * j];
        // Undo the interchanges in reverse order: A = P^T (L U).
        a = plu;
        for (int i = 2; i >= 0; --i)
            for (int j = 0; j < 3; ++j) std::swap(a[i + 3 * j], a[ipiv[i] - 1 + 3 * j]);
    }
};

TEST(SupportOracles, FactorizationResidualIsZeroForExactFactorsAndLargeOtherwise) {
    ExactLU f;
    EXPECT_EQ(factorization_residual(3, 3, f.a.data(), 3, f.lu.data(), 3, f.ipiv.data()), 0.0);
    std::vector<float> wrong = f.lu;
    wrong[2 + 3 * 1] *= 1.01f;  // L(2,1), one part in 100: far above eps
    EXPECT_GT(factorization_residual(3, 3, f.a.data(), 3, wrong.data(), 3, f.ipiv.data()), 1000.0);
    const std::vector<int> other_pivots{1, 2, 3};
    EXPECT_GT(factorization_residual(3, 3, f.a.data(), 3, f.lu.data(), 3, other_pivots.data()),
              1000.0);
    const std::vector<int> out_of_range{4, 3, 3};
    EXPECT_TRUE(std::isinf(
        factorization_residual(3, 3, f.a.data(), 3, f.lu.data(), 3, out_of_range.data())));
    std::vector<float> with_nan = f.lu;
    with_nan[4] = std::nanf("");
    EXPECT_TRUE(
        std::isnan(factorization_residual(3, 3, f.a.data(), 3, with_nan.data(), 3, f.ipiv.data())));
}

TEST(SupportOracles, SolveResidualsSeparateAFromItsTranspose) {
    // Upper triangular integer A, integer x: b = A x and c = A^T x are exact.
    const std::vector<float> a{2, 0, 0, 1, 3, 0, 4, 5, 6};
    const std::vector<float> x{1, -2, 3};
    std::vector<float> b(3, 0.0f), c(3, 0.0f);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            b[i] += a[i + 3 * j] * x[j];
            c[i] += a[j + 3 * i] * x[j];
        }
    EXPECT_EQ(solve_residual(3, 1, a.data(), 3, x.data(), 3, b.data(), 3), 0.0);
    EXPECT_EQ(solve_residual_trans(3, 1, a.data(), 3, x.data(), 3, c.data(), 3), 0.0);
    EXPECT_GT(solve_residual(3, 1, a.data(), 3, x.data(), 3, c.data(), 3), 1000.0);
    EXPECT_GT(solve_residual_trans(3, 1, a.data(), 3, x.data(), 3, b.data(), 3), 1000.0);
    // The worst right-hand side counts: a second, wrong, column.
    const std::vector<float> x2{1, -2, 3, 1, 1, 1}, b2{b[0], b[1], b[2], 0, 0, 0};
    EXPECT_GT(solve_residual(3, 2, a.data(), 3, x2.data(), 3, b2.data(), 3), 1000.0);
}

TEST(SupportOracles, MatricesHaveTheirAdvertisedCharacter) {
    const uint64_t seed = test_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    const int n = 60, ld = 63;
    for (MatrixKind kind : {MatrixKind::random, MatrixKind::diagonally_dominant,
                            MatrixKind::badly_scaled, MatrixKind::ill_conditioned}) {
        SCOPED_TRACE(kind_name(kind));
        const std::vector<float> a = make_matrix(n, n, ld, kind, seed);
        ASSERT_EQ(a.size(), size_t(ld * n));
        EXPECT_EQ(padding_changes(n, n, ld, a.data()), 0);
        EXPECT_EQ(first_bit_difference(a, make_matrix(n, n, ld, kind, seed)), -1);
        EXPECT_NE(first_bit_difference(a, make_matrix(n, n, ld, kind, seed + 1)), -1);
        float smallest = std::numeric_limits<float>::max(), largest = 0.0f;
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i) {
                const float v = std::fabs(a[i + j * ld]);
                ASSERT_TRUE(std::isfinite(v));
                if (v == 0.0f) continue;
                smallest = std::min(smallest, v);
                largest = std::max(largest, v);
            }
        // Reciprocal condition number in the 1-norm, from LAPACK in double.
        std::vector<double> d(size_t(n) * n);
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i) d[i + size_t(j) * n] = a[i + j * ld];
        double anorm = 0.0;
        for (int j = 0; j < n; ++j) {
            double s = 0.0;
            for (int i = 0; i < n; ++i) s += std::fabs(d[i + size_t(j) * n]);
            anorm = std::max(anorm, s);
        }
        std::vector<int> ipiv(n);
        ASSERT_EQ(LAPACKE_dgetrf(LAPACK_COL_MAJOR, n, n, d.data(), n, ipiv.data()), 0);
        double rcond = 0.0;
        LAPACKE_dgecon(LAPACK_COL_MAJOR, '1', n, d.data(), n, anorm, &rcond);
        switch (kind) {
            case MatrixKind::diagonally_dominant:
                for (int i = 0; i < n; ++i) EXPECT_EQ(ipiv[i], i + 1);  // no interchange
                break;
            case MatrixKind::badly_scaled:
                EXPECT_GT(largest / smallest, 1e12f);
                break;
            case MatrixKind::ill_conditioned:
                EXPECT_LT(rcond, 1e-5);  // cond_2 = 1e6; cond_1 is within a factor n of it
                EXPECT_GT(rcond, 1e-9);
                break;
            case MatrixKind::random:
                // Not near singular in float. The estimate's tail is long:
                // 5 seeds in 30000 gave 1.5e-8 .. 9.7e-8 at this order.
                EXPECT_GT(rcond, 1e-9);
                break;
        }
    }
}

TEST(SupportOracles, LayoutConversionsAreInverse) {
    const uint64_t seed = test_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    const int m = 5, n = 3;
    const std::vector<float> a = make_matrix(m, n, m + 2, MatrixKind::random, seed);
    const std::vector<float> r = to_row_major(m, n, a.data(), m + 2, n + 1);
    EXPECT_EQ(r[2 * (n + 1) + 1], a[2 + 1 * (m + 2)]);  // element (2, 1)
    EXPECT_EQ(padding_changes(n, m, n + 1, r.data()), 0);
    EXPECT_EQ(first_bit_difference(to_col_major(m, n, r.data(), n + 1, m + 2), a), -1);
}

TEST(SupportOracles, SeedComesFromTheEnvironmentWhenSet) {
    const char* old = std::getenv("TANDEM_TEST_SEED");
    const std::string saved = old ? old : "";
    setenv("TANDEM_TEST_SEED", "12345678901", 1);
    EXPECT_EQ(test_seed(), 12345678901u);
    if (old)
        setenv("TANDEM_TEST_SEED", saved.c_str(), 1);
    else
        unsetenv("TANDEM_TEST_SEED");
}

}  // namespace
}  // namespace tandem::test
