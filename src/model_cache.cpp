#include "src/model_cache.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "scheduler/cpu_backend.hpp"
#include "scheduler/cpu_panel.hpp"
#include "src/backend.hpp"
#include "scheduler/cache_file.hpp"

namespace tandem::detail {
namespace {

constexpr size_t kMaxModelBytes = 1 << 20;

// Read once: every GPU call asks for the fingerprint.
const std::string& cpu_model_name() {
    static const std::string name = [] {
        std::ifstream in("/proc/cpuinfo");
        std::string line;
        while (std::getline(in, line))
            if (line.rfind("model name", 0) == 0) {
                const size_t colon = line.find(':');
                return colon == std::string::npos ? line : line.substr(colon + 2);
            }
        return std::string("unknown CPU");
    }();
    return name;
}

const char* method_name(PanelMethod method) {
    return method == PanelMethod::lapack ? "lapack" : "recursive";
}

// Guards the kept models, plans and per-device locks; never held during file
// I/O or a calibration (machine_model).
std::mutex memo_mutex;
// The crossovers known in this process, by configuration (crossover_mutex).
std::mutex crossover_mutex;
std::map<CrossoverKey, Crossovers>& crossovers() {
    static std::map<CrossoverKey, Crossovers> known;
    return known;
}
std::map<std::string, PerformanceModel>& memo() {
    static std::map<std::string, PerformanceModel> models;
    return models;
}

// Plans by "<model fingerprint>|<request>" (memo_mutex); bounded, as the sizes
// a program asks for need not be few.
constexpr size_t kMaxPlans = 64;
std::map<std::string, StepPlan>& plans() {
    static std::map<std::string, StepPlan> kept;
    return kept;
}

std::string plan_key(const PerformanceModel& model, const StepPlanRequest& r) {
    std::string key = model.fingerprint + "|" + std::to_string(r.m) + " " + std::to_string(r.n) +
                      " " + std::to_string(r.num_devices) + " " + std::to_string(r.block_size) +
                      " " + std::to_string(static_cast<int>(r.placement)) + " " +
                      std::to_string(r.streamed) + " " + std::to_string(r.peer_panels) + " " +
                      std::to_string(r.whole_call_hides_copies) + " w";
    for (int w : r.candidate_widths) key += " " + std::to_string(w);
    return key;
}

// Seconds of `run`, the median of `repeats` after one untimed run (which
// also grows the device's buffers), each after an untimed `prepare`.
template <class Prepare, class Run>
double median_seconds(int repeats, Prepare&& prepare, Run&& run) {
    std::vector<double> seconds;
    for (int r = 0; r <= repeats; ++r) {
        prepare();
        const auto t0 = std::chrono::steady_clock::now();
        run();
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (r > 0) seconds.push_back(s);
    }
    std::sort(seconds.begin(), seconds.end());
    return seconds[seconds.size() / 2];
}

// Seconds of one factorization by `factor` of a copy of `source` (n x n).
template <class Factor>
double time_call(const std::vector<float>& source, int64_t n, int repeats, Factor&& factor) {
    std::vector<float> a(source.size());
    std::vector<int> ipiv(static_cast<size_t>(n));
    return median_seconds(
        repeats, [&] { std::copy(source.begin(), source.end(), a.begin()); },
        [&] { factor(a.data(), ipiv.data()); });
}

// An n x n matrix of uniform random entries in [-0.5, 0.5) from `seed`, n
// added to its diagonal: no order is singular.
std::vector<float> diagonally_dominant(int64_t n, uint64_t seed) {
    std::vector<float> a(static_cast<size_t>(n * n));
    uint64_t state = seed + static_cast<uint64_t>(n);
    for (float& x : a) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        x = static_cast<float>((state >> 40) * (1.0 / (1ull << 24))) - 0.5f;
    }
    for (int64_t i = 0; i < n; ++i) a[static_cast<size_t>(i * n + i)] += static_cast<float>(n);
    return a;
}

// The automatic backend's choice between LAPACK on the CPU and the device for
// small matrices: both timed call by call, as a caller sees them, from n = 16
// up in powers of two until the device has won at two sizes in a row (or
// n = kLargestCall). Uniform random entries, diagonally dominant (no size is
// singular). On the H100 machine it stopped at n = 512, and the timed calls took 40 ms.
void time_whole_calls(Device& device, PerformanceModel& model) {
    constexpr int64_t kLargestCall = 4096;
    int device_wins = 0;
    for (int64_t n = 16; n <= kLargestCall && device_wins < 2; n *= 2) {
        const std::vector<float> source = diagonally_dominant(n, 0x2545F4914F6CDD1Dull);
        const int repeats = n <= 512 ? 7 : 3;
        const int ni = static_cast<int>(n);
        const double cpu = time_call(source, n, repeats, [&](float* a, int* ipiv) {
            lapack_getrf(ni, ni, a, ni, ipiv);
        });
        const double gpu = time_call(source, n, repeats, [&](float* a, int* ipiv) {
            device.factor_host_column_major(n, n, a, n, ipiv);
        });
        model.cpu_calls.push_back({n, cpu});
        model.device_calls.push_back({n, gpu});
        device_wins = gpu < cpu ? device_wins + 1 : 0;
    }
}

// sgetrs's choice for factors in host memory (Solver::solve): LAPACK's
// sgetrs where they are, or the factors and B moved to the device and solved
// there, with one right-hand side, PerformanceModel::kSeveralRhs and
// kManyRhs, timed call by call from n = kSmallestTimedSolve up in powers of
// two until the device has won at two sizes in a row with one (or n =
// kLargestSolve; with more it wins sooner); beyond, the device is taken
// (PerformanceModel::solve_crossover_n).
void time_solve_calls(Device& device, PerformanceModel& model) {
    constexpr int64_t kLargestSolve = 4096;
    int device_wins = 0;
    for (int64_t n = kSmallestTimedSolve; n <= kLargestSolve && device_wins < 2; n *= 2) {
        std::vector<float> factors = diagonally_dominant(n, 0x9E3779B97F4A7C15ull);
        const int ni = static_cast<int>(n);
        std::vector<int> ipiv(static_cast<size_t>(n));
        lapack_getrf(ni, ni, factors.data(), ni, ipiv.data());
        for (const int nrhs : {1, PerformanceModel::kSeveralRhs, PerformanceModel::kManyRhs}) {
            const std::vector<float> rhs(static_cast<size_t>(n * nrhs), 1.0f);
            std::vector<float> b(rhs.size());
            auto time_solve = [&](auto&& solve) {
                return median_seconds(7, [&] { std::copy(rhs.begin(), rhs.end(), b.begin()); },
                                      solve);
            };
            // As the automatic backend runs it (OpenBLAS's threads for these
            // counts: cpu/lapack_path.cpp).
            const double cpu = time_solve([&] {
                lapack_getrs('N', ni, nrhs, factors.data(), ni, ipiv.data(), b.data(), ni,
                             LapackThreads::by_size);
            });
            const double gpu = time_solve([&] {
                solve_host_factors_on_device(device, 'N', n, nrhs, factors.data(), n, ipiv.data(),
                                             b.data(), n);
            });
            model.cpu_solves_for(nrhs).push_back({n, cpu});
            model.device_solves_for(nrhs).push_back({n, gpu});
            if (nrhs == 1) device_wins = gpu < cpu ? device_wins + 1 : 0;
        }
    }
}

}  // namespace

