// The test matrices of `tandem-bench accuracy` (bench/matrix_kinds.hpp) at
// n = 64: randsvd's singular values are 1 .. 1/kappa, `scaled` has the stated
// powers of two, `growth` grows by 2^59 under partial pivoting, and every kind
// is a pure function of (kind, n, seed).
#include <gtest/gtest.h>

#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "bench/matrix_data.hpp"
#include "bench/matrix_kinds.hpp"

namespace tandem_bench {
namespace {

constexpr int n = 64;
constexpr std::uint64_t seed = 20261121;

// The singular values of an n x n column-major matrix, largest first.
std::vector<double> singular_values(std::vector<double> a) {
    std::vector<double> s(static_cast<std::size_t>(n)), superb(static_cast<std::size_t>(n));
    const lapack_int info = LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'N', 'N', n, n, a.data(), n, s.data(),
                                           nullptr, 1, nullptr, 1, superb.data());
    EXPECT_EQ(info, 0) << "LAPACKE_dgesvd";
    return s;
}

bool same_bits(const std::vector<float>& x, const std::vector<float>& y) {
    return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

const TestMatrixKind randsvd_kinds[] = {TestMatrixKind::randsvd3, TestMatrixKind::randsvd5,
                                        TestMatrixKind::randsvd7};

TEST(BenchMatrices, RandsvdSingularValuesRunFromOneToOneOverKappa) {
    for (const TestMatrixKind kind : randsvd_kinds) {
        SCOPED_TRACE(test_matrix_kind_name(kind));
        const double kappa = randsvd_condition(kind);
        const std::vector<double> expected = randsvd_singular_values(n, kappa);
        ASSERT_EQ(expected.size(), static_cast<std::size_t>(n));
        EXPECT_EQ(expected.front(), 1.0);
        EXPECT_EQ(expected.back(), 1.0 / kappa);
        for (int i = 1; i < n; ++i) {
            // Geometric: each value the one before times kappa^(-1/(n-1)).
            EXPECT_NEAR(expected[i] / expected[i - 1], std::pow(kappa, -1.0 / (n - 1)), 1e-12);
        }

        // In double, the construction's orthogonal factors keep the values to rounding.
        const std::vector<double> a = randsvd_matrix(n, kappa, test_matrix_stream(kind, n, seed));
        const std::vector<double> exact = singular_values(a);
        for (int i = 0; i < n; ++i) EXPECT_NEAR(exact[i], expected[i], 1e-13) << "i = " << i;

        // The float matrix is the double one rounded, and its singular values
        // move by at most ||rounding||_2 <= ||rounding||_F (Weyl).
        const std::vector<float> rounded = make_test_matrix(kind, n, seed);
        ASSERT_EQ(rounded.size(), a.size());
        double rounding_norm2 = 0.0;
        for (std::size_t k = 0; k < a.size(); ++k) {
            ASSERT_EQ(rounded[k], static_cast<float>(a[k])) << "entry " << k;
            const double difference = static_cast<double>(rounded[k]) - a[k];
            rounding_norm2 += difference * difference;
        }
        const double bound = std::sqrt(rounding_norm2) + 1e-13;
        EXPECT_LT(bound, 1e-6);
        const std::vector<double> of_float = singular_values(std::vector<double>(rounded.begin(), rounded.end()));
        for (int i = 0; i < n; ++i) EXPECT_NEAR(of_float[i], expected[i], bound) << "i = " << i;
    }
}

TEST(BenchMatrices, ScaledHasTheStatedPowersOfTwo) {
    const ScalingExponents e = scaling_exponents(n, test_matrix_stream(TestMatrixKind::scaled, n, seed));
    ASSERT_EQ(e.row.size(), static_cast<std::size_t>(n));
    ASSERT_EQ(e.column.size(), static_cast<std::size_t>(n));
    for (const std::vector<int>* exponents : {&e.row, &e.column}) {
        const auto [low, high] = std::minmax_element(exponents->begin(), exponents->end());
        EXPECT_GE(*low, -scaled_max_exponent);
        EXPECT_LE(*high, scaled_max_exponent);
        // 64 draws from 41 values spread over most of the range.
        EXPECT_GE(*high - *low, 30);
    }

    // Each entry is a uniform_pm1 value (a multiple of 2^-23 in [-1, 1)) times
    // 2^(r_i + c_j), exactly.
    const std::vector<float> a = make_test_matrix(TestMatrixKind::scaled, n, seed);
    double smallest = INFINITY, largest = 0.0;
    for (int j = 0; j < n; ++j) {
        for (int i = 0; i < n; ++i) {
            const float entry = a[static_cast<std::size_t>(j) * n + i];
            const float base = std::ldexp(entry, -(e.row[i] + e.column[j]));
            ASSERT_GE(base, -1.0f) << i << ", " << j;
            ASSERT_LT(base, 1.0f) << i << ", " << j;
            const float steps = std::ldexp(base, 23);
            ASSERT_EQ(steps, std::trunc(steps)) << i << ", " << j;
            if (entry != 0.0f) smallest = std::min(smallest, std::fabs(static_cast<double>(entry)));
            largest = std::max(largest, std::fabs(static_cast<double>(entry)));
        }
    }
    EXPECT_LT(largest, std::ldexp(1.0, 2 * scaled_max_exponent));
    EXPECT_GE(smallest, std::ldexp(1.0, -2 * scaled_max_exponent - 24));
    EXPECT_GT(largest / smallest, std::ldexp(1.0, 40));  // a wide spread, not a few scales
}

TEST(BenchMatrices, GrowthGrowsByTwoToTheOrderMinusOne) {
    for (const int order : {n, 30}) {
        SCOPED_TRACE("n = " + std::to_string(order));
        const std::vector<float> a = make_test_matrix(TestMatrixKind::growth, order, seed);
        std::vector<float> lu = a;
        std::vector<lapack_int> ipiv(static_cast<std::size_t>(order));
        ASSERT_EQ(LAPACKE_sgetrf(LAPACK_COL_MAJOR, order, order, lu.data(), order, ipiv.data()), 0);
        for (int i = 0; i < order; ++i) EXPECT_EQ(ipiv[i], i + 1) << "a pivot off the diagonal at step " << i;
        double a_max = 0.0, u_max = 0.0;
        for (int j = 0; j < order; ++j) {
            for (int i = 0; i < order; ++i) {
                const double value = lu[static_cast<std::size_t>(j) * order + i];
                ASSERT_TRUE(std::isfinite(value));
                if (i <= j) u_max = std::max(u_max, std::fabs(value));
                a_max = std::max(a_max, std::fabs(static_cast<double>(a[static_cast<std::size_t>(j) * order + i])));
            }
        }
        const double expected = std::ldexp(1.0, std::min(order, growth_block_order) - 1);
        EXPECT_GT(u_max / a_max, 0.99 * expected);
        EXPECT_LE(u_max / a_max, expected);
    }
}

TEST(BenchMatrices, EachKindIsRepeatableFromItsSeed) {
    std::vector<std::vector<float>> seen;
    for (const TestMatrixKindInfo& info : test_matrix_kinds()) {
        SCOPED_TRACE(info.name);
        const std::vector<float> a = make_test_matrix(info.kind, n, seed);
        ASSERT_EQ(a.size(), static_cast<std::size_t>(n) * n);
        EXPECT_TRUE(same_bits(a, make_test_matrix(info.kind, n, seed)));
        EXPECT_FALSE(same_bits(a, make_test_matrix(info.kind, n, seed + 1)));
        for (const std::vector<float>& other : seen) EXPECT_FALSE(same_bits(a, other));
        seen.push_back(a);

        TestMatrixKind parsed = TestMatrixKind::growth;
        ASSERT_TRUE(test_matrix_kind_from_name(info.name, parsed));
        EXPECT_EQ(parsed, info.kind);
        EXPECT_STREQ(test_matrix_kind_name(info.kind), info.name);
    }
    EXPECT_EQ(test_matrix_kinds().size(), 7u);
    TestMatrixKind unused;
    EXPECT_FALSE(test_matrix_kind_from_name("randsvd", unused));
    // uniform is the lu mode's matrix at the same seed.
    EXPECT_TRUE(same_bits(make_test_matrix(TestMatrixKind::uniform, n, seed), random_matrix(n, seed)));
}

}  // namespace
}  // namespace tandem_bench
