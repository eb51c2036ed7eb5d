// The performance model (interpolation, text form), the step planner (a plan is
// a deterministic function of the model), the calibration through a host
// device, and the model cache file.
#include <gtest/gtest.h>
#include <unistd.h>
#include <sys/stat.h>
#include <vector>
#include <thread>
#include <atomic>

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "scheduler/cpu_backend.hpp"
#include "scheduler/calibration.hpp"
#include "scheduler/performance_model.hpp"
#include "scheduler/step_planner.hpp"
#include "scheduler/cache_file.hpp"
#include "src/model_cache.hpp"
#include "tests/test_support.hpp"

namespace tandem::test {
namespace {

// A model with simple closed forms: CPU panel = rows * width^2 * cpu_cost,
// device panel = device_latency * width / 128 whatever the height, update at
// 40 TF/s (so update time = flops / 4e13 above the smallest size), 20 GB/s.
PerformanceModel synthetic_model(double cpu_cost, double device_latency) {
    PerformanceModel m;
    m.fingerprint = "synthetic";
    for (int64_t rows : {1024, 4096, 16384, 65536})
        for (int width : {128, 256, 512}) {
            m.cpu_panels.push_back({rows, width, double(rows) * width * width * cpu_cost});
            m.device_panels.push_back({rows, width, device_latency * width / 128.0});
        }
    for (int64_t size : {2048, 8192, 16384})
        for (int width : {128, 256, 512})
            m.updates.push_back({size, width, 2.0 * size * size * width / 4e13});
    m.transfer_bytes_per_second = 20e9;
    m.host_copy_bytes_per_second = 10e9;
    m.device_panel_interference = 0.25;
    m.step_overhead_seconds = 20e-6;
    return m;
}

TEST(PerformanceModel, ReproducesItsSamplesAndInterpolatesBetweenThem) {
    const PerformanceModel m = synthetic_model(1e-12, 1e-3);
    EXPECT_NEAR(m.cpu_panel_seconds(4096, 256), 4096.0 * 256 * 256 * 1e-12, 1e-12);
    // Log-log in the height of a power law is exact.
    EXPECT_NEAR(m.cpu_panel_seconds(8192, 256), 8192.0 * 256 * 256 * 1e-12, 1e-9);
    // Between widths: between the neighbours' times.
    const double t384 = m.cpu_panel_seconds(8192, 384);
    EXPECT_GT(t384, m.cpu_panel_seconds(8192, 256));
    EXPECT_LT(t384, m.cpu_panel_seconds(8192, 512));
    // Beyond the grid: monotone, and never negative.
    EXPECT_GT(m.cpu_panel_seconds(131072, 256), m.cpu_panel_seconds(65536, 256));
    EXPECT_GT(m.cpu_panel_seconds(100, 256), 0.0);
    EXPECT_LE(m.cpu_panel_seconds(100, 256), m.cpu_panel_seconds(1024, 256));
    EXPECT_NEAR(m.device_panel_seconds(30000, 256), 2e-3, 1e-12);
    EXPECT_NEAR(m.update_seconds(8192, 8192, 256), 2.0 * 8192 * 8192 * 256 / 4e13, 1e-9);
    EXPECT_EQ(m.update_seconds(0, 100, 256), 0.0);
    EXPECT_NEAR(m.transfer_seconds(20e9), 1.0, 1e-12);
}

TEST(PerformanceModel, TextFormRoundTripsAndRejectsDamage) {
    const PerformanceModel m = synthetic_model(1e-12, 1e-3);
    const auto back = PerformanceModel::parse(m.serialize());
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(back->fingerprint, "synthetic");
    EXPECT_EQ(back->serialize(), m.serialize());
    EXPECT_FALSE(PerformanceModel::parse("").has_value());
    EXPECT_FALSE(PerformanceModel::parse("not a model\n").has_value());
    std::string text = m.serialize();
    EXPECT_FALSE(PerformanceModel::parse(text + "cpu_panel 12 x\n").has_value());
    EXPECT_FALSE(PerformanceModel::parse(text + "unknown_key 1\n").has_value());
    EXPECT_FALSE(PerformanceModel::parse(text + "update 100 128 -1\n").has_value());
    EXPECT_FALSE(PerformanceModel::parse(text + "device_whole 100 -1\n").has_value());
    text.resize(text.size() / 3);  // a torn file
    EXPECT_FALSE(PerformanceModel::parse(text).has_value());

    PerformanceModel with_whole = m;
    with_whole.device_whole = {{1024, 1e-3}, {4096, 8e-3}};
    const auto whole_back = PerformanceModel::parse(with_whole.serialize());
    ASSERT_TRUE(whole_back.has_value());
    EXPECT_EQ(whole_back->serialize(), with_whole.serialize());
}

TEST(PerformanceModel, WholeMatrixTimesUpToTheLargestMeasuredSize) {
    PerformanceModel m = synthetic_model(1e-12, 1e-3);
    EXPECT_TRUE(std::isinf(m.device_whole_seconds(2048)));  // nothing measured
    m.device_whole = {{4096, 8e-3}, {1024, 1e-3}};           // any order
    EXPECT_NEAR(m.device_whole_seconds(1024), 1e-3, 1e-12);
    EXPECT_NEAR(m.device_whole_seconds(2048), std::sqrt(1e-3 * 8e-3), 1e-9);  // log-log
    EXPECT_NEAR(m.device_whole_seconds(512), 1e-3, 1e-12);  // below the smallest: its time
    EXPECT_TRUE(std::isinf(m.device_whole_seconds(8192)));
}

TEST(PerformanceModel, CpuCrossoverWhereTheMeasuredCallsMeet) {
    PerformanceModel m = synthetic_model(1e-12, 1e-3);
    EXPECT_EQ(m.cpu_crossover_n(), 0);  // not measured: the device is kept
    // LAPACK ~ n^3 from 1 us at 16; the device ~ 100 us flat: they meet at
    // n = 16 * 100^(1/3) = 74.3.
    for (int64_t n : {16, 32, 64, 128, 256}) {
        m.cpu_calls.push_back({n, 1e-6 * std::pow(double(n) / 16.0, 3.0)});
        m.device_calls.push_back({n, 1e-4});
    }
    EXPECT_GE(m.cpu_crossover_n(), 74);
    EXPECT_LE(m.cpu_crossover_n(), 77);
    const auto back = PerformanceModel::parse(m.serialize());
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(back->cpu_crossover_n(), m.cpu_crossover_n());
    EXPECT_FALSE(PerformanceModel::parse(m.serialize() + "cpu_call 64 0\n").has_value());

    PerformanceModel device_everywhere = m;
    for (WholeTiming& t : device_everywhere.device_calls) t.seconds = 1e-7;
    EXPECT_EQ(device_everywhere.cpu_crossover_n(), 0);
    PerformanceModel cpu_everywhere = m;  // the CPU up to the largest size measured
    for (WholeTiming& t : cpu_everywhere.device_calls) t.seconds = 1.0;
    EXPECT_EQ(cpu_everywhere.cpu_crossover_n(), 257);  // 256 itself on the CPU

    PerformanceModel repeated = m;  // two samples of one size count as one
    repeated.cpu_calls.push_back({64, 1e-6 * std::pow(4.0, 3.0)});
    repeated.device_calls.push_back({64, 1e-4});
    EXPECT_EQ(repeated.cpu_crossover_n(), m.cpu_crossover_n());
    PerformanceModel apart = m;  // no size measured for both: nothing known
    apart.cpu_calls = {{16, 1e-6}, {32, 8e-6}};
    apart.device_calls = {{64, 1e-4}, {128, 1e-4}};
    EXPECT_EQ(apart.cpu_crossover_n(), 0);
    PerformanceModel single = m;  // one size each: the CPU up to it, if it won there
    single.cpu_calls = {{64, 1e-5}};
    single.device_calls = {{64, 1e-4}};
    EXPECT_EQ(single.cpu_crossover_n(), 65);
    single.device_calls = {{64, 1e-6}};
    EXPECT_EQ(single.cpu_crossover_n(), 0);
}

// sgetrs's routes: the same crossover on their own tables, kept apart from
// the factorization's, and "not measured" means the CPU (unlike sgetrf's).
TEST(PerformanceModel, SolveCrossoverWhereTheMeasuredSolvesMeet) {
    PerformanceModel m = synthetic_model(1e-12, 1e-3);
    EXPECT_EQ(m.solve_crossover_n(), std::numeric_limits<int64_t>::max());  // not measured
    // LAPACK ~ n^2 from 10 us at 64; the device 50 us + n^2 at a tenth of
    // LAPACK's cost: 1e-5 x = 5e-5 + 1e-6 x, x = (n/64)^2 = 5.56, n = 150.9.
    for (int64_t n : {64, 128, 256, 512}) {
        const double x = std::pow(double(n) / 64.0, 2.0);
        m.cpu_solves.push_back({n, 1e-5 * x});
        m.device_solves.push_back({n, 5e-5 + 1e-6 * x});
    }
    EXPECT_GE(m.solve_crossover_n(), 150);
    EXPECT_LE(m.solve_crossover_n(), 154);
    EXPECT_EQ(m.cpu_crossover_n(), 0);  // the factorization's tables are empty
    const auto back = PerformanceModel::parse(m.serialize());
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(back->cpu_solves.size(), 4u);
    EXPECT_EQ(back->device_solves.size(), 4u);
    EXPECT_EQ(back->solve_crossover_n(), m.solve_crossover_n());
    EXPECT_FALSE(PerformanceModel::parse(m.serialize() + "device_solve 64 -1\n").has_value());
    PerformanceModel device_everywhere = m;
    for (WholeTiming& t : device_everywhere.device_solves) t.seconds = 1e-7;
    EXPECT_EQ(device_everywhere.solve_crossover_n(), 0);
    // LAPACK ahead up to the largest size: the device from just beyond it, as
    // for the calls (the factors outgrow the CPU's caches there).
    PerformanceModel cpu_everywhere = m;
    for (WholeTiming& t : cpu_everywhere.device_solves) t.seconds = 1.0;
    EXPECT_EQ(cpu_everywhere.solve_crossover_n(), 513);
}

// Several and many right-hand sides have tables and crossovers of their own,
// independent of the one-column tables; a count of right-hand sides takes
// the tables of 1, 16 (2-63) or 256 (64 and more).
TEST(PerformanceModel, SolveCrossoversOfSeveralAndManyRightHandSidesOnTheirOwnTables) {
    constexpr int kSeveral = PerformanceModel::kSeveralRhs, kMany = PerformanceModel::kManyRhs;
    PerformanceModel m = synthetic_model(1e-12, 1e-3);
    for (int64_t n : {64, 128, 256, 512}) {
        const double x = std::pow(double(n) / 64.0, 2.0);
        m.cpu_solves.push_back({n, 1e-5 * x});             // meets the device at 150.9
        m.device_solves.push_back({n, 5e-5 + 1e-6 * x});
        m.cpu_solves_several.push_back({n, 4e-5 * x});     // 4e-5 x = 6e-5 + 1e-6 x: x = 1.54,
        m.device_solves_several.push_back({n, 6e-5 + 1e-6 * x});  // n = 79.4
        m.cpu_solves_many.push_back({n, 1e-4 * x});        // 1e-4 x = 2e-4 + 1e-6 x: x = 2.02,
        m.device_solves_many.push_back({n, 2e-4 + 1e-6 * x});     // n = 91.0
    }
    EXPECT_GE(m.solve_crossover_n(), 150);
    EXPECT_LE(m.solve_crossover_n(), 154);
    EXPECT_GE(m.solve_crossover_n(kSeveral), 79);
    EXPECT_LE(m.solve_crossover_n(kSeveral), 82);
    EXPECT_GE(m.solve_crossover_n(kMany), 90);
    EXPECT_LE(m.solve_crossover_n(kMany), 94);
    const auto back = PerformanceModel::parse(m.serialize());
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(back->cpu_solves_several.size(), 4u);
    EXPECT_EQ(back->device_solves_several.size(), 4u);
    EXPECT_EQ(back->cpu_solves_many.size(), 4u);
    EXPECT_EQ(back->device_solves_many.size(), 4u);
    for (const int timed : {1, kSeveral, kMany})
        EXPECT_EQ(back->solve_crossover_n(timed), m.solve_crossover_n(timed)) << timed;
    EXPECT_FALSE(PerformanceModel::parse(m.serialize() + "cpu_solve_several 64 0\n").has_value());
    EXPECT_FALSE(PerformanceModel::parse(m.serialize() + "device_solve_many 64 -1\n").has_value());
    PerformanceModel without_those_tables = m;
    without_those_tables.cpu_solves_several.clear();
    without_those_tables.device_solves_many.clear();
    EXPECT_EQ(without_those_tables.solve_crossover_n(kSeveral), std::numeric_limits<int64_t>::max());
    EXPECT_EQ(without_those_tables.solve_crossover_n(kMany), std::numeric_limits<int64_t>::max());
    EXPECT_EQ(without_those_tables.solve_crossover_n(), m.solve_crossover_n());
    // Which tables a count takes.
    EXPECT_EQ(PerformanceModel::timed_rhs_for(1), 1);
    EXPECT_EQ(PerformanceModel::timed_rhs_for(2), kSeveral);
    EXPECT_EQ(PerformanceModel::timed_rhs_for(63), kSeveral);
    EXPECT_EQ(PerformanceModel::timed_rhs_for(64), kMany);
    EXPECT_EQ(PerformanceModel::timed_rhs_for(100000), kMany);
}

TEST(StepPlanner, TakesASmallMatrixWholeWhenItsMeasuredTimeBeatsTheSteps) {
    PerformanceModel m = synthetic_model(1e-12, 1e-3);
    StepPlanRequest r;
    r.m = r.n = 2048;
    const StepPlan steps = plan_steps(m, r);
    ASSERT_GT(steps.widths.size(), 1u);

    m.device_whole = {{1024, 1e-5}, {4096, 1e-4}};  // far below the steps
    const StepPlan whole = plan_steps(m, r);
    EXPECT_EQ(whole.widths, std::vector<int>{2048});
    EXPECT_EQ(whole.sites, std::vector<PanelSite>{PanelSite::device});
    EXPECT_NEAR(whole.predicted_seconds, m.device_whole_seconds(2048), 1e-15);
    EXPECT_NE(whole.describe().find("whole matrix"), std::string::npos) << whole.describe();

    // Never where it does not apply: outside the measured sizes, rectangular,
    // panels forced to the CPU, a forced width, several devices.
    StepPlanRequest large = r;
    large.m = large.n = 8192;
    EXPECT_GT(plan_steps(m, large).widths.size(), 1u);
    StepPlanRequest tall = r;
    tall.m = 3000;
    EXPECT_GT(plan_steps(m, tall).widths.size(), 1u);
    StepPlanRequest cpu = r;
    cpu.placement = PanelPlacement::cpu;
    EXPECT_GT(plan_steps(m, cpu).widths.size(), 1u);
    StepPlanRequest forced = r;
    forced.block_size = 256;
    EXPECT_EQ(plan_steps(m, forced).widths.size(), 8u);
    StepPlanRequest two = r;
    two.num_devices = 2;
    EXPECT_GT(plan_steps(m, two).widths.size(), 1u);

    m.device_whole = {{1024, 10.0}, {4096, 100.0}};  // far above: the steps stay
    EXPECT_EQ(plan_steps(m, r).widths, steps.widths);

    // Between: the steps are weighed by what runs take beyond the model, more
    // when the matrix is streamed from host memory. The whole matrix at 1.4x
    // the steps' prediction (log-log midpoint of the two timings).
    const double p = steps.predicted_seconds;
    m.host_copy_bytes_per_second = 1e18;  // copies take no time
    m.device_whole = {{1024, 1.4 * p / 8}, {4096, 1.4 * p * 8}};
    ASSERT_NEAR(m.device_whole_seconds(2048), 1.4 * p, 1e-9 * p);
    EXPECT_GT(plan_steps(m, r).widths.size(), 1u);  // above kStepModelOptimism
    StepPlanRequest streamed = r;
    streamed.streamed = true;  // its steps predicted no faster (no CPU panels)
    const StepPlan streamed_plan = plan_steps(m, streamed);
    EXPECT_EQ(streamed_plan.widths, std::vector<int>{2048});  // below kStreamedStepModelOptimism
    EXPECT_NE(streamed_plan.describe().find("x 1.70"), std::string::npos) << streamed_plan.describe();
}

// Below the smallest trailing update the model timed (2048 here) the steps'
// prediction is extrapolated and weighed by kExtrapolatedStepModelOptimism:
// the single call at 2x the steps' prediction is taken there, at 2.5x not;
// at that size and above the steps are weighed by kStepModelOptimism.
TEST(StepPlanner, TakesTheSingleCallWhereTheStepModelOnlyExtrapolates) {
    PerformanceModel m = synthetic_model(1e-12, 1e-3);
    StepPlanRequest r;
    r.m = r.n = 1024;
    const StepPlan steps = plan_steps(m, r);
    ASSERT_GT(steps.widths.size(), 1u);
    const double p = steps.predicted_seconds;
    m.device_whole = {{512, 2.0 * p / 8}, {2048, 2.0 * p * 8}};  // 2 p at 1024: the steps look faster
    const StepPlan plan = plan_steps(m, r);
    EXPECT_EQ(plan.widths, std::vector<int>{1024}) << plan.describe();
    EXPECT_TRUE(plan.steps_extrapolated);
    EXPECT_NE(plan.describe().find("no update timed this small (x 2.10"), std::string::npos)
        << plan.describe();
    PerformanceModel slower = m;
    slower.device_whole = {{512, 2.5 * p / 8}, {2048, 2.5 * p * 8}};
    EXPECT_EQ(plan_steps(slower, r).widths, steps.widths);
    StepPlanRequest at_grid = r;
    at_grid.m = at_grid.n = 2048;
    EXPECT_GT(plan_steps(m, at_grid).widths.size(), 1u);  // 2 p' there: the steps win
    StepPlanRequest tall = r;
    tall.m = 1500;
    EXPECT_GT(plan_steps(m, tall).widths.size(), 1u);  // no single call for a rectangle
    StepPlanRequest forced = r;
    forced.block_size = 256;
    EXPECT_EQ(plan_steps(m, forced).widths.size(), 4u);
    EXPECT_TRUE(m.only_whole_call_timed_at(1024));
    EXPECT_FALSE(m.only_whole_call_timed_at(2048));  // an update timed at 2048
    EXPECT_FALSE(m.only_whole_call_timed_at(256));   // no single call timed this small
    m.device_whole = {{2048, 1.0}};  // not timed at 1024 or below: nothing to take
    EXPECT_EQ(plan_steps(m, r).widths, steps.widths);
}

// Streamed from host memory, where the device's call on the whole matrix
// moves it beside the factorization the plan counts only kOverlappedCopyShare
// of the copies against that call; elsewhere all of them. Here the whole
// matrix takes as long as its steps' prediction p, the copies too, so that the
// single call costs 1.4 p when it hides its copies and 2 p when not, against
// 1.7 p for the steps.
TEST(StepPlanner, CountsTheCopiesASingleCallLeavesUncovered) {
    for (const bool hides : {false, true}) {
        SCOPED_TRACE(hides ? "the call hides its copies" : "the call copies, then factors");
        const int64_t n = 2048;
        PerformanceModel m = synthetic_model(1e-12, 1e-3);
        StepPlanRequest r;
        r.m = r.n = n;
        r.streamed = true;
        r.whole_call_hides_copies = hides;
        const double p = plan_steps(m, r).predicted_seconds;
        ASSERT_GT(p, 0.0);
        m.host_copy_bytes_per_second = 2.0 * 4.0 * double(n) * double(n) / p;
        m.device_whole = {{n / 2, p / 8}, {n * 2, p * 8}};
        ASSERT_NEAR(m.device_whole_seconds(n), p, 1e-9 * p);
        const StepPlan plan = plan_steps(m, r);
        ASSERT_NEAR(plan.host_copy_seconds, p, 1e-9 * p);
        if (hides) {
            EXPECT_EQ(plan.widths, std::vector<int>{static_cast<int>(n)});
            EXPECT_GT(plan.steps_alternative_seconds, 0.0);
            EXPECT_DOUBLE_EQ(plan.host_copy_exposed, kOverlappedCopyShare);
            EXPECT_NE(plan.describe().find("40% of it counted beside the single call"),
                      std::string::npos)
                << plan.describe();
        } else {
            EXPECT_GT(plan.widths.size(), 1u) << plan.describe();
            EXPECT_EQ(plan.steps_alternative_seconds, 0.0) << plan.describe();
        }
    }
}

TEST(StepPlanner, CandidateWidthsUpToALimit) {
    EXPECT_EQ(candidate_widths_up_to(0), StepPlanRequest{}.candidate_widths);
    EXPECT_EQ(candidate_widths_up_to(512), (std::vector<int>{128, 256, 384, 512}));
    EXPECT_EQ(candidate_widths_up_to(300), (std::vector<int>{128, 256}));
    EXPECT_EQ(candidate_widths_up_to(64), std::vector<int>{64});
    PerformanceModel m = synthetic_model(1e-12, 1e-3);
    StepPlanRequest r;
    r.m = r.n = 16384;
    r.candidate_widths = candidate_widths_up_to(256);
    for (int w : plan_steps(m, r).widths) EXPECT_LE(w, 256);
}

int64_t sum_of(const std::vector<int>& widths) {
    int64_t total = 0;
    for (int w : widths) total += w;
    return total;
}

TEST(StepPlanner, SlowCpuPanelsGoToTheDeviceAndFastOnesStayOnTheCpu) {
    StepPlanRequest r;
    r.m = r.n = 16384;
    r.block_size = 256;
    const StepPlan slow_cpu = plan_steps(synthetic_model(1e-9, 1e-4), r);
    ASSERT_EQ(slow_cpu.widths.size(), 64u);
    for (PanelSite s : slow_cpu.sites) EXPECT_EQ(s, PanelSite::device);
    const StepPlan fast_cpu = plan_steps(synthetic_model(1e-16, 1.0), r);
    for (PanelSite s : fast_cpu.sites) EXPECT_EQ(s, PanelSite::cpu);
    EXPECT_EQ(fast_cpu.step_seconds.size(), fast_cpu.widths.size());
}

TEST(StepPlanner, TallPanelsOnTheDeviceShortOnesOnTheCpu) {
    // CPU panels cost in proportion to their height, device panels do not:
    // the plan has device panels up to one step and CPU panels from there on.
    StepPlanRequest r;
    r.m = r.n = 32768;
    r.block_size = 256;
    const StepPlan plan = plan_steps(synthetic_model(1e-12, 1.5e-3), r);
    ASSERT_EQ(plan.sites.size(), 128u);
    EXPECT_EQ(plan.sites.front(), PanelSite::device);
    EXPECT_EQ(plan.sites.back(), PanelSite::cpu);
    int switches = 0;
    for (size_t k = 1; k < plan.sites.size(); ++k) switches += plan.sites[k] != plan.sites[k - 1];
    EXPECT_EQ(switches, 1);
    EXPECT_FALSE(plan.describe().empty());
}

TEST(StepPlanner, CpuPanelsMustWinByTheMargin) {
    // Over CPU panel costs from far cheaper than the device's to far dearer:
    // automatic placement keeps CPU panels only where the model puts them more
    // than kCpuPanelPlanMargin ahead of device panels alone, and records the
    // plan it passed over otherwise. Both cases must occur in the sweep.
    StepPlanRequest r;
    r.m = r.n = 16384;
    r.block_size = 256;
    int kept = 0, passed_over = 0;
    for (double cpu_cost = 1e-15; cpu_cost < 1e-10; cpu_cost *= 1.25) {
        SCOPED_TRACE("cpu cost " + std::to_string(cpu_cost));
        const PerformanceModel model = synthetic_model(cpu_cost, 1e-3);
        StepPlanRequest device = r;
        device.placement = PanelPlacement::device;
        const double device_only = plan_steps(model, device).predicted_seconds;
        const StepPlan plan = plan_steps(model, r);
        const bool cpu = std::find(plan.sites.begin(), plan.sites.end(), PanelSite::cpu) != plan.sites.end();
        if (cpu) {
            ++kept;
            EXPECT_LT((1.0 + kCpuPanelPlanMargin) * plan.predicted_seconds, device_only);
            EXPECT_EQ(plan.cpu_alternative_seconds, 0.0);
        } else if (plan.cpu_alternative_seconds > 0.0) {
            ++passed_over;
            EXPECT_DOUBLE_EQ(plan.predicted_seconds, device_only);
            EXPECT_LT(plan.cpu_alternative_seconds, device_only);
            EXPECT_LE(device_only, (1.0 + kCpuPanelPlanMargin) * plan.cpu_alternative_seconds);
            EXPECT_NE(plan.describe().find("device panels only"), std::string::npos);
        }
    }
    EXPECT_GT(kept, 0);
    EXPECT_GT(passed_over, 0);
}

TEST(StepPlanner, StreamingKeepsTheHostForTheTransfers) {
    // CPU panels cheap enough to win every step; streamed, automatic placement
    // puts every panel on the device (the host moves the matrix), while
    // a forced CPU placement is honoured.
    StepPlanRequest r;
    r.m = r.n = 16384;
    r.block_size = 256;
    const PerformanceModel model = synthetic_model(1e-14, 1e-2);
    for (PanelSite s : plan_steps(model, r).sites) EXPECT_EQ(s, PanelSite::cpu);
    r.streamed = true;
    for (PanelSite s : plan_steps(model, r).sites) EXPECT_EQ(s, PanelSite::device);
    r.placement = PanelPlacement::cpu;
    for (PanelSite s : plan_steps(model, r).sites) EXPECT_EQ(s, PanelSite::cpu);
}

TEST(StepPlanner, PanelsReadDeviceToDeviceCostNoHostTransfers) {
    // Two devices, every panel on a device: through the host each panel costs
    // two transfers more, so the plan's predicted time must be longer.
    StepPlanRequest r;
    r.m = r.n = 16384;
    r.num_devices = 2;
    r.placement = PanelPlacement::device;
    r.block_size = 256;
    const PerformanceModel model = synthetic_model(1e-12, 1e-3);
    const StepPlan through_host = plan_steps(model, r);
    r.peer_panels = true;
    const StepPlan peer = plan_steps(model, r);
    EXPECT_EQ(peer.widths, through_host.widths);
    EXPECT_LT(peer.predicted_seconds, through_host.predicted_seconds);
    // One device: there is nothing to send, and the flag has no effect.
    r.num_devices = 1;
    const double one_peer = plan_steps(model, r).predicted_seconds;
    r.peer_panels = false;
    EXPECT_EQ(plan_steps(model, r).predicted_seconds, one_peer);
}

TEST(StepPlanner, IsDeterministicCoversTheColumnsAndHonoursForcedChoices) {
    const PerformanceModel model = synthetic_model(1e-12, 1.5e-3);
    for (auto [m, n] : {std::pair<int64_t, int64_t>{20000, 20000}, {5000, 9000}, {9000, 5000},
                        {100, 100}, {1, 1}}) {
        SCOPED_TRACE(std::to_string(m) + " x " + std::to_string(n));
        StepPlanRequest r;
        r.m = m;
        r.n = n;
        r.num_devices = 2;
        const StepPlan a = plan_steps(model, r), b = plan_steps(model, r);
        EXPECT_EQ(a.widths, b.widths);
        EXPECT_EQ(a.sites, b.sites);
        EXPECT_GE(sum_of(a.widths), std::min(m, n));
        EXPECT_LT(sum_of(a.widths) - a.widths.back(), std::min(m, n));
        for (int w : a.widths) EXPECT_TRUE(w == 128 || w == 256 || w == 384 || w == 512 || w == std::min(m, n));
        // The blocking plan takes the plan's widths as they are.
        BlockingPlan blocking(m, n, a.widths, 2);
        EXPECT_EQ(blocking.steps(), static_cast<int64_t>(a.widths.size()));
        blocking.set_panel_sites(a.sites);

        r.placement = PanelPlacement::cpu;
        for (PanelSite s : plan_steps(model, r).sites) EXPECT_EQ(s, PanelSite::cpu);
        r.placement = PanelPlacement::device;
        r.block_size = 64;
        const StepPlan forced = plan_steps(model, r);
        for (PanelSite s : forced.sites) EXPECT_EQ(s, PanelSite::device);
        for (size_t k = 0; k + 1 < forced.widths.size(); ++k) EXPECT_EQ(forced.widths[k], 64);
    }
}

TEST(StepPlanner, SeveralDevicesKeepOneWidthTheBestByTheModel) {
    // One device may mix widths; on several, every step but a cut last one
    // has the same width, and no single width's plan is predicted faster.
    const PerformanceModel model = synthetic_model(1e-12, 1.5e-3);
    for (int devices : {2, 4}) {
        SCOPED_TRACE(std::to_string(devices) + " devices");
        StepPlanRequest r;
        r.m = r.n = 20000;
        r.num_devices = devices;
        r.placement = PanelPlacement::device;
        const StepPlan plan = plan_steps(model, r);
        ASSERT_FALSE(plan.widths.empty());
        for (size_t k = 0; k + 1 < plan.widths.size(); ++k) EXPECT_EQ(plan.widths[k], plan.widths[0]);
        EXPECT_EQ(sum_of(plan.widths) - plan.widths.back() < r.n, true);
        for (int w : r.candidate_widths) {
            StepPlanRequest uniform = r;
            uniform.block_size = w;
            EXPECT_LE(plan.predicted_seconds, plan_steps(model, uniform).predicted_seconds) << w;
        }
    }
}

TEST(StepPlanner, SeveralDevicesFactorAPanelFirstWhereTheStepWouldWaitForIt) {
    // A 5.9 ms panel beside a 20 ms update per device holds up a step of four
    // devices (it goes first); beside a 38 ms update on two it does not.
    EXPECT_TRUE(panel_before_update_pays(5.9e-3, 20e-3, 4));
    EXPECT_FALSE(panel_before_update_pays(5.9e-3, 38e-3, 2));
    EXPECT_FALSE(panel_before_update_pays(1.0, 1e-9, 1));  // one device: no other waits
    // Panels of constant time, updates that shrink: a panel goes beside the
    // large updates of the first steps and before its owner's short ones.
    const PerformanceModel model = synthetic_model(1e-12, 1e-4);
    StepPlanRequest r;
    r.m = r.n = 20000;
    r.block_size = 512;
    r.placement = PanelPlacement::device;
    r.peer_panels = true;  // the panel's time is the model's alone
    for (int devices : {1, 4}) {
        SCOPED_TRACE(std::to_string(devices) + " devices");
        r.num_devices = devices;
        const StepPlan plan = plan_steps(model, r);
        const std::vector<bool>& first = plan.panels_before_update;
        ASSERT_EQ(first.size(), plan.widths.size());
        EXPECT_FALSE(first.front());  // no update before the first panel
        const auto firsts = std::count(first.begin(), first.end(), true);
        if (devices == 1) {
            EXPECT_EQ(firsts, 0);
            continue;
        }
        // Never the second panel (the first step's update runs on the blocks
        // as they arrive) nor the last, which has no columns right of it.
        ASSERT_GE(first.size(), 4u);
        EXPECT_FALSE(first[1]) << plan.describe();
        EXPECT_FALSE(first.back()) << plan.describe();
        EXPECT_FALSE(first[2]) << plan.describe();
        EXPECT_TRUE(first[first.size() - 2]) << plan.describe();
        for (size_t k = 3; k + 1 < first.size(); ++k) EXPECT_TRUE(first[k] || !first[k - 1]) << k;
        EXPECT_NE(plan.describe().find("before its owner's update"), std::string::npos);
    }
}

CalibrationGrid tiny_grid() {
    CalibrationGrid g;
    g.panel_rows = {64, 256};
    g.widths = {8, 16};
    g.update_sizes = {32, 64};
    g.whole_sizes = {32, 64, 100};
    g.repeats = 1;
    return g;
}

TEST(Calibration, MeasuresACompleteModelThroughAHostDevice) {
    const auto device = make_host_device(0);
    const PerformanceModel m = calibrate(*device, PanelMethod::recursive, tiny_grid(), "test");
    EXPECT_TRUE(m.complete()) << m.serialize();
    EXPECT_EQ(m.cpu_panels.size(), 4u);
    EXPECT_EQ(m.device_panels.size(), 4u);
    EXPECT_EQ(m.updates.size(), 4u);
    ASSERT_EQ(m.device_whole.size(), 3u);
    EXPECT_EQ(m.device_whole[2].n, 100);
}

// The interference share from three timings (the calibration's are too noisy
// on the tiny grid to check against a value).
TEST(Calibration, InterferenceShareFromTimesAloneAndTogether) {
    EXPECT_DOUBLE_EQ(interference_share(3.0, 1.0, 3.0), 0.0);   // the panel fully hidden
    EXPECT_DOUBLE_EQ(interference_share(3.0, 1.0, 4.0), 1.0);   // no overlap at all
    EXPECT_DOUBLE_EQ(interference_share(1.0, 2.0, 2.25), 0.25); // a quarter of the shorter
    EXPECT_DOUBLE_EQ(interference_share(3.0, 1.0, 2.9), 0.0);   // noise below the longer
    EXPECT_DOUBLE_EQ(interference_share(3.0, 1.0, 9.0), 1.0);   // noise above the sum
    EXPECT_DOUBLE_EQ(interference_share(0.0, 1.0, 1.0), 0.0);   // nothing to share
}

// Plans kept per model fingerprint and request are the planner's own plans:
// another size, or another model, gets its own.
TEST(ModelCache, KeptPlansAreThePlannersPlans) {
    detail::forget_machine_models();
    const PerformanceModel fast_cpu = synthetic_model(1e-13, 1e-3);
    PerformanceModel slow_cpu = synthetic_model(1e-10, 1e-3);
    slow_cpu.fingerprint = "synthetic, slow CPU";
    for (int64_t n : {4096, 3000, 4096}) {
        StepPlanRequest r;
        r.m = r.n = n;
        for (const PerformanceModel* m : {&fast_cpu, static_cast<const PerformanceModel*>(&slow_cpu)}) {
            const StepPlan kept = detail::machine_plan(*m, r);
            const StepPlan planned = plan_steps(*m, r);
            EXPECT_EQ(kept.widths, planned.widths) << m->fingerprint << " n=" << n;
            EXPECT_EQ(kept.sites, planned.sites) << m->fingerprint << " n=" << n;
        }
    }
    EXPECT_NE(detail::machine_plan(fast_cpu, StepPlanRequest{4096, 4096}).sites,
              detail::machine_plan(slow_cpu, StepPlanRequest{4096, 4096}).sites);
    detail::forget_machine_models();
}

TEST(ModelCache, WritesReadsAndReplacesACorruptFile) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() /
                         ("tandem-model-test-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    const auto device = make_host_device(0);
    detail::forget_machine_models();
    const detail::ModelSource first =
        detail::machine_model(*device, PanelMethod::recursive, dir.string(), false, tiny_grid());
    EXPECT_EQ(first.origin.rfind("calibrated", 0), 0u) << first.origin;
    const std::string path = detail::model_cache_path(
        dir.string(), detail::machine_fingerprint(*device, PanelMethod::recursive));
    ASSERT_TRUE(fs::exists(path));
    EXPECT_EQ(detail::machine_model(*device, PanelMethod::recursive, dir.string()).origin, "memory");

    detail::forget_machine_models();
    const detail::ModelSource from_file =
        detail::machine_model(*device, PanelMethod::recursive, dir.string(), false, tiny_grid());
    EXPECT_EQ(from_file.origin, "file " + path);
    EXPECT_EQ(from_file.model.serialize(), first.model.serialize());

    // A format number no model has, so the file is of another format.
    const std::string other_format_header = "tandem-performance-model 0\n";
    std::ofstream(path, std::ios::trunc) << other_format_header << "cpu_panel garbage\n";
    detail::forget_machine_models();
    const detail::ModelSource garbled =
        detail::machine_model(*device, PanelMethod::recursive, dir.string(), false, tiny_grid());
    EXPECT_EQ(garbled.origin.rfind("calibrated", 0), 0u) << garbled.origin;
    // Whole files that tandem wrote: of another format, and of this format
    // but malformed. Each makes the call calibrate, and names the reason.
    const std::string model_text = first.model.serialize();
    const std::string model_header = model_text.substr(0, model_text.find('\n') + 1);
    for (const auto& [contents, reason] :
         {std::pair<std::string, std::string>{other_format_header +
                                                  model_text.substr(model_header.size()),
                                              "a model of another format"},
            {model_header + "cpu_panel garbage\n", "is malformed"},
          {"garbage\n", "is malformed"}}) {
        std::string error;
        ASSERT_TRUE(detail::write_cache_file(path, contents, error)) << error;
        detail::forget_machine_models();
        const detail::ModelSource measured =
            detail::machine_model(*device, PanelMethod::recursive, dir.string(), false, tiny_grid());
        EXPECT_EQ(measured.origin.rfind("calibrated", 0), 0u) << measured.origin;
        EXPECT_NE(measured.origin.find(reason), std::string::npos) << measured.origin;
    }
    std::string text, why;
    ASSERT_TRUE(detail::read_cache_file(path, 1 << 20, text, why)) << why;
    EXPECT_TRUE(PerformanceModel::parse(text).has_value());
    detail::forget_machine_models();
    fs::remove_all(dir);
}

// A cache file is read back only whole, only from a regular file (never
// blocking on a FIFO), and writers racing on one path each leave a whole file.
// A cache directory that cannot be written (a read-only home) gives way to a
// private one under $TMPDIR, where every process of the user finds the model.
TEST(CacheFile, UnwritableCacheDirectoryFallsBackToAPrivateTemporaryOne) {
    const std::filesystem::path base =
        std::filesystem::temp_directory_path() / ("tandem-unwritable-" + std::to_string(test_seed()));
    std::filesystem::create_directories(base);
    std::ofstream(base / "a-file") << "x";
    ScopedEnvironmentVariable tmpdir("TMPDIR", base.c_str());
    ScopedEnvironmentVariable xdg("XDG_CACHE_HOME", (base / "a-file" / "cache").c_str());
    const std::string expected = (base / ("tandem-cache-" + std::to_string(getuid()))).string();
    EXPECT_EQ(detail::resolve_cache_dir(""), expected);
    struct stat st {};
    ASSERT_EQ(stat(expected.c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(st.st_mode & 0077, 0u) << "the fallback is private to the user";
    EXPECT_EQ(detail::resolve_cache_dir("/configured/dir"), "/configured/dir");
    ScopedEnvironmentVariable writable("XDG_CACHE_HOME", (base / "xdg").c_str());
    EXPECT_EQ(detail::resolve_cache_dir(""), (base / "xdg" / "tandem").string());
    std::filesystem::remove_all(base);
}

TEST(CacheFile, RejectsCutShortAndNonRegularFilesAndSurvivesRacingWriters) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() /
                         ("tandem-cache-file-test-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    const std::string path = (dir / "entry.txt").string();
    const std::string content = "line one\nline two 1.5e-3\n";
    std::string error, text, why;
    ASSERT_TRUE(detail::write_cache_file(path, content, error)) << error;
    ASSERT_TRUE(detail::read_cache_file(path, 1024, text, why)) << why;
    EXPECT_EQ(text, content);
    EXPECT_FALSE(detail::read_cache_file(path, 8, text, why));  // over the size limit

    // Cut inside its content, or inside its end line: rejected.
    std::string whole;
    {
        std::ifstream in(path, std::ios::binary);
        whole.assign(std::istreambuf_iterator<char>(in), {});
    }
    for (size_t keep : {content.size() - 3, whole.size() - 2, size_t(0)}) {
        std::ofstream(path, std::ios::binary | std::ios::trunc) << whole.substr(0, keep);
        EXPECT_FALSE(detail::read_cache_file(path, 1024, text, why)) << "kept " << keep;
    }
    EXPECT_FALSE(detail::read_cache_file((dir / "missing.txt").string(), 1024, text, why));

    // A FIFO at the path: refused without waiting (a blocking open would hang here).
    const std::string fifo = (dir / "fifo.txt").string();
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    EXPECT_FALSE(detail::read_cache_file(fifo, 1024, text, why));
    EXPECT_NE(why.find("not a regular file"), std::string::npos) << why;

    // Writers racing on one path: every save succeeds, the file is one of them, whole.
    std::vector<std::thread> writers;
    std::atomic<int> failures{0};
    for (int t = 0; t < 8; ++t)
        writers.emplace_back([&, t] {
            for (int i = 0; i < 20; ++i) {
                std::string e;
                if (!detail::write_cache_file(path, "writer " + std::to_string(t) + "\n", e))
                    ++failures;
            }
        });
    for (std::thread& w : writers) w.join();
    EXPECT_EQ(failures.load(), 0);
    ASSERT_TRUE(detail::read_cache_file(path, 1024, text, why)) << why;
    EXPECT_EQ(text.rfind("writer ", 0), 0u) << text;
    size_t leftovers = 0;
    for (const auto& entry : fs::directory_iterator(dir))
        leftovers += entry.path().string().find(".tmp.") != std::string::npos;
    EXPECT_EQ(leftovers, 0u);
    fs::remove_all(dir);
}

}  // namespace
}  // namespace tandem::test
