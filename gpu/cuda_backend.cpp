#include "gpu/cuda_backend.hpp"

#include <cuda_runtime.h>

#include "gpu/cuda_device.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {

// Without a driver (or a GPU) cudaGetDeviceCount fails cleanly with an error
// code; nothing here throws or aborts, so CPU-only machines run tandem unharmed.
int device_count() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        (void)cudaGetLastError();  // do not leave the failure for a later launch check
        return 0;
    }
    return count;
}

std::string unavailable_reason() {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
        (void)cudaGetLastError();
        return std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(status);
    }
    if (count == 0) return "cudaGetDeviceCount found no CUDA device";
    return "";
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

void set_gemm_policy(Device& cuda_device, GemmKernel kernel, const std::string& cache_dir) {
    auto* device = dynamic_cast<CudaDevice*>(&cuda_device);
    if (device == nullptr)
        throw Error(TANDEM_ERROR_INTERNAL, "set_gemm_policy: " + cuda_device.name() +
                                               " is not a CUDA device");
    device->set_gemm_policy(kernel, cache_dir);
}

}  // namespace tandem::gpu
