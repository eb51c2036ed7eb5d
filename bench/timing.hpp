// Clock, median and the LU flop count used by every measurement of the benchmark.
#ifndef TANDEM_BENCH_TIMING_HPP
#define TANDEM_BENCH_TIMING_HPP

#include <algorithm>
#include <chrono>
#include <vector>

#include "bench/results.hpp"

namespace tandem_bench {

inline double wall_seconds() {
    using clock = std::chrono::steady_clock;
    return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

// The median is robust to one slow repeat (a page-fault storm, a clock ramp)
// without hiding a systematically slow implementation.
inline double median(std::vector<double> values) {
    if (values.empty()) return not_measured;
    std::sort(values.begin(), values.end());
    const std::size_t mid = values.size() / 2;
    return values.size() % 2 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

// Runs run(false) as warm-up, then run(true) `repeats` times; `run` times its own
// region and records it when told it is timed. The warm-up lasts at least one run
// and at least min_warmup_seconds: for small n one run (well under a millisecond)
// is too short to bring clocks, BLAS threads and caches to their steady state.
constexpr double min_warmup_seconds = 0.2;
constexpr int max_warmup_runs = 100;

template <class Run>
void warm_up_then_time(int repeats, Run&& run) {
    const double warmup_start = wall_seconds();
    int warmup_runs = 0;
    do {
        run(false);
        ++warmup_runs;
    } while (warmup_runs < max_warmup_runs && wall_seconds() - warmup_start < min_warmup_seconds);
    for (int repeat = 0; repeat < repeats; ++repeat) run(true);
}

// Host wall-clock seconds of each timed run(): restore() puts the inputs back
// before every run (warm-up included) and is not timed. `run` throws on failure.
template <class Restore, class Run>
std::vector<double> time_restored_runs(int repeats, Restore&& restore, Run&& run) {
    std::vector<double> seconds;
    warm_up_then_time(repeats, [&](bool timed) {
        restore();
        const double start = wall_seconds();
        run();
        const double stop = wall_seconds();
        if (timed) seconds.push_back(stop - start);
    });
    return seconds;
}

// The median of a set of timed repeats, and the fastest and slowest of them:
// how far one run may stray from the median.
struct RepeatSummary {
    double median = not_measured;
    double fastest = not_measured;
    double slowest = not_measured;
};

inline RepeatSummary summarize(const std::vector<double>& seconds) {
    RepeatSummary summary;
    summary.median = median(seconds);
    if (!seconds.empty()) {
        summary.fastest = *std::min_element(seconds.begin(), seconds.end());
        summary.slowest = *std::max_element(seconds.begin(), seconds.end());
    }
    return summary;
}

// LAPACK's convention for square LU: 2/3 n^3 flops (the lower-order terms are left out).
inline double lu_gflops(int n, double seconds) {
    const double nd = n;
    return seconds > 0.0 ? (2.0 / 3.0) * nd * nd * nd / seconds * 1e-9 : not_measured;
}

}  // namespace tandem_bench

#endif
