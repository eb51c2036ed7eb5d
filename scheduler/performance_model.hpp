// The measured performance model the blocking plan is made from: how long the
// CPU (with inv(L11)) and a device take to factor a panel of a given height and
// width, how fast
// a device's trailing update runs for a given panel width, what a device panel
// costs the update it runs beside, and the host <-> device bandwidth.
//
// Every figure is a measurement (scheduler/calibration.hpp takes them, once
// per machine; src/model_cache.cpp keeps them in the user's cache directory).
// Between measured points the model interpolates: log-log in the panel
// height, linearly in the width and in the update's size; outside the measured
// range it extrapolates from the nearest segment, with bounded slopes.
#ifndef TANDEM_SCHEDULER_PERFORMANCE_MODEL_HPP
#define TANDEM_SCHEDULER_PERFORMANCE_MODEL_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tandem {

struct PanelTiming {
    int64_t rows = 0;
    int width = 0;
    double seconds = 0.0;
};

// Trailing update C(size x size) -= A(size x width) * B(width x size) on one device.
struct UpdateTiming {
    int64_t size = 0;
    int width = 0;
    double seconds = 0.0;
};

// The whole n x n matrix factored by the device's own panel routine in one call.
struct WholeTiming {
    int64_t n = 0;
    double seconds = 0.0;
};

struct PerformanceModel {
    std::string fingerprint;  // the machine it was measured on (CPU, threads, device)
    std::vector<PanelTiming> cpu_panels;
    std::vector<PanelTiming> device_panels;
    std::vector<UpdateTiming> updates;
    // May be empty (then a plan never takes the matrix whole): sizes beyond
    // the measured ones are never predicted.
    std::vector<WholeTiming> device_whole;
    // Whole n x n factorizations of a matrix in host memory, timed call by call
    // for the automatic backend: LAPACK on the CPU (cpu_calls) and the device's
    // one-panel route, copies included (device_calls). Empty: not measured
    // (the device is always taken).
    std::vector<WholeTiming> cpu_calls;
    std::vector<WholeTiming> device_calls;
    // sgetrs's two routes with n x n factors in host memory and one
    // right-hand side, timed likewise: LAPACK's on the CPU (cpu_solves), and
    // the factors and B moved to the device and solved there (device_solves).
    // Empty: not measured.
    std::vector<WholeTiming> cpu_solves;
    std::vector<WholeTiming> device_solves;
    // The same two routes with kSeveralRhs right-hand sides: LAPACK's solve of
    // several columns is a multithreaded TRSM, not the one-column TRSV, and the
    // GPU's route costs not much more than with one, so their crossover lies
    // far lower (n = 575-877 against 3059 in calibrations on an H200 machine).
    static constexpr int kSeveralRhs = 16;
    std::vector<WholeTiming> cpu_solves_several;
    std::vector<WholeTiming> device_solves_several;
    // And with kManyRhs: LAPACK's time grows with their number far faster
    // than the GPU's route's, whose share is mostly the factors' upload.
    // Empty: not measured (a model of several right-hand sides only).
    static constexpr int kManyRhs = 256;
    std::vector<WholeTiming> cpu_solves_many;
    std::vector<WholeTiming> device_solves_many;
    // The two routes' tables timed with `timed_rhs` right-hand sides (1,
    // kSeveralRhs or kManyRhs; see timed_rhs_for).
    std::vector<WholeTiming>& cpu_solves_for(int timed_rhs);
    std::vector<WholeTiming>& device_solves_for(int timed_rhs);
    const std::vector<WholeTiming>& cpu_solves_for(int timed_rhs) const;
    const std::vector<WholeTiming>& device_solves_for(int timed_rhs) const;
    double transfer_bytes_per_second = 0.0;  // one direction, pinned host memory
    // One direction between the caller's (pageable) memory and the device: the
    // host itself copies through pinned buffers, so this is host time.
    double host_copy_bytes_per_second = 0.0;
    // Extra time of an update and a device panel run side by side, as a share
    // of the shorter of the two (0: perfectly concurrent, 1: serialised).
    double device_panel_interference = 1.0;
    double step_overhead_seconds = 20e-6;  // launches and host synchronisation per step