std::string machine_fingerprint(const Device& device, PanelMethod method) {
    return "cpu=" + cpu_model_name() + " threads=" + std::to_string(omp_get_max_threads()) +
           " panel_team=" + std::to_string(cpu_panel_team_size()) + " panel=" + method_name(method) +
           " device=" + device.fingerprint();
}

std::string model_cache_path(const std::string& cache_dir, const std::string& fingerprint) {
    uint64_t hash = 1469598103934665603ull;  // FNV-1a: stable across compilers and runs
    for (unsigned char c : fingerprint) hash = (hash ^ c) * 1099511628211ull;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
    return cache_dir + "/model-" + hex + ".txt";
}

namespace {

// The model kept in this process for `fingerprint`, if any (memo_mutex).
std::optional<PerformanceModel> remembered_model(const std::string& fingerprint) {
    const std::lock_guard<std::mutex> lock(memo_mutex);
    const auto found = memo().find(fingerprint);
    if (found == memo().end()) return std::nullopt;
    return found->second;
}

void remember_model(const std::string& fingerprint, const PerformanceModel& model) {
    const std::lock_guard<std::mutex> lock(memo_mutex);
    memo()[fingerprint] = model;
    plans().clear();  // made from the model this one replaces
}

// One lock a device kind (Device::fingerprint): the callers that need a model
// for it read the file or calibrate one at a time, and a calibration, which
// runs the device's queues, never shares the device with another. memo_mutex
// guards the tables only and is never held while a file is read or a device
// calibrated, so that other devices' calls, plans and release_resources() go
// on meanwhile.
std::shared_ptr<std::mutex> device_model_lock(const std::string& device_fingerprint) {
    static std::map<std::string, std::shared_ptr<std::mutex>> locks;  // memo_mutex
    const std::lock_guard<std::mutex> lock(memo_mutex);
    std::shared_ptr<std::mutex>& l = locks[device_fingerprint];
    if (!l) l = std::make_shared<std::mutex>();
    return l;
}

}  // namespace

