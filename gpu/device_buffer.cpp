#include "gpu/device_buffer.hpp"

#include <cstdio>
#include <string>

#include "tandem/tandem.hpp"

namespace tandem::gpu {

bool& cuda_objects_orphaned() {
    static bool orphaned = false;
    return orphaned;
}

DeviceBuffer::DeviceBuffer(size_t bytes, const char* what) {
    if (bytes == 0) return;
    const cudaError_t status = cudaMalloc(&ptr_, bytes);
    if (status == cudaSuccess) {
        bytes_ = bytes;
        return;
    }
    ptr_ = nullptr;
    (void)cudaGetLastError();  // not sticky: do not let a later launch check report it
    char size[32];
    std::snprintf(size, sizeof size, "%.3f GiB", double(bytes) / (1024.0 * 1024.0 * 1024.0));
    throw Error(status == cudaErrorMemoryAllocation ? TANDEM_ERROR_OUT_OF_MEMORY
                                                    : TANDEM_ERROR_DEVICE,
                std::string("cudaMalloc of ") + size + " for the " + what +
                    " failed: " + cudaGetErrorString(status));
}

}  // namespace tandem::gpu
