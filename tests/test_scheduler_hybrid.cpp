// The hybrid scheduler, one suite for every device kind: the host device (runs
// everywhere, CI included) and the CUDA device (skipped without a GPU):
// look-ahead, block sizes, the inv(L11) / TRSM choice, zero pivots, rectangular
// shapes, several devices and the timeline. Oracles: LAPACK (LAPACKE_sgetrf on
// a copy) and LAPACK's residual ratio.
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "scheduler/cpu_backend.hpp"
#include "scheduler/gpu_backend.hpp"
#include "scheduler/blocking_plan.hpp"
#include "scheduler/hybrid_lu.hpp"
#include "src/backend.hpp"
#include "tandem/tandem.hpp"
#include "tests/test_support.hpp"

namespace tandem::test {
namespace {

// The device kind and panel placement under test; set by the fixture before each test.
Backend g_backend = Backend::host;
PanelPlacement g_placement = PanelPlacement::cpu;

Options host_options(int block_size, int lookahead = 1, int devices = 1) {
    Options o;
    o.backend = g_backend;
    o.block_size = block_size;
    o.lookahead = lookahead;
    o.num_devices = devices;
    o.placement = g_placement;
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

// HybridLU straight on `devices` emulated host devices, with these settings.
Factored factor_on_host_devices(int devices, const HybridSettings& settings, int m, int n,
                                const std::vector<float>& a) {
    std::vector<std::unique_ptr<Device>> owned;
    std::vector<Device*> raw;
    for (int d = 0; d < devices; ++d) {
        owned.push_back(make_host_device(d));
        raw.push_back(owned.back().get());
    }
    HybridLU lu(raw, settings);
    Factored f{a, std::vector<int>(std::max(1, std::min(m, n)), -7), 0, {}};
    f.info = lu.factor(m, n, f.lu.data(), std::max(m, 1), f.ipiv.data(), f.report);
    return f;
}

double residual(int m, int n, const std::vector<float>& a, const Factored& f) {
    return factorization_residual(m, n, a.data(), std::max(m, 1), f.lu.data(), std::max(m, 1),
                                  f.ipiv.data());
}

class HybridScheduler : public ::testing::TestWithParam<std::tuple<Backend, PanelPlacement>> {
protected:
    void SetUp() override {
        g_backend = std::get<0>(GetParam());
        g_placement = std::get<1>(GetParam());
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
        // One panel holding the whole matrix is exactly LAPACK's sgetrf (on the
        // CPU, or on the host device; cuSOLVER's getrf rounds differently).
        if (nb >= n && (g_placement == PanelPlacement::cpu || g_backend == Backend::host)) {
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
    // A panel factored on its device is inverted there, but for the last
    // one, which leaves no columns for U12 (its step counts as TRSM's).
    const bool on_cpu = g_placement == PanelPlacement::cpu;
    EXPECT_EQ(inv.report.inverse_steps, on_cpu ? 4 : 3);
    EXPECT_EQ(inv.report.trsm_steps, on_cpu ? 0 : 1);
    EXPECT_EQ(inv.report.device_panel_steps, on_cpu ? 0 : 4);
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
        if (g_backend == Backend::host) { EXPECT_EQ(f.report.device.find("host #0"), 0u); }
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

// The solve by block columns, each block column's part on the device that
// holds it (several devices take it after sgesv's factorization), on every
// device count this machine has, one GPU included: both transposes, one and
// several right-hand sides, X in one piece and in pieces of two columns,
// blocks of one width that does not divide n and of uneven widths, the
// matrix streamed and eager, panels between devices directly and through the
// host; rows of B beyond n left alone.
TEST_P(HybridScheduler, SolveByBlockColumnsWhereTheFactorsLie) {
    const uint64_t seed = test_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    const int n = 150, ldb = n + 3;
    const auto a = make_matrix(n, n, n, MatrixKind::random, seed);
    const auto b = make_matrix(n, 5, ldb, MatrixKind::random, seed + 1);
    struct Case {
        std::vector<int> widths;  // repeating the last (BlockingPlan)
        bool stream, peer_panels;
    };
    const Case cases[] = {{{16}, true, true},  // 10 blocks, the last 6 wide
                          {{5, 16, 9, 33, 1, 20}, false, true},
                          {{5, 16, 9, 33, 1, 20}, true, false}};
    for (const Case& c : cases)
        for (int count : {1, 2, 3}) {
            if (!have_devices(count)) continue;
            SCOPED_TRACE("devices=" + std::to_string(count) + " widths from " +
                         std::to_string(c.widths[0]) + (c.stream ? ", streamed" : ", eager") +
                         (c.peer_panels ? "" : ", panels through the host"));
            std::vector<std::unique_ptr<Device>> owned;
            std::vector<Device*> devices;
            std::unique_lock<std::mutex> lock;
            if (g_backend == Backend::gpu) {
                lock = gpu::lock_devices();
                for (int d = 0; d < count; ++d) devices.push_back(&gpu::kept_device(d, {}));
            } else {
                for (int d = 0; d < count; ++d) {
                    owned.push_back(make_host_device(d));
                    devices.push_back(owned.back().get());
                }
            }
            HybridSettings settings;
            settings.widths = c.widths;
            settings.stream_matrix = c.stream;
            settings.peer_panels = c.peer_panels;
            settings.sites.assign(BlockingPlan(n, n, c.widths, count).steps(),
                                  g_placement == PanelPlacement::device ? PanelSite::device
                                                                        : PanelSite::cpu);
            HybridLU lu(devices, settings);
            std::vector<float> factors = a;
            std::vector<int> ipiv(n);
            Report report;
            ASSERT_EQ(lu.factor(n, n, factors.data(), n, ipiv.data(), report), 0);
            for (char trans : {'N', 'T'})
                for (int nrhs : {1, 5})
                    for (int64_t max_chunk : {int64_t(1) << 20, int64_t(2) * n}) {
                        SCOPED_TRACE(std::string("trans ") + trans + " nrhs " + std::to_string(nrhs) +
                                     " max_chunk " + std::to_string(max_chunk));
                        std::vector<float> x = b;
                        lu.solve_by_block_columns(trans, nrhs, x.data(), ldb, max_chunk);
                        const double r =
                            trans == 'N'
                                ? solve_residual(n, nrhs, a.data(), n, x.data(), ldb, b.data(), ldb)
                                : solve_residual_trans(n, nrhs, a.data(), n, x.data(), ldb,
                                                       b.data(), ldb);
                        EXPECT_LT(r, kResidualBound);
                        for (int col = 0; col < 5; ++col)
                            for (int i = (col < nrhs ? n : 0); i < ldb; ++i)
                                EXPECT_EQ(x[col * ldb + i], b[col * ldb + i])
                                    << "row " << i << " column " << col;
                    }
        }
}

// Several devices solve where the factors lie while X's trips between them,
// 2 (blocks + 1) n floats a right-hand side, are fewer than the factors' n^2;
// one device always does.
TEST(HybridSchedulerSolve, BlockColumnsWhileXMovesLessThanTheFactors) {
    const int n = 150;  // 16-column blocks: 10
    const auto a = make_matrix(n, n, n, MatrixKind::random, test_seed());
    for (int count : {1, 2}) {
        std::vector<std::unique_ptr<Device>> owned;
        std::vector<Device*> devices;
        for (int d = 0; d < count; ++d) {
            owned.push_back(make_host_device(d));
            devices.push_back(owned.back().get());
        }
        HybridSettings settings;
        settings.block_size = 16;
        HybridLU lu(devices, settings);
        std::vector<float> factors = a;
        std::vector<int> ipiv(n);
        Report report;
        ASSERT_EQ(lu.factor(n, n, factors.data(), n, ipiv.data(), report), 0);
        EXPECT_TRUE(lu.solve_moves_less_than_factors(1));
        EXPECT_TRUE(lu.solve_moves_less_than_factors(6));  // 2 * 11 * 6 = 132 <= 150
        EXPECT_EQ(lu.solve_moves_less_than_factors(7), count == 1);
        EXPECT_EQ(lu.solve_moves_less_than_factors(1000), count == 1);
    }
}

// The matrix streamed to one device (blocks uploaded as needed and caught up,
// rows of the factors copied out as they become final) and moved eagerly give
// factorizations of the same quality, on shapes where blocks lie beyond the
// last panel (m < n) and rows below it (m > n). With CPU panels every block
// goes up before the first step (the thread that would send them factors the
// panels), so nothing is caught up.
TEST_P(HybridScheduler, StreamedAndEagerTransfersAgree) {
    const uint64_t seed = test_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    for (auto [m, n] : {std::pair{300, 300}, std::pair{150, 330}, std::pair{330, 150}}) {
        SCOPED_TRACE(std::to_string(m) + " x " + std::to_string(n));
        const auto a = make_matrix(m, n, m, MatrixKind::random, seed + m + n);
        for (int nb : {16, 64}) {
            Options streamed = host_options(nb), eager = host_options(nb);
            eager.stream_matrix = false;
            const Factored s = factor(m, n, a, streamed), e = factor(m, n, a, eager);
            EXPECT_EQ(s.info, 0);
            EXPECT_EQ(e.info, 0);
            EXPECT_LT(residual(m, n, a, s), kResidualBound);
            EXPECT_LT(residual(m, n, a, e), kResidualBound);
            int catch_ups = 0;
            for (const TimelineSpan& span : s.report.timeline) catch_ups += span.phase == "catch up";
            if (g_placement == PanelPlacement::cpu) {
                EXPECT_EQ(catch_ups, 0) << "a block was deferred beside CPU panels";
            } else if (m >= 300 || n >= 300) {
                EXPECT_GT(catch_ups, 0) << "no block was deferred";
            }
        }
    }
}

TEST_P(HybridScheduler, TimelineCoversEveryStep) {
    const uint64_t seed = test_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    const int n = 128;
    const auto a = make_matrix(n, n, n, MatrixKind::random, seed);
    const Factored f = factor(n, n, a, host_options(32));
    int panels = 0, updates = 0, host_uploads = 0, host_gathers = 0;
    for (const TimelineSpan& s : f.report.timeline) {
        EXPECT_LE(s.start, s.end);
        panels += s.phase == "panel";
        updates += s.phase == "update";
        // The host's own side of the transfers has a lane of its own.
        host_uploads += s.lane == "host" && s.phase == "distribute";
        host_gathers += s.lane == "host" && s.phase == "gather";
        // A CPU panel (tandem's recursive panel, the default) says its shape
        // and how its team spent the factorization inside the span; no other
        // span does.
        if (s.lane == "cpu" && s.phase == "panel") {
            EXPECT_EQ(s.panel_rows, n - 32 * s.step);
            EXPECT_EQ(s.panel_columns, 32);
            EXPECT_GE(s.team_threads, 1);
            EXPECT_GT(s.team_seconds, 0.0);
            EXPECT_LE(s.team_seconds, s.end - s.start);
            EXPECT_GE(s.least_thread_cpu_seconds, 0.0);
            // CPU time of one thread within the wall time (clocks of their own).
            EXPECT_LE(s.least_thread_cpu_seconds, s.team_seconds + 1e-3);
            EXPECT_GE(s.involuntary_switches, 0);
        } else {
            EXPECT_EQ(s.team_threads, 0) << s.lane << " " << s.phase;
            EXPECT_EQ(s.team_seconds, 0.0) << s.lane << " " << s.phase;
            EXPECT_EQ(s.panel_rows, 0) << s.lane << " " << s.phase;
            EXPECT_EQ(s.panel_columns, 0) << s.lane << " " << s.phase;
        }
    }
    EXPECT_EQ(panels, 4);
    EXPECT_EQ(updates, 4);
    EXPECT_EQ(host_uploads, 4);  // one per block column
    EXPECT_GT(host_gathers, 0);  // streamed: the factors go out in pieces
    // One host thread does all of it: its spans (CPU panels included) never overlap.
    std::vector<std::pair<double, double>> host;
    for (const TimelineSpan& s : f.report.timeline)
        if (s.lane == "host" || s.lane == "cpu") host.emplace_back(s.start, s.end);
    std::sort(host.begin(), host.end());
    for (size_t i = 1; i < host.size(); ++i)
        EXPECT_LE(host[i - 1].second, host[i].first) << "host spans " << i - 1 << " and " << i;
    // The report's overlap is the timeline's (the host device computes on the
    // host thread, so nothing of a CPU panel hides behind it).
    const PanelOverlap overlap = panel_overlap(f.report.timeline);
    EXPECT_EQ(f.report.panel_seconds, overlap.panel_seconds);
    EXPECT_EQ(f.report.panel_hidden_seconds, overlap.hidden_seconds);
}

// What a CPU panel hides behind: the union of the devices' compute spans, not
// their sum, and neither transfers nor other host work.
TEST(PanelOverlap, CountsOnlyDeviceComputeOverlappingCpuPanels) {
    const std::vector<TimelineSpan> timeline = {
        {"cpu", "panel", 1, 1.0, 3.0},               // 2 s of panel
        {"cpu", "panel", 2, 5.0, 6.0},               // 1 s, nothing beside it
        {"GPU #0 compute", "update", 0, 0.5, 2.0},   // 1 s inside panel 1
        {"GPU #1 compute", "update", 0, 1.5, 2.5},   // overlaps GPU #0: 0.5 s more
        {"GPU #0 transfer", "upload", 1, 2.5, 5.5},  // a transfer hides nothing
        {"host", "gather", 1, 2.0, 6.0},             // nor does the host's own work
    };
    const PanelOverlap overlap = panel_overlap(timeline);
    EXPECT_DOUBLE_EQ(overlap.panel_seconds, 3.0);
    EXPECT_DOUBLE_EQ(overlap.hidden_seconds, 1.5);
}

// Several devices: a panel factored on its device reaches the others straight
// from the owner's storage (peer reads) or through host memory; both carry the
// same numbers, so the factors must be bit-identical. Rectangular shapes and
// widths that leave a short last block included.
TEST_P(HybridScheduler, PeerAndHostPanelPathsGiveTheSameFactors) {
    const uint64_t seed = test_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    for (int devices : {2, 3}) {
        if (!have_devices(devices)) continue;
        for (auto [m, n] : {std::pair{300, 300}, std::pair{203, 190}, std::pair{150, 330}}) {
            SCOPED_TRACE("devices=" + std::to_string(devices) + " " + std::to_string(m) + " x " +
                         std::to_string(n));
            const auto a = make_matrix(m, n, m, MatrixKind::random, seed + m + n);
            // Sent eagerly: streamed, a block is caught up at whichever step
            // it arrives, and the two calls would round differently.
            Options peer = host_options(32, 1, devices);
            peer.stream_matrix = false;
            // Panels through the host come without their device's inv(L11):
            // U12 by TRSM on both paths.
            peer.inverse_threshold = 0.0f;
            Options host = peer;
            host.peer_copies = false;
            const Factored p = factor(m, n, a, peer), h = factor(m, n, a, host);
            EXPECT_EQ(p.info, 0);
            EXPECT_LT(residual(m, n, a, p), kResidualBound);
            EXPECT_EQ(p.ipiv, h.ipiv);
            EXPECT_EQ(first_bit_difference(p.lu, h.lu), -1);
            auto peer_reads = [](const Report& r) {
                return std::count_if(r.timeline.begin(), r.timeline.end(),
                                     [](const TimelineSpan& s) { return s.phase == "peer panel"; });
            };
            EXPECT_EQ(peer_reads(h.report), 0);
            // Each device-factored panel is read by every other device, when
            // the devices can read each other (host devices always can).
            const long expected = long(p.report.device_panel_steps) * (devices - 1);
            if (g_backend == Backend::host || peer_reads(p.report) > 0) {
                EXPECT_EQ(peer_reads(p.report), expected);
            }
            if (g_placement == PanelPlacement::device) {
                EXPECT_GT(p.report.device_panel_steps, 0);
            }
        }
    }
}

// Several devices: panels factored by their owners before their share of the
// step before's update run the same products as panels beside it, in another
// order: the same pivots, and on host devices the same bits. Sent eagerly (a
// streamed block is caught up at whichever step it arrives); streamed, only
// the residual is checked. The timelines show the order: the owner of panel
// k+1 starts its update of step k only once that panel is factored, at some
// step k >= 1 (step 0 updates the blocks as they arrive in either plan), and
// beside it never (its update follows the look-ahead that the panel waits for).
TEST_P(HybridScheduler, PanelsBeforeTheOwnersUpdateGiveTheSameFactors) {
    if (g_placement == PanelPlacement::cpu) GTEST_SKIP() << "device panels only";
    const uint64_t seed = test_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    const int m = 300, n = 290;
    const auto a = make_matrix(m, n, m, MatrixKind::random, seed);
    for (int devices : {2, 3}) {
        if (!have_devices(devices)) continue;
        SCOPED_TRACE("devices=" + std::to_string(devices));
        detail::BackendChoice choice;
        choice.backend = g_backend;
        choice.num_devices = devices;
        detail::DeviceLease lease(choice);
        HybridSettings beside;
        beside.block_size = 32;
        beside.stream_matrix = false;
        const int64_t steps = BlockingPlan(m, n, beside.block_size, devices).steps();
        beside.sites.assign(static_cast<size_t>(steps), PanelSite::device);
        HybridSettings first = beside;
        first.panels_before_update.assign(static_cast<size_t>(steps), true);
        first.panels_before_update[3] = false;  // a step of each kind after each
        auto run = [&](const HybridSettings& settings) {
            HybridLU lu(lease.devices(), settings);
            Factored f{a, std::vector<int>(std::min(m, n), -7), 0, {}};
            f.info = lu.factor(m, n, f.lu.data(), m, f.ipiv.data(), f.report);
            return f;
        };
        const Factored b = run(beside), f = run(first);
        // Steps k >= 1 whose next panel's owner starts its update of step k
        // only once that panel is factored (lanes "<device> transfer" and
        // "<device> compute").
        auto owners_updating_after_their_panel = [](const Report& r) {
            int steps = 0;
            for (const TimelineSpan& p : r.timeline) {
                const size_t transfer = p.lane.rfind(" transfer");
                if (p.phase != "panel" || transfer == std::string::npos) continue;
                const std::string compute = p.lane.substr(0, transfer) + " compute";
                steps += std::any_of(r.timeline.begin(), r.timeline.end(), [&](const TimelineSpan& u) {
                    return u.phase == "update" && u.lane == compute && u.step >= 1 &&
                           u.step + 1 == p.step && u.start >= p.end;
                });
            }
            return steps;
        };
        EXPECT_GT(owners_updating_after_their_panel(f.report), 0);
        // Beside: host devices run each call as it is issued, and the owner's
        // update is issued before the panel. (On GPUs the look-ahead runs on
        // the transfer queue, and nothing orders the owner's update beside
        // the panel before the panel's end.)
        if (g_backend == Backend::host) {
            EXPECT_EQ(owners_updating_after_their_panel(b.report), 0);
        }
        EXPECT_EQ(f.info, 0);
        EXPECT_LT(residual(m, n, a, f), kResidualBound);
        EXPECT_EQ(f.ipiv, b.ipiv);
        if (g_backend == Backend::host) { EXPECT_EQ(first_bit_difference(f.lu, b.lu), -1); }
        EXPECT_EQ(f.report.device_panel_steps, steps);
        first.stream_matrix = true;
        const Factored streamed = run(first);
        EXPECT_EQ(streamed.info, 0);
        EXPECT_LT(residual(m, n, a, streamed), kResidualBound);
    }
}

// On several devices the look-ahead (the next panel's block: its swaps, U12
// and update) runs on the next panel's owner's transfer queue, where the
// catch-ups and updates on its compute queue do not hold it up; only the
// first step's look-ahead, while the matrix arrives eagerly, stays on the
// compute queue. The timeline says where each ran (lanes "<device> transfer"
// and "<device> compute").
TEST_P(HybridScheduler, SeveralDevicesLookAheadOnTheTransferQueue) {
    const uint64_t seed = test_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    const int m = 300, n = 290, nb = 32;
    const auto a = make_matrix(m, n, m, MatrixKind::random, seed);
    for (int devices : {2, 3})
        for (bool streamed : {false, true}) {
            if (!have_devices(devices)) continue;
            SCOPED_TRACE("devices=" + std::to_string(devices) + (streamed ? " streamed" : " eager"));
            detail::BackendChoice choice;
            choice.backend = g_backend;
            choice.num_devices = devices;
            detail::DeviceLease lease(choice);
            const BlockingPlan plan(m, n, nb, devices);
            HybridSettings settings;
            settings.block_size = nb;
            settings.stream_matrix = streamed;
            settings.sites.assign(static_cast<size_t>(plan.steps()),
                                  g_placement == PanelPlacement::cpu ? PanelSite::cpu : PanelSite::device);
            HybridLU lu(lease.devices(), settings);
            Factored f{a, std::vector<int>(std::min(m, n), -7), 0, {}};
            f.info = lu.factor(m, n, f.lu.data(), m, f.ipiv.data(), f.report);
            EXPECT_EQ(f.info, 0);
            EXPECT_LT(residual(m, n, a, f), kResidualBound);
            std::vector<std::string> lanes(static_cast<size_t>(plan.steps()));
            for (const TimelineSpan& s : f.report.timeline)
                if (s.phase == "lookahead") {
                    ASSERT_GE(s.step, 0);
                    ASSERT_LT(s.step + 1, plan.steps());
                    EXPECT_TRUE(lanes[static_cast<size_t>(s.step)].empty()) << "step " << s.step;
                    lanes[static_cast<size_t>(s.step)] = s.lane;
                }
            for (int64_t k = 0; k + 1 < plan.steps(); ++k) {
                const std::string owner = lease.devices()[static_cast<size_t>(plan.owner(k + 1))]->name();
                const bool compute = k == 0 && !streamed;
                EXPECT_EQ(lanes[static_cast<size_t>(k)], owner + (compute ? " compute" : " transfer"))
                    << "step " << k;
            }
        }
}

// Fewer rows than one block is wide: the only panel takes every row and the
// first block reaches past it (the first step then updates its remaining
// columns too), on one to three devices.
TEST_P(HybridScheduler, FewerRowsThanABlockOnSeveralDevices) {
    const uint64_t seed = test_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    for (int devices : {1, 2, 3}) {
        if (!have_devices(devices)) continue;
        for (int m : {1, 20}) {
            const int n = 100;
            SCOPED_TRACE("devices=" + std::to_string(devices) + " m=" + std::to_string(m));
            const auto a = make_matrix(m, n, m, MatrixKind::random, seed + m);
            const Factored f = factor(m, n, a, host_options(32, 1, devices));
            const Factored lapack = factor_with_lapack(m, n, a);
            EXPECT_EQ(f.info, lapack.info);
            EXPECT_EQ(f.ipiv, lapack.ipiv);
            EXPECT_LT(residual(m, n, a, f), kResidualBound);
        }
    }
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

INSTANTIATE_TEST_SUITE_P(
    Devices, HybridScheduler,
    ::testing::Combine(::testing::Values(Backend::host, Backend::gpu),
                       ::testing::Values(PanelPlacement::cpu, PanelPlacement::device)),
    [](const ::testing::TestParamInfo<std::tuple<Backend, PanelPlacement>>& info) {
        return std::string(backend_name(std::get<0>(info.param))) +
               (std::get<1>(info.param) == PanelPlacement::cpu ? "_cpu_panels"
                                                               : "_device_panels");
    });

// Panels alternating between the CPU and their device, with variable widths,
// over 1..3 emulated devices. With LAPACK's panel on both sides and TRSM for
// U12 the arithmetic is the same wherever a panel is factored: the factors
// must be bit-identical to the all-CPU plan's on the same devices (BLAS may
// round a product over other column ranges differently, so not across
// device counts or look-ahead settings). The matrix is streamed on one
// device, except for the all-device plan: that one would defer blocks and
// catch them up (a plan with CPU panels sends every block first), in products
// that round differently. Several devices take it eagerly: streamed, their
// blocks are caught up at whichever step each arrives.
TEST(HybridSchedulerSites, MixedSitesAndVariableWidthsGiveTheSameFactors) {
    const uint64_t seed = test_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    const int m = 203, n = 190;
    const auto a = make_matrix(m, n, m, MatrixKind::random, seed);
    const std::vector<int> widths = {16, 32, 8, 24, 40};
    auto run = [&](int devices, std::vector<PanelSite> sites, int lookahead) {
        const bool all_device =
            !sites.empty() && std::count(sites.begin(), sites.end(), PanelSite::cpu) == 0;
        HybridSettings settings;
        settings.widths = widths;
        settings.sites = std::move(sites);
        settings.lookahead = lookahead;
        settings.inverse_threshold = 0.0f;
        settings.panel = PanelMethod::lapack;
        settings.stream_matrix = devices == 1 && !all_device;
        return factor_on_host_devices(devices, settings, m, n, a);
    };
    const int64_t steps = BlockingPlan(m, n, widths, 1).steps();
    for (int devices : {1, 2, 3})
        for (int lookahead : {0, 1}) {
            const Factored all_cpu = run(devices, {}, lookahead);
            EXPECT_LT(residual(m, n, a, all_cpu), kResidualBound);
            for (int pattern = 0; pattern < 3; ++pattern) {
                SCOPED_TRACE("devices=" + std::to_string(devices) + " lookahead=" +
                             std::to_string(lookahead) + " pattern=" + std::to_string(pattern));
                std::vector<PanelSite> sites(static_cast<size_t>(steps));
                for (int64_t k = 0; k < steps; ++k)
                    sites[k] = (pattern == 0 ? k % 2 == 0 : pattern == 1 ? k < steps / 2 : true)
                                   ? PanelSite::device
                                   : PanelSite::cpu;
                const Factored f = run(devices, sites, lookahead);
                EXPECT_EQ(f.info, 0);
                EXPECT_EQ(f.ipiv, all_cpu.ipiv);
                EXPECT_EQ(first_bit_difference(f.lu, all_cpu.lu), -1);
                EXPECT_EQ(f.report.device_panel_steps,
                          std::count(sites.begin(), sites.end(), PanelSite::device));
            }
        }
}

// A plan whose last step is a square panel on its device (a whole matrix in
// one step is one): the panel is factored in place, never copied into a
// workspace (the host device's workspace is as wide as the other panels only,
// and take_panel checks it), and the factors meet the residual bound. Several
// devices keep it out of place.
TEST(HybridSchedulerSites, TrailingSquareFactoredInPlaceOnItsDevice) {
    const uint64_t seed = test_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    const int n = 190;
    const auto a = make_matrix(n, n, n, MatrixKind::random, seed);
    const std::vector<int> widths = {16, 32, 8, 24, 110};
    const std::vector<PanelSite> sites = {PanelSite::cpu, PanelSite::device, PanelSite::cpu,
                                          PanelSite::cpu, PanelSite::device};
    BlockingPlan plan(n, n, widths, 1);
    ASSERT_EQ(plan.steps(), 5);
    for (int devices : {1, 2}) {
        for (int lookahead : {0, 1}) {
            SCOPED_TRACE("devices=" + std::to_string(devices) + " lookahead=" +
                         std::to_string(lookahead));
            HybridSettings settings;
            settings.widths = widths;
            settings.sites = sites;
            settings.lookahead = lookahead;
            const Factored f = factor_on_host_devices(devices, settings, n, n, a);
            EXPECT_EQ(f.info, 0);
            EXPECT_LT(residual(n, n, a, f), kResidualBound);
            EXPECT_EQ(f.report.device_panel_steps, 2);
        }
    }
    plan.set_panel_sites(sites);
    EXPECT_TRUE(plan.last_panel_in_place());
    EXPECT_EQ(plan.workspace_width(), 32);
    EXPECT_EQ(plan.last_panel_width(), 110);
    BlockingPlan two(n, n, widths, 2);
    two.set_panel_sites(sites);
    EXPECT_FALSE(two.last_panel_in_place());
    EXPECT_EQ(two.workspace_width(), 110);
    EXPECT_EQ(two.last_panel_width(), 0);
    BlockingPlan on_cpu(n, n, widths, 1);  // all panels on the CPU
    EXPECT_FALSE(on_cpu.last_panel_in_place());
    BlockingPlan tall(n + 5, n, widths, 1);  // the last panel has rows below it
    tall.set_panel_sites(std::vector<PanelSite>(5, PanelSite::device));
    EXPECT_FALSE(tall.last_panel_in_place());
    EXPECT_EQ(tall.workspace_width(), 110);
}

// On a GPU, automatic placement and widths come from the measured model (the
// suite's, calibrated once by the machine_model_calibrated fixture).
TEST(HybridSchedulerSites, AutomaticPlanOnTheGpu) {
    if (!gpu_available()) GTEST_SKIP() << "no usable GPU";
    const uint64_t seed = test_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    const int n = 3000;
    const auto a = make_matrix(n, n, n, MatrixKind::random, seed);
    Options options;
    options.backend = Backend::gpu;
    options.num_devices = 1;
    const Factored f = factor(n, n, a, options);
    EXPECT_EQ(f.info, 0);
    EXPECT_LT(residual(n, n, a, f), kResidualBound);
    EXPECT_NE(f.report.plan.find("model:"), std::string::npos) << f.report.plan;
    EXPECT_NE(describe_plan(n, n, options).find("panel on"), std::string::npos);
}

// A CPU panel's threads split its rows at cache lines of the panel's address,
// so the panel buffers are cache-line aligned wherever they come from (CUDA's
// pinned memory is), and a factorization with CPU panels of several threads
// gives the same bits on every call (of two devices, with the matrix sent
// eagerly: streamed, a block is caught up at whichever step it arrives).
TEST(HybridSchedulerHost, BuffersAlignedAndRepeatedCallsBitIdentical) {
    auto device = make_host_device(0);
    for (int64_t count : {1, 3, 17, 1000, 100003}) {
        float* p = device->host_alloc(count);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << count << " floats";
        device->host_free(p);
    }
    const uint64_t seed = test_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    const int n = 1100;  // panels of 1100 rows: two threads where OpenMP has them
    const auto a = make_matrix(n, n, n, MatrixKind::random, seed);
    HybridSettings settings;
    settings.block_size = 128;
    settings.panel = PanelMethod::recursive;
    settings.stream_matrix = false;
    const Factored first = factor_on_host_devices(2, settings, n, n, a);
    // Something else on the heap between the calls moves the next buffers.
    std::vector<std::unique_ptr<char[]>> clutter;
    for (int i = 0; i < 7; ++i) clutter.emplace_back(new char[size_t(40 + 8 * i)]);
    const Factored second = factor_on_host_devices(2, settings, n, n, a);
    EXPECT_EQ(first.info, 0);
    EXPECT_EQ(first.ipiv, second.ipiv);
    EXPECT_EQ(first_bit_difference(first.lu, second.lu), -1);
    EXPECT_LT(residual(n, n, a, first), kResidualBound);
}

TEST(BlockingPlan, BlocksStepsAndOwnership) {
    const BlockingPlan plan(30, 25, 4, 3);  // blocks at 0,4,...,24
    EXPECT_EQ(plan.blocks(), 7);
    EXPECT_EQ(plan.steps(), 7);
    EXPECT_EQ(plan.panel_width(0), 4);
    EXPECT_EQ(plan.block_width(6), 1);
    // Equal widths: dealt cyclically.
    for (int64_t b = 0; b < plan.blocks(); ++b) EXPECT_EQ(plan.owner(b), b % 3) << b;
    EXPECT_EQ(plan.local_cols(0) + plan.local_cols(1) + plan.local_cols(2), 25);
    EXPECT_EQ(plan.local_cols(0), 4 + 4 + 1);  // blocks 0, 3, 6
    EXPECT_EQ(plan.blocks_of(0), (std::vector<int64_t>{0, 3, 6}));
    EXPECT_EQ(plan.local_begin(0, 12), 4);     // block 0 lies left of column 12
    EXPECT_EQ(plan.local_begin(0, 14), 6);     // and two columns of block 3
    EXPECT_EQ(plan.local_begin(1, 0), 0);
    EXPECT_EQ(plan.local_begin(2, 25), plan.local_cols(2));

    const BlockingPlan short_rows(10, 25, 4, 3);  // panels only below row 10
    EXPECT_EQ(short_rows.steps(), 3);
    EXPECT_EQ(short_rows.panel_width(2), 2);  // rows run out before the block does
}

// Wide and narrow blocks alternating (as the planner's widths may): dealt by
// the update work each block receives, not cyclically, the two devices' work
// stays within one block's of each other, where cyclic dealing would give the
// wide blocks, and most of the work, to one device.
TEST(BlockingPlan, MixedWidthsDealtByWork) {
    const int64_t n = 8192;
    std::vector<int> widths = {128};
    while (std::accumulate(widths.begin(), widths.end(), int64_t(0)) < n)
        widths.push_back(widths.size() % 2 == 1 ? 512 : 128);
    const BlockingPlan plan(n, n, widths, 2);
    std::vector<double> work(2, 0.0);
    double received = 0.0, largest = 0.0;
    for (int64_t b = 0; b < plan.blocks(); ++b) {
        const double w = 2.0 * received * double(plan.block_width(b));
        work[plan.owner(b)] += w;
        largest = std::max(largest, w);
        if (b < plan.steps())
            received += double(n - plan.block_begin(b) - plan.panel_width(b)) * plan.panel_width(b);
        EXPECT_EQ(plan.local_begin(plan.owner(b), plan.block_begin(b)),
                  [&] {
                      int64_t cols = 0;
                      for (int64_t c = 0; c < b; ++c)
                          if (plan.owner(c) == plan.owner(b)) cols += plan.block_width(c);
                      return cols;
                  }())
            << b;
    }
    EXPECT_LE(std::abs(work[0] - work[1]), largest);
    EXPECT_EQ(plan.local_cols(0) + plan.local_cols(1), n);
}

}  // namespace
}  // namespace tandem::test
