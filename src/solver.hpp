// One call's worth of work on column-major data, on the backend the options
// choose: LAPACK on the CPU, or the hybrid LU on GPU or host devices. The
// entry points (api.cpp) check arguments and convert layouts around it.
#ifndef TANDEM_SRC_SOLVER_HPP
#define TANDEM_SRC_SOLVER_HPP

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/hybrid_lu.hpp"
#include "src/backend.hpp"
#include "src/checks.hpp"
#include "src/model_cache.hpp"

namespace tandem::detail {

class Solver {
public:
    // `start`: when the call began, the origin of the report's timeline.
    explicit Solver(const Options& options,
                    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now());
    ~Solver();

    // P A = L U in place (column-major, lda >= m). Returns info >= 0.
    int factor(int64_t m, int64_t n, float* a, int64_t lda, int* ipiv, Report& report);

    // The _gpu routines: checks that each array (pointer, argument position;
    // a null pointer is skipped) is memory the backend's devices work in (one
    // usable GPU's, the first array's, for gpu; host memory for the emulated
    // host devices), takes that GPU alone and waits for the work issued to it
    // so far. From then on nothing is streamed (nothing crosses the bus) and
    // nothing falls back to the CPU. info -position for the first array that
    // is not; throws TANDEM_ERROR_BACKEND_UNAVAILABLE for backend cpu.
    CheckResult use_device_memory(const char* routine,
                                  std::initializer_list<std::pair<const float*, int>> arrays);
    // P A = L U of a column-major matrix in that memory, in place; the host
    // never reads or writes `a`. After use_device_memory.
    int factor_in_device_memory(int64_t m, int64_t n, float* a, int64_t lda, int* ipiv,
                                Report& report);
    // op(A) X = B with column-major factors and B in that memory (sgetrs_gpu).
    void solve_in_device_memory(char trans, int64_t n, int64_t nrhs, const float* a, int64_t lda,
                                const int* ipiv, float* b, int64_t ldb, Report& report);

    // op(A) X = B (column-major) with the factors in a/ipiv; after factor() of a
    // square matrix the factors already on the devices are used instead (on
    // several devices, by block columns, while X's trips between them move
    // less than the factors: HybridLU::solve_moves_less_than_factors).
    // Otherwise it runs on the chosen backend's first device, except that
    // backend automatic solves on the CPU below solve_crossover(n, nrhs)
    // (unless the factors came from several devices), and factors from a CPU
    // fallback are solved on the CPU. Factors from several devices
    // go to the first one whole then (the CPU takes over if they do not fit
    // there).
    void solve(char trans, int64_t n, int64_t nrhs, const float* a, int64_t lda,
               const int* ipiv, float* b, int64_t ldb, Report& report);

    // With a model that timed one-column solves but not the count of
    // right-hand sides a call takes (PerformanceModel::timed_rhs_for) nor 16,
    // the automatic backend solves this many or more on the GPU from n =
    // kSmallestTimedSolve.
    static constexpr int64_t kMinRhsForDeviceSolve = 16;

    // Whether factor(m, n) would run LAPACK on the CPU: backend cpu, or the
    // automatic backend below its measured crossover.
    bool factors_on_cpu(int64_t m, int64_t n);
    // The first device of the backend (gpu or host), leased now if not yet.
    Device& first_device();
    // Gives the devices back (another Solver of this thread may then lease
    // them: the GPU lease is exclusive); the next call leases them again.
    void release_devices();

    // The plan a factor(m, n, ...) would follow, as text (see tandem::describe_plan).
    std::string describe_plan(int64_t m, int64_t n);

private:
    // `plan` receives the plan as text, `predicted_seconds` (when given) the
    // model's time for its steps (0 where no model planned them).
    HybridSettings hybrid_settings(int64_t m, int64_t n, const std::vector<Device*>& devices,
                                   std::string& plan, double* predicted_seconds = nullptr);
    int factor_on_cpu(int64_t m, int64_t n, float* a, int64_t lda, int* ipiv, Report& report);
    // A plan of one device panel, run by `factor` (returns info); the report
    // gets its one step and its time.
    template <class Factor>
    int run_one_panel(Report& report, Device& device, int64_t m, int64_t n, Factor&& factor);
    void solve_on_cpu(char op, int64_t n, int64_t nrhs, const float* a, int64_t lda,
                      const int* ipiv, float* b, int64_t ldb, Report& report);
    // The automatic backend's crossover (PerformanceModel::cpu_crossover_n),
    // from the process's memory or, at the first call, the machine's model.
    int64_t cpu_crossover();
    // The automatic backend's crossovers (model_cache.hpp), from the
    // process's memory or the first device's model.
    Crossovers crossovers();
    // The order from which the automatic backend solves nrhs right-hand sides
    // with host factors on the GPU (PerformanceModel::solve_crossover_n of the
    // count timed nearest to nrhs: 1, 16 or 256; never below kSmallestTimedSolve),
    // INT64_MAX for the CPU at every order: below
    // kSmallestTimedSolve (the GPU is not consulted), where the model timed no
    // solves, or where the GPU lacked the memory for its model (may_fall_back).
    // Writes the choice into the report of a call that factored nothing.
    int64_t solve_crossover(int64_t n, int64_t nrhs, Report& report);
    // Whether the automatic backend weighs the CPU against the GPU for this call.
    bool automatic_may_take_cpu() const;
    // An out-of-memory error that the options let tandem answer on the CPU.
    bool may_fall_back(const Error& e) const;
    // The machine's model for the lease's devices[0] (machine_model, with the
    // lease's cache directory), remembering whether this call calibrated it;
    // note_calibration adds that to the report's message.
    ModelSource model_for(Device& device, PanelMethod method);
    // The call's devices, leased on first use (released by release_devices).
    DeviceLease& lease() {
        if (!lease_) lease_ = std::make_unique<DeviceLease>(choice_);
        return *lease_;
    }
    void note_calibration(Report& report) const;

    Options options_;
    std::chrono::steady_clock::time_point created_;  // the call's start
    BackendChoice choice_;
    std::unique_ptr<DeviceLease> lease_;
    std::unique_ptr<HybridLU> hybrid_;
    bool factors_on_device_ = false;  // factor() left square LU factors on its devices
    bool factors_kept_ = false;       // ... in its column-major copy (one panel, host memory)
    bool fell_back_ = false;          // the last factor() fell back to the CPU
    bool factored_on_cpu_ = false;    // ... or the automatic backend gave it to the CPU
    bool factored_ = false;           // factor() ran (sgesv): the report keeps its backend
    std::string calibrated_;          // how this call calibrated a model (its origin), or ""
};

// Useful flops of an m x n LU (2/3 n^3 for square) and of a solve with nrhs columns.
double getrf_flops(int64_t m, int64_t n);
double getrs_flops(int64_t n, int64_t nrhs);

}  // namespace tandem::detail

#endif
