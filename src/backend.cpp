#include "src/backend.hpp"

#include "src/model_cache.hpp"

#include <array>
#include <cctype>
#include <cstdlib>
#include <string>

#include "scheduler/cache_file.hpp"
#include "scheduler/cpu_backend.hpp"
#include "scheduler/gpu_backend.hpp"

namespace tandem {
namespace {

[[noreturn]] void unavailable(const std::string& what) {
    throw Error(TANDEM_ERROR_BACKEND_UNAVAILABLE, "tandem: " + what);
}

// TANDEM_BACKEND: auto | cpu | gpu | host | host:N, in any case, spaces
// anywhere ignored. Unset, empty or auto: no override.
bool parse_environment(Backend* backend, int* devices) {
    const char* env = std::getenv("TANDEM_BACKEND");
    if (env == nullptr) return false;
    std::string value;
    for (const char* c = env; *c != '\0'; ++c)
        if (!std::isspace(static_cast<unsigned char>(*c)))
            value += static_cast<char>(std::tolower(static_cast<unsigned char>(*c)));
    if (value.empty() || value == "auto" || value == "automatic") return false;
    if (value == "cpu") *backend = Backend::cpu;
    else if (value == "gpu") *backend = Backend::gpu;
    else if (value == "host") *backend = Backend::host;
    else if (value.rfind("host:", 0) == 0) {
        char* end = nullptr;
        const long count = std::strtol(value.c_str() + 5, &end, 10);
        if (end == value.c_str() + 5 || *end != '\0' || count < 1 || count > 64)
            unavailable("TANDEM_BACKEND='" + std::string(env) + "': N in host:N must be 1..64");
        *backend = Backend::host;
        *devices = static_cast<int>(count);
    } else {
        unavailable("TANDEM_BACKEND='" + std::string(env) + "' is not one of auto, cpu, gpu, host, host:N");
    }
    return true;
}

std::string gpu_missing_reason() { return "no usable CUDA device (" + gpu::unavailable_reason() + ")"; }

// The automatic backend's note on a machine without a usable GPU. The reason
// cannot change within a process (gpu::device_count), so it is made once.
const char* cpu_path_note() {
    static const std::string note = "CPU path: " + gpu_missing_reason();
    return note.c_str();
}

// The note when TANDEM_BACKEND chose, made once for each backend.
const char* environment_note(Backend backend) {
    static const std::array<std::string, 4> notes = [] {
        std::array<std::string, 4> made;
        for (const Backend b : {Backend::automatic, Backend::cpu, Backend::gpu, Backend::host})
            made[static_cast<size_t>(b)] = std::string("TANDEM_BACKEND selected ") + backend_name(b);
        return made;
    }();
    return notes[static_cast<size_t>(backend)].c_str();
}

}  // namespace

int gpu_count() { return gpu::device_count(); }

bool gpu_available() { return gpu_count() > 0; }

const char* backend_name(Backend backend) {
    switch (backend) {
        case Backend::automatic: return "auto";
        case Backend::cpu: return "cpu";
        case Backend::gpu: return "gpu";
        case Backend::host: return "host";
    }
    return "unknown";
}

const char* update_precision_name(UpdatePrecision precision) {
    switch (precision) {
        case UpdatePrecision::fp32: return "fp32";
        case UpdatePrecision::tf32x3: return "tf32x3";
        case UpdatePrecision::tf32: return "tf32";
        case UpdatePrecision::bf16: return "bf16";
    }
    return "unknown";
}

Backend resolve_backend(const Options& options) { return detail::choose_backend(options).backend; }

namespace detail {

int gpu_holding(const void* pointer) { return gpu::memory_device(pointer); }

bool host_cannot_read(const void* pointer) { return gpu::is_device_only_memory(pointer); }

void wait_for_gpu(int ordinal) { gpu::synchronize_device(ordinal); }

BackendChoice choose_backend(const Options& options) {
    BackendChoice choice;
    choice.gemm = options.gemm;
    choice.update_precision = options.update_precision;
    choice.device_panel = options.device_panel;
    choice.cache_dir = options.cache_dir;
    Backend requested = options.backend;
    int env_devices = 0;
    choice.explicit_request = requested != Backend::automatic;
    if (requested == Backend::automatic && parse_environment(&requested, &env_devices)) {
        choice.note = environment_note(requested);
        choice.explicit_request = true;
    }
    if (requested == Backend::automatic) {
        requested = gpu_available() ? Backend::gpu : Backend::cpu;
        if (requested == Backend::cpu) choice.note = cpu_path_note();
    }
    choice.backend = requested;
    switch (requested) {
        case Backend::cpu: choice.num_devices = 0; break;
        case Backend::host:
            choice.num_devices = options.num_devices > 0 ? options.num_devices
                                 : env_devices > 0       ? env_devices
                                                         : 1;
            break;
        case Backend::gpu: {
            const int available = gpu_count();
            if (available == 0) unavailable("backend gpu requested, but " + gpu_missing_reason());
            choice.num_devices = options.num_devices > 0 ? options.num_devices : available;
            if (choice.num_devices > available)
                unavailable(std::to_string(choice.num_devices) + " GPUs requested, " +
                            std::to_string(available) + " usable");
            break;
        }
        case Backend::automatic: break;
    }
    return choice;
}

DeviceLease::DeviceLease(const BackendChoice& choice) {
    if (choice.backend == Backend::host) {
        for (int d = 0; d < choice.num_devices; ++d)
            owned_.push_back(make_host_device(d, choice.update_precision));
        for (auto& device : owned_) devices_.push_back(device.get());
    } else if (choice.backend == Backend::gpu) {
        lock_ = gpu::lock_devices();
        cache_dir_ = resolve_cache_dir(choice.cache_dir);
        const gpu::GpuSettings settings{choice.gemm, choice.update_precision, choice.device_panel,
                                        cache_dir_};
        for (int d = choice.first_device; d < choice.first_device + choice.num_devices; ++d)
            devices_.push_back(&gpu::kept_device(d, settings));
    }
}

DeviceLease::~DeviceLease() = default;

}  // namespace detail

void release_resources() {
    gpu::release_devices();
    detail::forget_machine_models();
}

}  // namespace tandem
