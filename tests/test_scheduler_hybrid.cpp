// The hybrid scheduler, one suite for every device kind: the host device (runs
// everywhere, CI included) and the CUDA device (skipped without a GPU):
// look-ahead, block sizes, the inv(L11) / TRSM choice, zero pivots, rectangular
// shapes, several devices and the timeline. Oracles: LAPACK (LAPACKE_sgetrf on
// a copy) and LAPACK's residual ratio.
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <string>
#include <vector>

#include "scheduler/blocking_plan.hpp"
#include "tandem/tandem.hpp"
#include "tests/test_support.hpp"

namespace tandem::test {
namespace {

// The device kind under test; set by the fixture before each test.
Backend g_backend = Backend::host;

Options host_options(int block_size, int lookahead = 1, int devices = 1) {
    Options o;
    o.backend = g_backend;
    o.block_size = block_size;
    o.lookahead = lookahead;
    o.num_devices = devices;
    return o;
}

struct Factored {
    std::vector<float> lu;
    std::vector<int> ipiv;
    int info = 0;
    Report report;
};

Factored factor(int m, int n, const std::vector<float>& a, const Options& options) {
    Factored f{a, std::vector<int>(std::max(1, std::min(m, n)), -7), 0, {}};
    f.info = sgetrf(m, n, f.lu.data(), std::max(m, 1), f.ipiv.data(), options, &f.report);
    return f;
}

Factored factor_with_lapack(int m, int n, const std::vector<float>& a) {
    Factored f{a, std::vector<int>(std::max(1, std::min(m, n)), -7), 0, {}};
    f.info = LAPACKE_sgetrf(LAPACK_COL_MAJOR, m, n, f.lu.data(), std::max(m, 1), f.ipiv.data());
    return f;
}

double residual(int m, int n, const std::vector<float>& a, const Factored& f) {
    return factorization_residual(m, n, a.data(), std::max(m, 1), f.lu.data(), std::max(m, 1),
                                  f.ipiv.data());
}

class HybridScheduler : public ::testing::TestWithParam<Backend> {
protected:
    void SetUp() override {
        g_backend = GetParam();
        if (g_backend == Backend::gpu && !gpu_available()) GTEST_SKIP() << "no usable GPU";
    }
    // Several devices of this kind, or skip when the machine has fewer.
    bool have_devices(int count) const {
        return g_backend == Backend::host || gpu_count() >= count;
    }
};

TEST_P(HybridScheduler, LookAheadOnAndOffGiveTheSamePivots) {
    const uint64_t seed = test_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    const int n = 301;
    const auto a = make_matrix(n, n, n, MatrixKind::random, seed);
    const Factored with = factor(n, n, a, host_options(32, 1));
    const Factored without = factor(n, n, a, host_options(32, 0));
    EXPECT_EQ(with.info, 0);
    EXPECT_EQ(without.info, 0);
    EXPECT_EQ(with.ipiv, without.ipiv);
    EXPECT_LT(residual(n, n, a, with), kResidualBound);
    EXPECT_LT(residual(n, n, a, without), kResidualBound);
    EXPECT_EQ(with.report.steps, 10);
}

TEST_P(HybridScheduler, BlockSizesFromOneColumnToTheWholeMatrix) {
    const uint64_t seed = test_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    const int n = 130;
    const auto a = make_matrix(n, n, n, MatrixKind::random, seed);
    const Factored lapack = factor_with_lapack(n, n, a);
    for (int nb : {1, 2, 7, 64, n, n + 5}) {
        SCOPED_TRACE("nb=" + std::to_string(nb));
        Options options = host_options(nb);
        options.panel = PanelMethod::lapack;  // so that one whole-matrix panel is LAPACK's sgetrf
        const Factored f = factor(n, n, a, options);
        EXPECT_EQ(f.info, 0);
        EXPECT_LT(residual(n, n, a, f), kResidualBound);
        EXPECT_EQ(f.report.steps, (n + nb - 1) / nb);
        // One panel holding the whole matrix is exactly LAPACK's sgetrf.
        if (nb >= n) {
            EXPECT_EQ(f.ipiv, lapack.ipiv);
            EXPECT_EQ(first_bit_difference(f.lu, lapack.lu), -1);
        }
    }
}

// L with -1 below its unit diagonal: partial pivoting keeps it (every column is
// a tie, and the first index wins), the arithmetic is exact in integers, and
// ||inv(L11)||_1 = 2^(nb-1) far above the threshold: the TRSM fallback must run.
TEST_P(HybridScheduler, LargeInverseOfL11FallsBackToTrsm) {
    const int n = 96;
    std::vector<float> a(n * n, 0.0f);
    for (int j = 0; j < n; ++j) {
        a[j * n + j] = 1.0f;
        for (int i = j + 1; i < n; ++i) a[j * n + i] = -1.0f;
    }
    const Factored f = factor(n, n, a, host_options(32));
    EXPECT_EQ(f.info, 0);
    EXPECT_EQ(f.report.trsm_steps, 3);
    EXPECT_EQ(f.report.inverse_steps, 0);
    EXPECT_LT(residual(n, n, a, f), kResidualBound);
}

TEST_P(HybridScheduler, InverseThresholdChoosesThePath) {
    const uint64_t seed = test_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    const int n = 200;
    const auto a = make_matrix(n, n, n, MatrixKind::random, seed);
    Options always_inverse = host_options(50);
    always_inverse.inverse_threshold = 1e30f;
    const Factored inv = factor(n, n, a, always_inverse);
    EXPECT_EQ(inv.report.inverse_steps, 4);
    EXPECT_EQ(inv.report.trsm_steps, 0);
    EXPECT_LT(residual(n, n, a, inv), kResidualBound);

    Options never_inverse = host_options(50);
    never_inverse.inverse_threshold = 0.0f;
    const Factored trsm = factor(n, n, a, never_inverse);
    EXPECT_EQ(trsm.report.inverse_steps, 0);
    EXPECT_EQ(trsm.report.trsm_steps, 4);
    EXPECT_LT(residual(n, n, a, trsm), kResidualBound);
}

TEST_P(HybridScheduler, ZeroPivotsGiveLapacksInfo) {
    const uint64_t seed = test_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    const int n = 61;
    for (int zero_col : {0, 30, n - 1}) {
        SCOPED_TRACE("zero column " + std::to_string(zero_col));
        auto a = make_matrix(n, n, n, MatrixKind::random, seed + zero_col);
        std::fill(a.begin() + zero_col * n, a.begin() + (zero_col + 1) * n, 0.0f);
        const Factored lapack = factor_with_lapack(n, n, a);
        ASSERT_EQ(lapack.info, zero_col + 1);
        for (int lookahead : {0, 1}) {
            const Factored f = factor(n, n, a, host_options(7, lookahead));
            EXPECT_EQ(f.info, lapack.info);
            EXPECT_LT(residual(n, n, a, f), kResidualBound);
        }
    }
}

TEST_P(HybridScheduler, RectangularBothWays) {
    const uint64_t seed = test_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    for (auto [m, n] : {std::pair{200, 121}, std::pair{121, 200}, std::pair{5, 64}, std::pair{64, 5}}) {
        SCOPED_TRACE(std::to_string(m) + " x " + std::to_string(n));
        const auto a = make_matrix(m, n, m, MatrixKind::random, seed + m);
        for (int nb : {7, 32}) {
            for (int devices : {1, 2}) {
                if (!have_devices(devices)) continue;
                const Factored f = factor(m, n, a, host_options(nb, 1, devices));
                EXPECT_EQ(f.info, 0);
                EXPECT_LT(residual(m, n, a, f), kResidualBound);
            }
        }
    }
}

TEST_P(HybridScheduler, SeveralEmulatedDevicesWithUnevenColumns) {
    const uint64_t seed = test_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    const int n = 250;  // 16 blocks of 16 (the last 10 wide): 6/5/5 blocks on 3 devices
    const auto a = make_matrix(n, n, n, MatrixKind::random, seed);
    for (int devices : {2, 3}) {
        if (!have_devices(devices)) continue;
        SCOPED_TRACE("devices=" + std::to_string(devices));
        const Factored f = factor(n, n, a, host_options(16, 1, devices));
        EXPECT_EQ(f.info, 0);
        EXPECT_LT(residual(n, n, a, f), kResidualBound);
        if (g_backend == Backend::host) EXPECT_EQ(f.report.device.find("host #0"), 0u);
    }
}

TEST_P(HybridScheduler, SolveAfterFactorOnTheDevice) {
    const uint64_t seed = test_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    const int n = 150, nrhs = 3;
    const auto a = make_matrix(n, n, n, MatrixKind::random, seed);
    const auto b = make_matrix(n, nrhs, n, MatrixKind::random, seed + 1);
    for (int devices : {1, 2}) {
        if (!have_devices(devices)) continue;
        auto lu = a;
        auto x = b;
        std::vector<int> ipiv(n);
        ASSERT_EQ(sgesv(n, nrhs, lu.data(), n, ipiv.data(), x.data(), n, host_options(32, 1, devices)), 0);
        EXPECT_LT(solve_residual(n, nrhs, a.data(), n, x.data(), n, b.data(), n), kResidualBound);
    }
}

TEST_P(HybridScheduler, TimelineCoversEveryStep) {
    const uint64_t seed = test_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    const int n = 128;
    const auto a = make_matrix(n, n, n, MatrixKind::random, seed);
    const Factored f = factor(n, n, a, host_options(32));
    int panels = 0, updates = 0;
    for (const TimelineSpan& s : f.report.timeline) {
        EXPECT_LE(s.start, s.end);
        panels += s.phase == "panel";
        updates += s.phase == "update";
    }
    EXPECT_EQ(panels, 4);
    EXPECT_EQ(updates, 4);
    EXPECT_GE(f.report.panel_seconds, f.report.panel_hidden_seconds);
    EXPECT_GE(f.report.panel_hidden_seconds, 0.0);
}

// Devices are kept between calls; releasing them must leave the next call working.
TEST_P(HybridScheduler, CallsBeforeAndAfterReleasingResources) {
    const uint64_t seed = test_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    for (int n : {300, 100, 300}) {  // shrinking, then growing again past the kept buffers
        const auto a = make_matrix(n, n, n, MatrixKind::random, seed + n);
        const Factored f = factor(n, n, a, host_options(64));
        EXPECT_EQ(f.info, 0);
        EXPECT_LT(residual(n, n, a, f), kResidualBound);
        if (n == 100) release_resources();
    }
}

INSTANTIATE_TEST_SUITE_P(Devices, HybridScheduler, ::testing::Values(Backend::host, Backend::gpu),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                             return std::string(backend_name(info.param));
                         });

TEST(BlockingPlan, BlocksStepsAndOwnership) {
    const BlockingPlan plan(10, 25, 4, 3);  // blocks at 0,4,...,24; panels only below row 10
    EXPECT_EQ(plan.blocks(), 7);
    EXPECT_EQ(plan.steps(), 3);
    EXPECT_EQ(plan.panel_width(0), 4);
    EXPECT_EQ(plan.panel_width(2), 2);  // rows run out before the block does
    EXPECT_EQ(plan.block_width(6), 1);
    EXPECT_EQ(plan.owner(4), 1);
    EXPECT_EQ(plan.local_cols(0) + plan.local_cols(1) + plan.local_cols(2), 25);
    EXPECT_EQ(plan.local_cols(0), 4 + 4 + 1);  // blocks 0, 3, 6
    EXPECT_EQ(plan.local_begin(0, 12), 4);     // block 0 lies left of column 12
    EXPECT_EQ(plan.local_begin(0, 14), 6);     // and two columns of block 3
    EXPECT_EQ(plan.local_begin(1, 0), 0);
}

}  // namespace
}  // namespace tandem::test
