#include "gpu/cuda_backend.hpp"

#include <cuda_runtime.h>

#include <string>

#include "gpu/cuda_check.hpp"
#include "gpu/cuda_device.hpp"
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

// What CUDA knows of `pointer`; host memory (unregistered) when there is no
// device or the runtime cannot say (no failure is left behind for a later call).
cudaPointerAttributes pointer_attributes(const void* pointer) {
    cudaPointerAttributes attributes{};
    attributes.type = cudaMemoryTypeUnregistered;
    attributes.device = -1;
    if (device_count() == 0 || pointer == nullptr) return attributes;
    if (cudaPointerGetAttributes(&attributes, pointer) != cudaSuccess) {
        (void)cudaGetLastError();
        attributes.type = cudaMemoryTypeUnregistered;
    }
    return attributes;
}

}  // namespace

int memory_device(const void* pointer) {
    const cudaPointerAttributes attributes = pointer_attributes(pointer);
    const bool on_gpu =
        attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
    return on_gpu ? attributes.device : -1;
}

bool is_device_only_memory(const void* pointer) {
    return pointer_attributes(pointer).type == cudaMemoryTypeDevice;
}

std::unique_ptr<Device> make_cuda_device(int ordinal) {
    const int count = device_count();
    if (ordinal < 0 || ordinal >= count)
        throw Error(TANDEM_ERROR_BACKEND_UNAVAILABLE,
                    "CUDA device " + std::to_string(ordinal) + " was asked for, but " +
                        (count == 0 ? unavailable_reason()
                                    : std::to_string(count) + " CUDA device(s) are visible"));
    return std::make_unique<CudaDevice>(ordinal);
}

namespace {

// The CudaDevice behind a Device that make_cuda_device made.
CudaDevice& as_cuda(Device& device, const char* op) {
    auto* cuda = dynamic_cast<CudaDevice*>(&device);
    if (cuda == nullptr)
        throw Error(TANDEM_ERROR_INTERNAL,
                    std::string(op) + ": " + device.name() + " is not a CUDA device");
    return *cuda;
}

}  // namespace

void synchronize_device(int ordinal) {
    DeviceGuard guard(ordinal);
    TANDEM_CUDA_CHECK(cudaDeviceSynchronize());
}

void solve_column_major(Device& cuda_device, char trans, int64_t n, int64_t nrhs, const float* a,
                        int64_t lda, const int* ipiv, float* b, int64_t ldb) {
    as_cuda(cuda_device, "solve_column_major").solve_column_major(trans, n, nrhs, a, lda, ipiv, b, ldb);
}

int factor_column_major(Device& cuda_device, int64_t m, int64_t n, float* a, int64_t lda, int* ipiv) {
    return as_cuda(cuda_device, "factor_column_major").factor_column_major(m, n, a, lda, ipiv);
}

int factor_host_column_major(Device& cuda_device, int64_t m, int64_t n, float* a, int64_t lda,
                             int* ipiv) {
    return as_cuda(cuda_device, "factor_host_column_major").factor_host_column_major(m, n, a, lda, ipiv);
}

void solve_kept_factors(Device& cuda_device, char trans, int64_t n, int64_t nrhs, const int* ipiv,
                        float* b, int64_t ldb) {
    as_cuda(cuda_device, "solve_kept_factors").solve_kept_factors(trans, n, nrhs, ipiv, b, ldb);
}

void set_gemm_policy(Device& cuda_device, GemmKernel kernel, const std::string& cache_dir) {
    as_cuda(cuda_device, "set_gemm_policy").set_gemm_policy(kernel, cache_dir);
}

void set_panel_method(Device& cuda_device, DevicePanelMethod method) {
    as_cuda(cuda_device, "set_panel_method").set_panel_method(method);
}

void release_shared_handles() { release_cublaslt_handles(); }

}  // namespace tandem::gpu