ModelSource machine_model(Device& device, PanelMethod method, const std::string& cache_dir,
                          bool recalibrate, const CalibrationGrid& grid, bool time_calls) {
    const std::string fingerprint = machine_fingerprint(device, method);
    if (!recalibrate)
        if (auto model = remembered_model(fingerprint)) return {*model, "memory"};
    const std::shared_ptr<std::mutex> device_lock = device_model_lock(device.fingerprint());
    const std::lock_guard<std::mutex> one_at_a_time(*device_lock);
    if (!recalibrate)  // another caller may have read or measured it meanwhile
        if (auto model = remembered_model(fingerprint)) return {*model, "memory"};
    const std::string path = cache_dir.empty() ? "" : model_cache_path(cache_dir, fingerprint);
    std::string why = "recalibration asked for";
    if (!recalibrate && !path.empty()) {
        std::string text;
        if (read_cache_file(path, kMaxModelBytes, text, why)) {
            const auto model = PerformanceModel::parse(text);
            if (model && model->fingerprint == fingerprint) {
                remember_model(fingerprint, *model);
                return {*model, "file " + path};
            }
            why = path + (PerformanceModel::of_another_format(text)
                              ? " holds a model of another format"
                              : " is malformed or for another machine");
        }
    }
    PerformanceModel model = calibrate(device, method, grid, fingerprint);
    if (time_calls) {
        time_whole_calls(device, model);
        time_solve_calls(device, model);
    }
    std::string error;
    std::string origin = "calibrated (" + why + ")";
    if (!path.empty()) {
        if (write_cache_file(path, model.serialize(), error))
            origin += ", saved to " + path;
        else
            origin += ", not saved: " + error;
    }
    remember_model(fingerprint, model);
    return {model, origin};
}

StepPlan machine_plan(const PerformanceModel& model, const StepPlanRequest& request) {
    const std::string key = plan_key(model, request);
    {
        const std::lock_guard<std::mutex> lock(memo_mutex);
        const auto found = plans().find(key);
        if (found != plans().end()) return found->second;
    }
    StepPlan plan = plan_steps(model, request);
    const std::lock_guard<std::mutex> lock(memo_mutex);
    if (plans().size() >= kMaxPlans) plans().clear();
    plans()[key] = plan;
    return plan;
}

std::optional<Crossovers> known_crossovers(const CrossoverKey& key) {
    const std::lock_guard<std::mutex> lock(crossover_mutex);
    const auto found = crossovers().find(key);
    if (found == crossovers().end()) return std::nullopt;
    return found->second;
}

void remember_crossovers(const CrossoverKey& key, const Crossovers& crossovers_of_key) {
    const std::lock_guard<std::mutex> lock(crossover_mutex);
    crossovers()[key] = crossovers_of_key;
}

void forget_machine_models() {
    {
        const std::lock_guard<std::mutex> lock(crossover_mutex);
        crossovers().clear();
    }
    const std::lock_guard<std::mutex> lock(memo_mutex);
    memo().clear();
    plans().clear();
}

}  // namespace tandem::detail
