// What one sweep measured, shared by the sweep, the table/CSV writer and the plot.
#ifndef TANDEM_BENCH_RESULTS_HPP
#define TANDEM_BENCH_RESULTS_HPP

#include <limits>
#include <string>
#include <vector>

namespace tandem_bench {

constexpr double not_measured = std::numeric_limits<double>::quiet_NaN();

// LAPACK's acceptance threshold for the scaled residual.
constexpr double residual_threshold = 30.0;

enum class RunStatus {
    ran,          // timed; the numbers below are valid
    skipped,      // deliberately not run (e.g. n > cpu-max-n); `note` says why
    unavailable,  // cannot run on this build or machine (e.g. no GPU)
    failed        // an error or info != 0; `note` has the message
};

// One implementation at one size.
struct Measurement {
    RunStatus status = RunStatus::unavailable;
    std::string note;                     // empty when status is ran
    double seconds = not_measured;        // median over the timed repeats
    double fastest = not_measured;        // the fastest and slowest timed repeat: how
    double slowest = not_measured;        // far one run may stray from the median
    double gflops = not_measured;         // 2/3 n^3 / seconds
    double residual = not_measured;       // estimate, see matrix_data.hpp
    double seconds_with_transfer = not_measured;  // cuSOLVER only: H2D + getrf + D2H
    double gflops_with_transfer = not_measured;
};

// A CPU panel's team was short of cores when one of its threads ran on a core
// for less than this share of the panel's time.
constexpr double kShortOfCoresShare = 0.9;

// One timed CPU panel of tandem's recursive panel (TimelineSpan's panel fields).
struct CpuPanelTime {
    long long rows = 0;
    int columns = 0;
    int threads = 0;
    double seconds = 0.0;  // the factorization's own (TimelineSpan::team_seconds)
    bool short_of_cores = false;  // a thread had under kShortOfCoresShare of it on a core
    long switches = 0;            // the team's involuntary context switches
    // Its seconds over its shape's factored alone after the timed runs (same
    // method, team and leading dimension; the median of 3).
    double alone_ratio = not_measured;
};

// What tandem's Report said about its last timed run at this size.
struct TandemDetails {
    std::string backend;  // the backend that ran
    std::string device;
    std::string message;  // e.g. why a fallback happened
    int block_size = 0;
    int steps = 0;
    int inverse_steps = 0;
    int trsm_steps = 0;
    int device_panel_steps = 0;
    std::string plan;     // tandem's panel widths and sites (gpu)
    double panel_seconds = 0.0;
    double panel_hidden_seconds = 0.0;
    double predicted_seconds = 0.0;  // Report::predicted_seconds (0: no model planned the call)
    // Every CPU panel of the timed runs with tandem's recursive panel.
    std::vector<CpuPanelTime> cpu_panel_times;
};

// A CPU panel inside a factorization is counted as slow beyond this multiple
// of the same panel's time alone.
constexpr double kCpuPanelAloneLimit = 1.5;

struct SizeResult {
    int n = 0;
    Measurement tandem;
    Measurement lapack;
    Measurement cusolver;
    Measurement cusolver_mg;  // cusolverMgGetrf on the --gpus GPUs (G >= 2), device-resident
    TandemDetails details;
};

inline bool ran(const Measurement& m) { return m.status == RunStatus::ran; }

// Whether cusolverMg was asked for (--gpus G >= 2 on a GPU backend): timed,
// failed, or unavailable with the reason.
inline bool cusolver_mg_asked(const SizeResult& r) {
    return r.cusolver_mg.status != RunStatus::unavailable || !r.cusolver_mg.note.empty();
}

// A residual that is NaN counts as too large: the factors are not trustworthy.
inline bool residual_too_large(const Measurement& m) {
    return ran(m) && !(m.residual <= residual_threshold);
}

}  // namespace tandem_bench

#endif
