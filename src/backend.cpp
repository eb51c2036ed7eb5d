#include "src/backend.hpp"

#include "src/model_cache.hpp"

#include <cctype>
#include <cstdlib>
#include <string>

#include "cpu/host_device.hpp"
#ifdef TANDEM_HAVE_CUDA
#include "gpu/cuda_backend.hpp"
#endif

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

std::string gpu_missing_reason() {
#ifdef TANDEM_HAVE_CUDA
    return "no usable CUDA device (" + gpu::unavailable_reason() + ")";
#else
    return "tandem was built without the CUDA backend (no CUDA compiler at configure time)";
#endif
}

}  // namespace

int gpu_count() {
#ifdef TANDEM_HAVE_CUDA
    return gpu::device_count();
#else
    return 0;
#endif
}

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

Backend resolve_backend(const Options& options) { return detail::choose_backend(options).backend; }

namespace detail {

int gpu_holding(const void* pointer) {
#ifdef TANDEM_HAVE_CUDA
    return gpu::memory_device(pointer);
#else
    (void)pointer;
    return -1;
#endif
}

bool host_cannot_read(const void* pointer) {
#ifdef TANDEM_HAVE_CUDA
    return gpu::is_device_only_memory(pointer);
#else
    (void)pointer;
    return false;
#endif
}

void wait_for_gpu(int ordinal) {
#ifdef TANDEM_HAVE_CUDA
    gpu::synchronize_device(ordinal);
#else
    (void)ordinal;
#endif
}

int factor_in_gpu_memory(Device& device, int64_t m, int64_t n, float* a, int64_t lda, int* ipiv) {
#ifdef TANDEM_HAVE_CUDA
    return gpu::factor_column_major(device, m, n, a, lda, ipiv);
#else
    (void)device, (void)m, (void)n, (void)a, (void)lda, (void)ipiv;
    throw Error(TANDEM_ERROR_BACKEND_UNAVAILABLE, "tandem was built without the CUDA backend");
#endif
}

int factor_in_host_memory(Device& device, int64_t m, int64_t n, float* a, int64_t lda, int* ipiv) {
#ifdef TANDEM_HAVE_CUDA
    return gpu::factor_host_column_major(device, m, n, a, lda, ipiv);
#else
    (void)device, (void)m, (void)n, (void)a, (void)lda, (void)ipiv;
    throw Error(TANDEM_ERROR_BACKEND_UNAVAILABLE, "tandem was built without the CUDA backend");
#endif
}

void solve_with_kept_factors(Device& device, char trans, int64_t n, int64_t nrhs, const int* ipiv,
                             float* b, int64_t ldb) {
#ifdef TANDEM_HAVE_CUDA
    gpu::solve_kept_factors(device, trans, n, nrhs, ipiv, b, ldb);
#else
    (void)device, (void)trans, (void)n, (void)nrhs, (void)ipiv, (void)b, (void)ldb;
    throw Error(TANDEM_ERROR_BACKEND_UNAVAILABLE, "tandem was built without the CUDA backend");
#endif
}

void solve_in_gpu_memory(Device& device, char trans, int64_t n, int64_t nrhs, const float* a,
                         int64_t lda, const int* ipiv, float* b, int64_t ldb) {
#ifdef TANDEM_HAVE_CUDA
    gpu::solve_column_major(device, trans, n, nrhs, a, lda, ipiv, b, ldb);
#else
    (void)device, (void)trans, (void)n, (void)nrhs, (void)a, (void)lda, (void)ipiv, (void)b, (void)ldb;
    throw Error(TANDEM_ERROR_BACKEND_UNAVAILABLE, "tandem was built without the CUDA backend");
#endif
}

std::string resolve_cache_dir(const std::string& configured) {
    if (!configured.empty()) return configured;
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
        return std::string(xdg) + "/tandem";
    if (const char* home = std::getenv("HOME"); home && *home)
        return std::string(home) + "/.cache/tandem";
    return "";  // nowhere to cache: the shipped tables are used
}

BackendChoice choose_backend(const Options& options) {
    BackendChoice choice;
    choice.gemm = options.gemm;
    choice.device_panel = options.device_panel;
    choice.cache_dir = resolve_cache_dir(options.cache_dir);
    Backend requested = options.backend;
    int env_devices = 0;
    choice.explicit_request = requested != Backend::automatic;
    if (requested == Backend::automatic && parse_environment(&requested, &env_devices)) {
        choice.note = "TANDEM_BACKEND selected " + std::string(backend_name(requested));
        choice.explicit_request = true;
    }
    if (requested == Backend::automatic) {
        requested = gpu_available() ? Backend::gpu : Backend::cpu;
        if (requested == Backend::cpu) choice.note = "CPU path: " + gpu_missing_reason();
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

namespace {

// CUDA devices live for the whole process once made (never destroyed at exit:
// the CUDA runtime may already be gone by then).
struct GpuPool {
    std::mutex mutex;
    std::vector<std::unique_ptr<Device>> devices;  // index = CUDA ordinal
};

GpuPool& gpu_pool() {
    static GpuPool* pool = new GpuPool;
    return *pool;
}

}  // namespace

DeviceLease::DeviceLease(const BackendChoice& choice) {
    if (choice.backend == Backend::host) {
        for (int d = 0; d < choice.num_devices; ++d) owned_.push_back(make_host_device(d));
        for (auto& device : owned_) devices_.push_back(device.get());
        return;
    }
#ifdef TANDEM_HAVE_CUDA
    if (choice.backend == Backend::gpu) {
        GpuPool& pool = gpu_pool();
        lock_ = std::unique_lock<std::mutex>(pool.mutex);
        const int end = choice.first_device + choice.num_devices;
        if (pool.devices.size() < static_cast<size_t>(end)) pool.devices.resize(end);
        for (int d = choice.first_device; d < end; ++d) {
            if (!pool.devices[d]) pool.devices[d] = gpu::make_cuda_device(d);
            gpu::set_gemm_policy(*pool.devices[d], choice.gemm, choice.cache_dir);
            gpu::set_panel_method(*pool.devices[d], choice.device_panel);
            devices_.push_back(pool.devices[d].get());
        }
    }
#endif
}

DeviceLease::~DeviceLease() = default;

}  // namespace detail

void release_resources() {
    detail::GpuPool& pool = detail::gpu_pool();
    std::lock_guard<std::mutex> lock(pool.mutex);
    pool.devices.clear();
#ifdef TANDEM_HAVE_CUDA
    gpu::release_shared_handles();
#endif
    detail::forget_machine_models();
}

}  // namespace tandem
