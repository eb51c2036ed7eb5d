// The performance model of this machine (scheduler/performance_model.hpp):
// measured once by a short calibration at the first call that needs it, kept
// for the process, and stored under the cache directory in a file named after
// the machine's fingerprint (CPU model, OpenMP threads, CPU panel method, the
// device's name, SM count and driver), so later processes read it back. A
// missing, corrupt or foreign file means a new calibration, never an error.
#ifndef TANDEM_SRC_MODEL_CACHE_HPP
#define TANDEM_SRC_MODEL_CACHE_HPP

#include <array>
#include <optional>
#include <string>

#include "scheduler/calibration.hpp"
#include "scheduler/device.hpp"
#include "scheduler/performance_model.hpp"
#include "scheduler/step_planner.hpp"
#include "tandem/tandem.hpp"

namespace tandem::detail {

// What the model depends on: "cpu=<model> threads=<n> panel=<method> device=<fingerprint>".
std::string machine_fingerprint(const Device& device, PanelMethod method);

// <cache_dir>/model-<16 hex digits of the fingerprint's FNV-1a hash>.txt
std::string model_cache_path(const std::string& cache_dir, const std::string& fingerprint);

struct ModelSource {
    PerformanceModel model;
    std::string origin;  // "memory", "file <path>", or "calibrated (...)"
};

// The model for `device`: from this process's memory, else the cache file,
// else calibrated on `device` with `grid` (and written to the file).
// `recalibrate` measures again whatever is cached. `time_calls` (a CUDA
// device) also times whole small factorizations on the CPU and on the device
// for the automatic backend (PerformanceModel::cpu_calls, device_calls), and
// sgetrs's two routes with one right-hand side, kSeveralRhs and kManyRhs
// (cpu_solves, device_solves and their `several` and `many`).
ModelSource machine_model(Device& device, PanelMethod method, const std::string& cache_dir,
                          bool recalibrate = false, const CalibrationGrid& grid = {},
                          bool time_calls = false);

// plan_steps(model, request), kept for the process per model fingerprint and
// request: a program that factors matrices of one size over and over plans
// once (a plan takes about 1 ms at n = 32768). Forgotten with the models.
StepPlan machine_plan(const PerformanceModel& model, const StepPlanRequest& request);

// What a GPU model depends on besides the machine: the first GPU's ordinal
// and the Options that change its calls (CPU panel, device panel, SGEMM).
using CrossoverKey = std::array<int, 4>;
// The smallest order at which the calibration times sgetrs's two routes
// (PerformanceModel::cpu_solves, device_solves and their `several` and `many`).
constexpr int64_t kSmallestTimedSolve = 64;

// The automatic backend's crossovers from the model: PerformanceModel's
// cpu_crossover_n() (sgetrf) and solve_crossover_n() (sgetrs with 1,
// kSeveralRhs and kManyRhs right-hand sides; INT64_MAX: not timed).
struct Crossovers {
    int64_t factor = 0;
    int64_t solve = 0;
    int64_t solve_several = 0;
    int64_t solve_many = 0;
};
// Those remembered for `key` in this process (remember_crossovers), if any:
// the automatic backend's choice without a device or a model at hand.
std::optional<Crossovers> known_crossovers(const CrossoverKey& key);
void remember_crossovers(const CrossoverKey& key, const Crossovers& crossovers);

// Forgets the models and plans kept in this process (the files stay): the
// next call reads its file again. Part of tandem::release_resources().
void forget_machine_models();

}  // namespace tandem::detail

#endif  // TANDEM_SRC_MODEL_CACHE_HPP
