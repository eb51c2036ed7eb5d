#include "src/model_cache.hpp"

#include <omp.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>

#include "src/cache_file.hpp"

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

std::mutex memo_mutex;
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
                      std::to_string(r.streamed) + " " + std::to_string(r.peer_panels) + " w";
    for (int w : r.candidate_widths) key += " " + std::to_string(w);
    return key;
}

}  // namespace

std::string machine_fingerprint(const Device& device, PanelMethod method) {
    return "cpu=" + cpu_model_name() + " threads=" + std::to_string(omp_get_max_threads()) +
           " panel=" + method_name(method) + " device=" + device.fingerprint();
}

std::string model_cache_path(const std::string& cache_dir, const std::string& fingerprint) {
    uint64_t hash = 1469598103934665603ull;  // FNV-1a: stable across compilers and runs
    for (unsigned char c : fingerprint) hash = (hash ^ c) * 1099511628211ull;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
    return cache_dir + "/model-" + hex + ".txt";
}

ModelSource machine_model(Device& device, PanelMethod method, const std::string& cache_dir,
                          bool recalibrate, const CalibrationGrid& grid) {
    const std::string fingerprint = machine_fingerprint(device, method);
    const std::lock_guard<std::mutex> lock(memo_mutex);
    if (!recalibrate) {
        const auto found = memo().find(fingerprint);
        if (found != memo().end()) return {found->second, "memory"};
    }
    const std::string path = cache_dir.empty() ? "" : model_cache_path(cache_dir, fingerprint);
    std::string why = "recalibration asked for";
    if (!recalibrate && !path.empty()) {
        std::string text;
        if (read_cache_file(path, kMaxModelBytes, text, why)) {
            const auto model = PerformanceModel::parse(text);
            if (model && model->fingerprint == fingerprint) {
                memo()[fingerprint] = *model;
                plans().clear();
                return {*model, "file " + path};
            }
            why = path + " is malformed or for another machine";
        }
    }
    PerformanceModel model = calibrate(device, method, grid, fingerprint);
    std::string error;
    std::string origin = "calibrated (" + why + ")";
    if (!path.empty()) {
        if (write_cache_file(path, model.serialize(), error))
            origin += ", saved to " + path;
        else
            origin += ", not saved: " + error;
    }
    memo()[fingerprint] = model;
    plans().clear();  // made from the model this one replaces
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

void forget_machine_models() {
    const std::lock_guard<std::mutex> lock(memo_mutex);
    memo().clear();
    plans().clear();
}

}  // namespace tandem::detail
