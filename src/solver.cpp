#include "src/solver.hpp"

#include <algorithm>
#include <cmath>
#include <new>
#include <string>

#include "scheduler/blocking_plan.hpp"
#include "scheduler/cpu_backend.hpp"
#include "scheduler/step_planner.hpp"
#include "src/model_cache.hpp"

namespace tandem::detail {

Solver::Solver(const Options& options, std::chrono::steady_clock::time_point start)
    : options_(options), created_(start), choice_(choose_backend(options)) {}

Solver::~Solver() = default;

namespace {

// Backend::cpu is the caller's LAPACK as configured; where tandem chose the
// CPU for the GPU backend (below a crossover, or a fallback), small solves of
// a few right-hand sides take one thread (cpu/lapack_path.cpp says which).
LapackThreads lapack_threads(Backend chosen) {
    return chosen == Backend::gpu ? LapackThreads::by_size : LapackThreads::as_configured;
}

}  // namespace

int Solver::factor_on_cpu(int64_t m, int64_t n, float* a, int64_t lda, int* ipiv,
                          Report& report) {
    report.backend = Backend::cpu;
    report.device = lapack_name();
    return lapack_getrf(static_cast<int>(m), static_cast<int>(n), a, static_cast<int>(lda), ipiv);
}

bool Solver::may_fall_back(const Error& e) const {
    // Never once the hybrid run has written to A: the CPU would factor a mix.
    return e.code() == TANDEM_ERROR_OUT_OF_MEMORY && !choice_.explicit_request &&
           options_.allow_cpu_fallback && !(hybrid_ && hybrid_->wrote_output());
}

namespace {

// The plan is a single panel over all min(m, n) columns, factored on the device.
bool one_device_panel(const HybridSettings& s, int64_t m, int64_t n) {
    const int64_t k = std::min(m, n);
    const bool one_step =
        s.widths.empty() ? s.block_size >= k : (s.widths.size() == 1 && s.widths[0] >= k);
    return one_step && s.sites.size() == 1 && s.sites[0] == PanelSite::device;
}

// "NVIDIA H200 #0", or "NVIDIA H200 #0 (+1)" for two devices.
std::string devices_name(const std::vector<Device*>& devices) {
    return devices[0]->name() +
           (devices.size() > 1 ? " (+" + std::to_string(devices.size() - 1) + ")" : "");
}

}  // namespace

// The hybrid run's settings from Options, with the panel widths and sites. On
// a GPU these come from the machine's measured model (calibrated at the first
// call) unless Options fix both; emulated host devices have no speed worth
// modelling: their panels go where Options::placement says (automatic = CPU),
// with one width.
HybridSettings Solver::hybrid_settings(int64_t m, int64_t n, const std::vector<Device*>& devices,
                                       std::string& plan, double* predicted_seconds) {
    HybridSettings settings;
    if (predicted_seconds != nullptr) *predicted_seconds = 0.0;
    settings.block_size = options_.block_size > 0
                              ? options_.block_size
                              : default_block_size(m, n, choice_.backend == Backend::gpu);
    settings.lookahead = options_.lookahead;
    settings.inverse_threshold = options_.inverse_threshold;
    settings.panel = options_.panel;
    settings.stream_matrix = options_.stream_matrix;
    settings.peer_panels = options_.peer_copies;
    const int num_devices = static_cast<int>(devices.size());
    const bool forced = options_.placement != PanelPlacement::automatic && options_.block_size > 0;
    if (choice_.backend == Backend::gpu && !forced) {
        const PanelMethod method =
            options_.panel == PanelMethod::lapack ? PanelMethod::lapack : PanelMethod::recursive;
        const ModelSource source = model_for(*devices[0], method);
        StepPlanRequest request;
        request.m = m;
        request.n = n;
        request.num_devices = num_devices;
        request.block_size = options_.block_size;
        request.candidate_widths = candidate_widths_up_to(options_.max_block_size);
        request.placement = options_.placement;
        request.streamed = options_.stream_matrix;
        request.peer_panels = options_.peer_copies && devices_read_each_other(devices);
        request.whole_call_hides_copies =
            options_.stream_matrix && num_devices == 1 && devices[0]->hides_host_copies(m, n);
        const StepPlan steps = machine_plan(source.model, request);
        settings.widths = steps.widths;
        settings.sites = steps.sites;
        settings.panels_before_update = steps.panels_before_update;
        plan = "model: " + source.origin + "\n" + steps.describe();
        if (predicted_seconds != nullptr) *predicted_seconds = steps.predicted_seconds;
        return settings;
    }
    BlockingPlan blocking(m, n, settings.block_size, num_devices);
    if (options_.placement == PanelPlacement::device) {
        settings.sites.assign(static_cast<size_t>(blocking.steps()), PanelSite::device);
        blocking.set_panel_sites(settings.sites);
    }
    plan = blocking.describe();
    return settings;
}

Crossovers Solver::crossovers() {
    const PanelMethod method =
        options_.panel == PanelMethod::lapack ? PanelMethod::lapack : PanelMethod::recursive;
    const CrossoverKey key = {choice_.first_device, static_cast<int>(method),
                              static_cast<int>(choice_.device_panel), static_cast<int>(choice_.gemm)};
    if (const std::optional<Crossovers> known = known_crossovers(key)) return *known;
    const PerformanceModel model = model_for(*lease().devices()[0], method).model;
    const Crossovers measured{model.cpu_crossover_n(), model.solve_crossover_n(),
                              model.solve_crossover_n(PerformanceModel::kSeveralRhs),
                              model.solve_crossover_n(PerformanceModel::kManyRhs)};
    remember_crossovers(key, measured);
    return measured;
}

int64_t Solver::cpu_crossover() { return crossovers().factor; }

ModelSource Solver::model_for(Device& device, PanelMethod method) {
    ModelSource source = machine_model(device, method, lease().cache_dir(), false, {}, true);
    if (source.origin.rfind("calibrated", 0) == 0) calibrated_ = source.origin;
    return source;
}

// The first GPU call on a machine (or with no writable cache) measures the
// machine for seconds: the call says so, in its one-line message.
void Solver::note_calibration(Report& report) const {
    if (calibrated_.empty()) return;
    if (!report.message.empty()) report.message += "; ";
    report.message += "performance model " + calibrated_;
}

namespace {

// An m x n LU of fewer flops than a square one of order `crossover` (the
// calls were timed on square matrices).
bool below_crossover(int64_t m, int64_t n, int64_t crossover) {
    return std::cbrt(1.5 * getrf_flops(m, n)) < double(crossover);
}

// The solves that the crossovers of several and many right-hand sides timed.
constexpr const char* kSeveralSolves = "solves of 16 right-hand sides";
constexpr const char* kManySolves = "solves of 256 right-hand sides";
static_assert(PerformanceModel::kSeveralRhs == 16 && PerformanceModel::kManyRhs == 256,
              "the texts name the counts");

// `prefix` and "n = 512, where LAPACK's and the GPU's calls measured as fast"
// in `out`, reusing its room: the message of every small call of the automatic
// backend costs one allocation at most (none in a caller's reused Report).
void write_crossover_text(std::string& out, const char* prefix, int64_t crossover,
                          const char* what = "calls") {
    out.clear();
    out.reserve(128);
    out += prefix;
    out += "n = ";
    out += std::to_string(crossover);
    out += ", where LAPACK's and the GPU's ";
    out += what;
    out += " measured as fast";
}

}  // namespace

int64_t Solver::solve_crossover(int64_t n, int64_t nrhs, Report& report) {
    if (n < kSmallestTimedSolve) return INT64_MAX;
    int64_t crossover = INT64_MAX;
    const char* timed = "solves";  // the solves whose crossover is taken
    try {
        // One right-hand side takes LAPACK's one-column solve; several its
        // TRSM, whose crossover with the GPU's route lies far lower, and many
        // lower still: the crossover timed with the count nearest to nrhs.
        const Crossovers known = crossovers();
        const int count = PerformanceModel::timed_rhs_for(nrhs);
        crossover = known.solve;
        if (count == PerformanceModel::kManyRhs && known.solve_many != INT64_MAX) {
            crossover = known.solve_many;
            timed = kManySolves;
        } else if (count != 1 && known.solve_several != INT64_MAX) {
            crossover = known.solve_several;
            timed = kSeveralSolves;
        } else if (count != 1 && nrhs >= kMinRhsForDeviceSolve && crossover != INT64_MAX) {
            // A model without the timings of the count taken (nor of 16): the
            // GPU from kMinRhsForDeviceSolve right-hand sides, the one-column
            // crossover below.
            crossover = 0;
        }
    } catch (const Error& e) {
        // As for sgetrf: no memory on the GPU for its model lets LAPACK solve
        // (B is untouched), and the call says why; anything else is an error.
        if (!may_fall_back(e)) throw;
        if (!factored_) report.message = std::string("automatic: the CPU (") + e.what() + ")";
        return INT64_MAX;
    }
    const bool measured = crossover != INT64_MAX;
    const bool gpu_everywhere = crossover == 0;
    crossover = std::max(crossover, kSmallestTimedSolve);
    if (!factored_) {
        if (!measured)
            report.message = "automatic: the CPU (the machine's model times no solves)";
        else if (gpu_everywhere)
            report.message = "automatic: the GPU";
        else
            write_crossover_text(report.message,
                                 n >= crossover ? "automatic: the GPU, from "
                                                : "automatic: the CPU, below ",
                                 crossover, timed);
        note_calibration(report);
    }
    return crossover;
}

bool Solver::automatic_may_take_cpu() const {
    // Options that fix the plan (placement and panel width) ask for the
    // hybrid algorithm: such a call never consults the model.
    const bool plan_fixed = options_.placement != PanelPlacement::automatic && options_.block_size > 0;
    return choice_.backend == Backend::gpu && !choice_.explicit_request && !plan_fixed;
}

bool Solver::factors_on_cpu(int64_t m, int64_t n) {
    if (choice_.backend == Backend::cpu) return true;
    return automatic_may_take_cpu() && below_crossover(m, n, cpu_crossover());
}

Device& Solver::first_device() {
    const std::vector<Device*>& devices = lease().devices();
    if (devices.empty()) throw Error(TANDEM_ERROR_INTERNAL, "tandem: backend cpu has no device");
    return *devices[0];
}

void Solver::release_devices() {
    hybrid_.reset();
    lease_.reset();
    factors_on_device_ = factors_kept_ = false;
}

std::string Solver::describe_plan(int64_t m, int64_t n) {
    if (choice_.backend == Backend::cpu || m == 0 || n == 0)
        return std::string("backend cpu: ") + lapack_name() + " sgetrf\n";
    if (automatic_may_take_cpu()) {
        const int64_t crossover = cpu_crossover();
        if (below_crossover(m, n, crossover)) {
            std::string below;
            write_crossover_text(below, "automatic: below ", crossover);
            return std::string("backend cpu: ") + lapack_name() + " sgetrf (" + below + ")\n";
        }
    }
    const std::vector<Device*>& devices = lease().devices();
    std::string plan;
    hybrid_settings(m, n, devices, plan);
    return std::string("backend ") + backend_name(choice_.backend) + " on " +
           devices_name(devices) + "\n" + plan;
}

template <class Factor>
int Solver::run_one_panel(Report& report, Device& device, int64_t m, int64_t n, Factor&& factor) {
    const auto start = std::chrono::steady_clock::now();
    const int info = factor();
    const auto seconds = [&](std::chrono::steady_clock::time_point t) {
        return std::chrono::duration<double>(t - created_).count();
    };
    report.timeline = {{device.name() + " compute", "panel", 0, seconds(start),
                        seconds(std::chrono::steady_clock::now())}};
    report.steps = report.device_panel_steps = 1;
    report.block_size = static_cast<int>(std::min(m, n));
    report.inverse_steps = report.trsm_steps = 0;
    return info;
}

int Solver::factor(int64_t m, int64_t n, float* a, int64_t lda, int* ipiv, Report& report) {
    report.message = choice_.note;
    factors_on_device_ = factors_kept_ = false;
    fell_back_ = factored_on_cpu_ = false;
    factored_ = true;
    if (choice_.backend == Backend::cpu || m == 0 || n == 0)
        return factor_on_cpu(m, n, a, lda, ipiv, report);

    try {
        if (automatic_may_take_cpu()) {
            // The automatic backend: LAPACK on the CPU for matrices too small
            // for a GPU call to pay, from the calls timed at calibration.
            const int64_t crossover = cpu_crossover();
            if (below_crossover(m, n, crossover)) {
                lease_.reset();  // the GPUs are not needed: other callers may have them
                factored_on_cpu_ = true;
                const int info = factor_on_cpu(m, n, a, lda, ipiv, report);
                write_crossover_text(report.message, "automatic: the CPU, below ", crossover);
                note_calibration(report);
                return info;
            }
            if (crossover > 0)
                write_crossover_text(report.message, "automatic: the GPU, from ", crossover);
            else
                report.message = "automatic: the GPU";
        }
        try {
            const std::vector<Device*>& devices = lease().devices();
            const HybridSettings settings =
                hybrid_settings(m, n, devices, report.plan, &report.predicted_seconds);
            note_calibration(report);
            report.backend = choice_.backend;
            report.device = devices_name(devices);
            if (choice_.backend == Backend::gpu && devices.size() == 1 &&
                one_device_panel(settings, m, n)) {
                // One panel over the whole matrix: the GPU factors a plain
                // column-major copy, with no row-major storage to fill and drain.
                const int info = run_one_panel(report, *devices[0], m, n, [&] {
                    return devices[0]->factor_host_column_major(m, n, a, lda, ipiv);
                });
                report.plan += "the panel on a column-major copy of the matrix on the GPU";
                report.plan += devices[0]->last_host_call_hid_copies()
                                   ? ", its copies beside the factorization\n"
                                   : "\n";
                // The call's one span gives way to its parts' on the GPU's
                // queues; the factors are in A, so memory too short for them
                // keeps the one span rather than fail the call.
                try {
                    std::vector<TimelineSpan> parts = devices[0]->last_host_call_spans();
                    if (!parts.empty()) {
                        const double entered = report.timeline.front().start;
                        for (TimelineSpan& span : parts) {
                            span.start += entered;
                            span.end += entered;
                        }
                        report.timeline = std::move(parts);
                    }
                } catch (const std::bad_alloc&) {
                }
                factors_kept_ = m == n;
                return info;
            }
            hybrid_ = std::make_unique<HybridLU>(devices, settings);
            const int info = hybrid_->factor(m, n, a, lda, ipiv, report, created_);
            factors_on_device_ = m == n;
            return info;
        } catch (const std::bad_alloc&) {
            throw Error(TANDEM_ERROR_OUT_OF_MEMORY, "tandem: out of host memory in sgetrf");
        }
    } catch (const Error& e) {
        // A matrix too large for the GPU may still be factored on the CPU when
        // the caller left the choice to tandem. Nothing was written to a yet.
        if (!may_fall_back(e)) throw;
        hybrid_.reset();
        lease_.reset();
        fell_back_ = true;
        report.predicted_seconds = 0.0;  // the GPU's plan did not run
        const int info = factor_on_cpu(m, n, a, lda, ipiv, report);
        report.message = std::string("CPU fallback: ") + e.what();
        return info;
    }
}

CheckResult Solver::use_device_memory(const char* routine,
                                      std::initializer_list<std::pair<const float*, int>> arrays) {
    if (choice_.backend != Backend::gpu && choice_.backend != Backend::host)
        throw Error(TANDEM_ERROR_BACKEND_UNAVAILABLE,
                    std::string(routine) + ": backend cpu cannot reach GPU memory" +
                        (*choice_.note == '\0' ? std::string()
                                                : " (" + std::string(choice_.note) + ")"));
    int first = -1;  // the GPU of the first array
    for (const auto& [pointer, position] : arrays) {
        if (pointer == nullptr) continue;
        auto misplaced = [&, position = position](const std::string& what) {
            return CheckResult{-position, std::string(routine) + ": argument " +
                                              std::to_string(position) + " (" + what + ") is invalid"};
        };
        const int gpu = gpu_holding(pointer);
        if (choice_.backend == Backend::host) {
            if (gpu >= 0) return misplaced("GPU memory; backend host emulates devices in host memory");
            continue;
        }
        if (gpu < 0) return misplaced("not in GPU memory");
        if (gpu >= gpu_count())
            return misplaced("on CUDA device " + std::to_string(gpu) + ", which this build cannot run on");
        if (first < 0) first = gpu;
        if (gpu != first)
            return misplaced("on CUDA device " + std::to_string(gpu) + ", the first array on " +
                             std::to_string(first));
    }
    choice_.num_devices = 1;
    options_.stream_matrix = false;
    options_.allow_cpu_fallback = false;
    if (choice_.backend == Backend::gpu && first >= 0) {
        choice_.first_device = first;
        wait_for_gpu(first);  // the caller's writes to the arrays come first
    }
    // A lease taken before (the automatic backend's crossover asks a device)
    // may hold every GPU: the calls that follow want the one chosen here.
    if (lease_) release_devices();
    return {};
}

int Solver::factor_in_device_memory(int64_t m, int64_t n, float* a, int64_t lda, int* ipiv,
                                    Report& report) {
    report.message = choice_.note;
    report.backend = choice_.backend;
    factors_on_device_ = factors_kept_ = false;
    fell_back_ = false;
    factored_ = true;
    if (m == 0 || n == 0) return 0;
    try {
        const std::vector<Device*>& devices = lease().devices();
        HybridSettings settings =
            hybrid_settings(m, n, devices, report.plan, &report.predicted_seconds);
        note_calibration(report);
        report.device = devices_name(devices);
        if (choice_.backend == Backend::gpu && one_device_panel(settings, m, n)) {
            // The device's panel routine works on column-major matrices: on the
            // caller's, in place, it needs neither tandem's row-major copy nor
            // the four transposes around it.
            const int info = run_one_panel(report, *devices[0], m, n, [&] {
                return devices[0]->factor_column_major(m, n, a, lda, ipiv);
            });
            report.plan += "the panel on the caller's column-major matrix in place\n";
            return info;
        }
        settings.matrix_on_device = true;
        hybrid_ = std::make_unique<HybridLU>(devices, settings);
        return hybrid_->factor(m, n, a, lda, ipiv, report, created_);
    } catch (const std::bad_alloc&) {
        throw Error(TANDEM_ERROR_OUT_OF_MEMORY, "tandem: out of host memory in sgetrf_gpu");
    }
}

void Solver::solve_in_device_memory(char trans, int64_t n, int64_t nrhs, const float* a,
                                    int64_t lda, const int* ipiv, float* b, int64_t ldb,
                                    Report& report) {
    if (!factored_) {
        report.message = choice_.note;
        report.backend = choice_.backend;
    }
    if (n == 0 || nrhs == 0) return;
    if (choice_.backend == Backend::host) {  // "device memory" is host memory: LAPACK solves
        if (!factored_) report.device = "host #0";
        lapack_getrs(trans, static_cast<int>(n), static_cast<int>(nrhs), a, static_cast<int>(lda),
                     ipiv, b, static_cast<int>(ldb));
        return;
    }
    Device& device = *lease().devices()[0];
    if (!factored_) report.device = device.name();
    try {
        device.solve_column_major(trans, n, nrhs, a, lda, ipiv, b, ldb);
    } catch (const Error& e) {  // getrs works on B in place
        throw Error(e.code(), std::string(e.what()) + " (in the solve: B may be partially overwritten" +
                                  (factored_ ? "; A and ipiv hold the LU factors)" : ")"));
    }
}

void Solver::solve_on_cpu(char op, int64_t n, int64_t nrhs, const float* a, int64_t lda,
                          const int* ipiv, float* b, int64_t ldb, Report& report) {
    if (!factored_) {  // in sgesv the report names where the factorization ran
        report.backend = Backend::cpu;
        report.device = lapack_name();
    }
    lapack_getrs(op, static_cast<int>(n), static_cast<int>(nrhs), a, static_cast<int>(lda), ipiv,
                 b, static_cast<int>(ldb), lapack_threads(choice_.backend));
}

void Solver::solve(char trans, int64_t n, int64_t nrhs, const float* a, int64_t lda,
                   const int* ipiv, float* b, int64_t ldb, Report& report) {
    const char op = (trans == 'N' || trans == 'n') ? 'N' : 'T';
    if (n == 0 || nrhs == 0) return;
    // A device solve writes B in chunks: a failure part-way must say so.
    auto failed_in_device_solve = [](const Error& e) {
        return Error(e.code(), std::string(e.what()) +
                                   " (in the solve: B may be partially overwritten; A and ipiv "
                                   "hold the LU factors)");
    };
    if (factors_kept_ || (factors_on_device_ && hybrid_->solve_moves_less_than_factors(nrhs))) {
        try {
            if (factors_kept_)
                lease_->devices()[0]->solve_kept_factors(op, n, nrhs, ipiv, b, ldb);
            else
                hybrid_->solve(op, nrhs, b, ldb);
        } catch (const Error& e) {
            throw failed_in_device_solve(e);
        }
        return;
    }
    // The factors in a/ipiv: sgetrs's, or those of several GPUs (also in A)
    // for so many right-hand sides that X's trips between the GPUs would move
    // more than the factors. They go to a GPU when the caller asked for it,
    // when several GPUs factored them (uploading the factors to the first GPU
    // and solving there beat LAPACK's sgetrs on the host 4x even with one
    // right-hand side: n = 65536, two H200s, 0.44 s against 1.76 s, the two
    // solves timed alone), and, for the automatic backend, from the order where
    // the two routes measured as fast with the count of right-hand sides timed
    // nearest to nrhs, 1, 16 or 256 (solve_crossover). Never after a CPU fallback.
    const bool several_devices = lease_ && lease_->devices().size() > 1;
    factors_on_device_ = false;  // the upload below replaces the first device's columns
    const bool device_allowed = choice_.backend != Backend::cpu && !fell_back_ && !factored_on_cpu_;
    const bool automatic = device_allowed && choice_.backend == Backend::gpu &&
                           !choice_.explicit_request && !several_devices;
    bool on_device = device_allowed && (choice_.explicit_request || several_devices);
    if (automatic) {
        on_device = n >= solve_crossover(n, nrhs, report);
        if (!on_device && !factored_) lease_.reset();  // other callers may have the GPUs
    }
    if (!on_device) {
        solve_on_cpu(op, n, nrhs, a, lda, ipiv, b, ldb, report);
        return;
    }
    try {
        Device& device = *lease().devices()[0];
        if (!factored_) {
            report.backend = choice_.backend;
            report.device = device.name();
        }
        solve_host_factors_on_device(device, op, n, nrhs, a, lda, ipiv, b, ldb);
    } catch (const std::bad_alloc&) {
        throw Error(TANDEM_ERROR_OUT_OF_MEMORY, "tandem: out of host memory in sgetrs");
    } catch (const Error& e) {
        // Factors of several GPUs need not fit on one: then the CPU solves.
        const bool too_large_for_one =
            several_devices && e.code() == TANDEM_ERROR_OUT_OF_MEMORY && options_.allow_cpu_fallback;
        if (!may_fall_back(e) && !too_large_for_one) throw failed_in_device_solve(e);
        solve_on_cpu(op, n, nrhs, a, lda, ipiv, b, ldb, report);  // B untouched: allocate failed
        report.message = std::string("CPU fallback: ") + e.what();
    }
}

double getrf_flops(int64_t m, int64_t n) {
    const double big = static_cast<double>(std::max(m, n));
    const double small = static_cast<double>(std::min(m, n));
    return big * small * small - small * small * small / 3.0;
}

double getrs_flops(int64_t n, int64_t nrhs) {
    return 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(nrhs);
}

}  // namespace tandem::detail
