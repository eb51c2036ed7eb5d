// Options::update_precision = tf32x3 through the public API on a GPU: the
// factorization's and the solve's scaled residuals on every matrix kind of the
// suite, within a small factor of the FP32 path's on the same matrix; matrices
// scaled to the ends of FP32's range (where a split's low part underflows or
// its rounding would overflow) give the FP32 path's quality; NaN reaches the
// factors as on the FP32 path. Skipped without a usable GPU.
//
// Entries below about 2^-115 have low parts below FP32's normal range, which
// the tensor cores take as zero: such a matrix factors with TF32's error on
// those products, still within LAPACK's test threshold (checked below).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tandem/tandem.hpp"
#include "test_support.hpp"

namespace tandem::test {
namespace {

struct Residuals {
    int info = -1;
    double factorization = 0.0;
    double solve = 0.0;
    std::vector<float> lu;
};

// sgesv on a copy of a (n x n, ld n) with b = A * ones, on the GPU in steps
// of 128 columns with device panels (so that the trailing updates do the work).
Residuals solve_on_gpu(int n, const std::vector<float>& a, UpdatePrecision precision) {
    Options o;
    o.backend = Backend::gpu;
    o.num_devices = 1;
    o.block_size = 128;
    o.placement = PanelPlacement::device;
    o.update_precision = precision;
    std::vector<float> b(static_cast<size_t>(n), 0.0f);
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) b[i] += a[i + static_cast<size_t>(j) * n];
    std::vector<float> lu = a, x = b;
    std::vector<int> ipiv(static_cast<size_t>(n));
    Residuals r;
    r.info = sgesv(n, 1, lu.data(), n, ipiv.data(), x.data(), n, o);
    r.factorization = factorization_residual(n, n, a.data(), n, lu.data(), n, ipiv.data());
    r.solve = solve_residual(n, 1, a.data(), n, x.data(), n, b.data(), n);
    r.lu = std::move(lu);
    return r;
}

// The names the report's messages and the benchmark use.
TEST(UpdatePrecisionName, OneWordEach) {
    EXPECT_STREQ(update_precision_name(UpdatePrecision::fp32), "fp32");
    EXPECT_STREQ(update_precision_name(UpdatePrecision::tf32x3), "tf32x3");
    EXPECT_STREQ(update_precision_name(UpdatePrecision::tf32), "tf32");
    EXPECT_STREQ(update_precision_name(UpdatePrecision::bf16), "bf16");
}

class ApiUpdatePrecision : public testing::Test {
protected:
    void SetUp() override {
        if (!gpu_available()) GTEST_SKIP() << "no usable GPU";
    }
};

TEST_F(ApiUpdatePrecision, SplitUpdateKeepsFp32Quality) {
    const int n = 1024;
    for (MatrixKind kind : {MatrixKind::random, MatrixKind::diagonally_dominant,
                            MatrixKind::badly_scaled, MatrixKind::ill_conditioned}) {
        SCOPED_TRACE(kind_name(kind));
        const std::vector<float> a = make_matrix(n, n, n, kind, test_seed());
        const Residuals fp32 = solve_on_gpu(n, a, UpdatePrecision::fp32);
        const Residuals split = solve_on_gpu(n, a, UpdatePrecision::tf32x3);
        ASSERT_EQ(fp32.info, 0);
        ASSERT_EQ(split.info, 0);
        // The option reached the updates: the factors differ in their last bits.
        EXPECT_NE(first_bit_difference(split.lu, fp32.lu), -1) << "tf32x3 computed as fp32";
        EXPECT_LT(split.factorization, kResidualBound);
        EXPECT_LT(split.solve, kResidualBound);
        // Within a small factor of FP32's (plus a floor: the FP32 figures can be tiny).
        EXPECT_LT(split.factorization, 8.0 * fp32.factorization + 0.05) << fp32.factorization;
        EXPECT_LT(split.solve, 8.0 * fp32.solve + 0.05) << fp32.solve;
    }
}

TEST_F(ApiUpdatePrecision, EntriesAtTheEndsOfTheRange) {
    const int n = 512;
    // 2^100: U's entries near 1e30, products near 1e30 and above; 2^-120:
    // entries near 1e-36, whose low parts are subnormal; 2^126 with a largest
    // entry whose TF32 rounding would overflow.
    for (int exponent : {100, -120, 126}) {
        SCOPED_TRACE("scaled by 2^" + std::to_string(exponent));
        std::vector<float> a = make_matrix(n, n, n, MatrixKind::random, test_seed());
        for (float& x : a) x = std::ldexp(x, exponent);
        if (exponent == 126) a[0] = std::numeric_limits<float>::max();
        const Residuals fp32 = solve_on_gpu(n, a, UpdatePrecision::fp32);
        const Residuals split = solve_on_gpu(n, a, UpdatePrecision::tf32x3);
        EXPECT_EQ(split.info, fp32.info);
        if (exponent == 126) {
            // FP32 itself overflows on this matrix: the split path may not do better.
            EXPECT_EQ(std::isfinite(split.factorization), std::isfinite(fp32.factorization));
        } else if (exponent < 0) {
            EXPECT_LT(split.factorization, kResidualBound) << "FP32's: " << fp32.factorization;
        } else {
            EXPECT_LT(split.factorization, 8.0 * fp32.factorization + 0.05) << fp32.factorization;
        }
    }
}

TEST_F(ApiUpdatePrecision, NanReachesTheFactors) {
    const int n = 400;
    std::vector<float> a = make_matrix(n, n, n, MatrixKind::random, test_seed());
    a[150 + 150 * n] = std::numeric_limits<float>::quiet_NaN();
    Options o;
    o.backend = Backend::gpu;
    o.block_size = 128;
    o.placement = PanelPlacement::device;
    o.update_precision = UpdatePrecision::tf32x3;
    std::vector<int> ipiv(static_cast<size_t>(n));
    int info = -100;
    EXPECT_NO_THROW(info = sgetrf(n, n, a.data(), n, ipiv.data(), o));
    EXPECT_GE(info, 0);
    int nans = 0;
    for (float x : a) nans += std::isnan(x);
    EXPECT_GT(nans, 0);
    for (int p : ipiv) EXPECT_TRUE(p >= 1 && p <= n) << p;
}

}  // namespace
}  // namespace tandem::test
