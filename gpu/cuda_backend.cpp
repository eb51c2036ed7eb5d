#include "scheduler/gpu_backend.hpp"

#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

#include "gpu/cuda_check.hpp"
#include "gpu/cuda_device.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/host_heap.hpp"
#include "gpu/kernel_shared_memory.hpp"
#include "gpu/kernel_image.hpp"
#include "gpu/sgemm_cublaslt.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {

namespace {

struct Visible {
    int devices = 0;         // what cudaGetDeviceCount sees
    int usable = 0;          // leading ordinals that can run our kernels
    std::string why_not;     // why there are no (more) usable ones
};

// Without a driver (or a GPU) cudaGetDeviceCount fails cleanly with an error
// code; nothing here throws or aborts, so CPU-only machines run tandem unharmed.
// The answer cannot change within a process, so it is computed once.
const Visible& visible() {
    static const Visible result = [] {
        Visible v;
        const cudaError_t status = cudaGetDeviceCount(&v.devices);
        if (status != cudaSuccess) {
            (void)cudaGetLastError();  // do not leave the failure for a later launch check
            v.devices = 0;
            // CUDA says "driver version is insufficient" also when there is no
            // driver at all (version 0): say which.
            int driver = 0, runtime = 0;
            (void)cudaDriverGetVersion(&driver);
            (void)cudaRuntimeGetVersion(&runtime);
            (void)cudaGetLastError();
            const auto version = [](int v) {
                return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
            };
            if (status == cudaErrorInsufficientDriver && driver == 0)
                v.why_not = "no NVIDIA driver is installed, so no GPU can be used";
            else if (status == cudaErrorInsufficientDriver)
                v.why_not = "the NVIDIA driver supports CUDA " + version(driver) +
                            ", older than this build's CUDA runtime " + version(runtime);
            else
                v.why_not = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(status);
            return v;
        }
        if (v.devices == 0) v.why_not = "cudaGetDeviceCount found no CUDA device";
        // Ordinals stay 0..usable-1: counting stops at the first device without an image.
        while (v.usable < v.devices && has_kernel_image(v.usable)) ++v.usable;
        if (v.usable < v.devices) {
            cudaDeviceProp properties{};
            (void)cudaGetDeviceProperties(&properties, v.usable);
            (void)cudaGetLastError();
            v.why_not = "CUDA device " + std::to_string(v.usable) + " (" + properties.name +
                        ", sm_" + std::to_string(properties.major) +
                        std::to_string(properties.minor) +
                        ") cannot run this build's kernels (rebuild with its architecture in "
                        "CMAKE_CUDA_ARCHITECTURES)";
        }
        return v;
    }();
    return result;
}

}  // namespace

int device_count() { return visible().usable; }

std::string unavailable_reason() { return visible().usable > 0 ? "" : visible().why_not; }

namespace {

// Host memory, known without asking CUDA: no device, a null pointer, or a
// pointer into the brk heap (host_heap.hpp). The runtime's query is a call into
// the driver for each array of each call, a cost a small LAPACK call feels.
bool host_memory_without_query(const void* pointer) {
    return device_count() == 0 || pointer == nullptr || in_brk_heap(pointer);
}

// What CUDA knows of `pointer`; host memory (unregistered) when the runtime
// cannot say (no failure is left behind for a later call).
cudaPointerAttributes pointer_attributes(const void* pointer) {
    cudaPointerAttributes attributes{};
    attributes.type = cudaMemoryTypeUnregistered;
    attributes.device = -1;
    if (cudaPointerGetAttributes(&attributes, pointer) != cudaSuccess) {
        (void)cudaGetLastError();
        attributes.type = cudaMemoryTypeUnregistered;
    }
    return attributes;
}

}  // namespace

int memory_device(const void* pointer) {
    if (host_memory_without_query(pointer)) return -1;
    const cudaPointerAttributes attributes = pointer_attributes(pointer);
    const bool on_gpu =
        attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
    return on_gpu ? attributes.device : -1;
}

bool is_device_only_memory(const void* pointer) {
    return !host_memory_without_query(pointer) &&
           pointer_attributes(pointer).type == cudaMemoryTypeDevice;
}

std::unique_ptr<CudaDevice> make_cuda_device(int ordinal) {
    const int count = device_count();
    if (ordinal < 0 || ordinal >= count)
        throw Error(TANDEM_ERROR_BACKEND_UNAVAILABLE,
                    "CUDA device " + std::to_string(ordinal) + " was asked for, but " +
                        (count == 0 ? unavailable_reason()
                                    : std::to_string(count) + " CUDA device(s) are visible"));
    return std::make_unique<CudaDevice>(ordinal);
}

void synchronize_device(int ordinal) {
    DeviceGuard guard(ordinal);
    TANDEM_CUDA_CHECK(cudaDeviceSynchronize());
}

namespace {

// The kept devices live for the whole process once made (never destroyed at
// exit: the CUDA runtime may already be gone by then).
struct KeptDevices {
    std::mutex mutex;
    std::vector<std::unique_ptr<CudaDevice>> devices;  // index = CUDA ordinal
};

KeptDevices& kept_devices() {
    static KeptDevices* kept = new KeptDevices;
    return *kept;
}

}  // namespace

std::unique_lock<std::mutex> lock_devices() {
    return std::unique_lock<std::mutex>(kept_devices().mutex);
}

Device& kept_device(int ordinal, const GpuSettings& settings) {
    std::vector<std::unique_ptr<CudaDevice>>& devices = kept_devices().devices;
    if (ordinal < 0 || ordinal >= device_count()) (void)make_cuda_device(ordinal);  // says why not
    if (devices.size() <= static_cast<size_t>(ordinal)) devices.resize(ordinal + 1);
    if (!devices[ordinal]) devices[ordinal] = make_cuda_device(ordinal);
    devices[ordinal]->set_gemm_policy(settings.gemm, settings.cache_dir);
    devices[ordinal]->set_update_precision(settings.update);
    devices[ordinal]->set_panel_method(settings.panel);
    return *devices[ordinal];
}

void release_devices() {
    std::lock_guard<std::mutex> lock(kept_devices().mutex);
    // After an application's cudaDeviceReset() a device's objects are gone
    // already: they are forgotten rather than freed, that device's only.
    std::vector<bool> reset;
    for (std::unique_ptr<CudaDevice>& device : kept_devices().devices) {
        reset.push_back(device && !device->context_alive());
        cuda_objects_orphaned() = reset.back();
        device.reset();
    }
    cuda_objects_orphaned() = false;
    kept_devices().devices.clear();
    release_cublaslt_handles(reset);  // with no device left to use them
    forget_kernel_settings();         // the contexts may be new ones
}

}  // namespace tandem::gpu