    double cpu_panel_seconds(int64_t rows, int width) const;
    double device_panel_seconds(int64_t rows, int width) const;
    // rows x cols x width trailing update (C -= A B) on one device.
    double update_seconds(int64_t rows, int64_t cols, int width) const;
    double transfer_seconds(double bytes) const;
    // The whole n x n matrix in one device panel: infinite beyond the measured
    // sizes, the smallest measured time below them.
    double device_whole_seconds(int64_t n) const;

    // Whether, for an n x n matrix, the single call on the whole matrix was
    // timed (at n or below, and not only above) while no trailing update as
    // small as n was: the step model would only extrapolate there.
    bool only_whole_call_timed_at(int64_t n) const;

    // The size from which the device's call is faster than LAPACK's on the
    // CPU (log-log between the sizes measured for both; beyond the largest the
    // device's advantage is taken to hold): the automatic backend factors
    // matrices of fewer flops than an n x n one on the CPU. 0 when the calls
    // were not measured or the device wins at every measured size.
    int64_t cpu_crossover_n() const;
    // The same for the solve's routes: the order from which the device's route
    // solves one right-hand side faster than LAPACK; 0 when it won at every
    // size measured; INT64_MAX when the solves were not measured. Beyond the
    // largest size measured the device is taken, as for the calls: there the
    // factors outgrow the CPU's caches, and LAPACK's solve slows more than
    // the upload (4096 -> 8192 on an H200 machine: 4.5 -> 24.1 ms against
    // 2.4 -> 7.4 ms). `timed_rhs`: 1, kSeveralRhs or kManyRhs, whose tables
    // are taken (INT64_MAX where they are empty).
    int64_t solve_crossover_n(int timed_rhs = 1) const;
    int64_t solve_crossover_n(bool) const = delete;  // a count, not a flag
    // Which of those timed counts stands for `nrhs` right-hand sides: 1 for
    // one (LAPACK's one-column solve), kSeveralRhs for 2 .. 63 (its TRSM),
    // kManyRhs from 64, the geometric mean of the two.
    static int timed_rhs_for(int64_t nrhs);

    // Whether every table has samples and every figure is positive and finite.
    bool complete() const;

    // A line-oriented text form ("key value..." lines) and back; parse returns
    // nothing for text that is not a complete model.
    std::string serialize() const;
    static std::optional<PerformanceModel> parse(const std::string& text);
    // Whether `text` is a model of another version of this format (another
    // header number): such a model is measured again, not read.
    static bool of_another_format(const std::string& text);
};

// The model's queries with its tables sorted and taken to logs once: the
// planner asks thousands of them per plan (several ms when each query sorts
// the samples again). Same figures as PerformanceModel's own methods, which
// build one of these per query. Borrows nothing: the model may go away.
class ModelLookup {
public:
    explicit ModelLookup(const PerformanceModel& model);
    double cpu_panel_seconds(int64_t rows, int width) const;
    double device_panel_seconds(int64_t rows, int width) const;
    double update_seconds(int64_t rows, int64_t cols, int width) const;

    struct PanelCurve {  // one measured width: (log rows, log seconds), sorted
        int width = 0;
        std::vector<std::pair<double, double>> log_points;
        double at(int64_t rows) const;
    };
    struct RateCurve {  // one measured width: (size, flop/s) and (log size, flop/s), sorted
        int width = 0;
        std::vector<std::pair<double, double>> points, log_points;
        double at(double size) const;
    };

private:
    std::vector<PanelCurve> cpu_panels_, device_panels_;  // increasing width
    std::vector<RateCurve> rates_;
};

}  // namespace tandem

#endif  // TANDEM_SCHEDULER_PERFORMANCE_MODEL_HPP
