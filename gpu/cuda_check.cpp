#include "gpu/cuda_check.hpp"

#include <cstring>
#include <string>

#include "tandem/tandem.hpp"

namespace tandem::gpu {
namespace {

// "…/gpu/cuda_device.cpp" -> "cuda_device.cpp": enough to find the line.
const char* base_name(const char* path) {
    const char* slash = std::strrchr(path, '/');
    return slash ? slash + 1 : path;
}

std::string where(const char* call, const char* file, int line) {
    return std::string(call) + " failed at " + base_name(file) + ":" + std::to_string(line) + ": ";
}

}  // namespace

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
    // Clear the (non-sticky) error so that the next launch check does not report it again.
    (void)cudaGetLastError();
    const int code =
        status == cudaErrorMemoryAllocation ? TANDEM_ERROR_OUT_OF_MEMORY : TANDEM_ERROR_DEVICE;
    throw Error(code, where(call, file, line) + cudaGetErrorString(status));
}

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
    const int code =
        status == CUBLAS_STATUS_ALLOC_FAILED ? TANDEM_ERROR_OUT_OF_MEMORY : TANDEM_ERROR_DEVICE;
    throw Error(code, where(call, file, line) + cublasGetStatusString(status));
}

void throw_cusolver_error(cusolverStatus_t status, const char* call, const char* file, int line) {
    const char* name = "an error status";
    switch (status) {
        case CUSOLVER_STATUS_NOT_INITIALIZED: name = "CUSOLVER_STATUS_NOT_INITIALIZED"; break;
        case CUSOLVER_STATUS_ALLOC_FAILED: name = "CUSOLVER_STATUS_ALLOC_FAILED"; break;
        case CUSOLVER_STATUS_INVALID_VALUE: name = "CUSOLVER_STATUS_INVALID_VALUE"; break;
        case CUSOLVER_STATUS_ARCH_MISMATCH: name = "CUSOLVER_STATUS_ARCH_MISMATCH"; break;
        case CUSOLVER_STATUS_EXECUTION_FAILED: name = "CUSOLVER_STATUS_EXECUTION_FAILED"; break;
        case CUSOLVER_STATUS_INTERNAL_ERROR: name = "CUSOLVER_STATUS_INTERNAL_ERROR"; break;
        default: break;
    }
    const int code =
        status == CUSOLVER_STATUS_ALLOC_FAILED ? TANDEM_ERROR_OUT_OF_MEMORY : TANDEM_ERROR_DEVICE;
    throw Error(code, where(call, file, line) + name + " (" + std::to_string(int(status)) + ")");
}

DeviceGuard::DeviceGuard(int device) {
    int current = 0;
    TANDEM_CUDA_CHECK(cudaGetDevice(&current));
    if (current != device) {
        TANDEM_CUDA_CHECK(cudaSetDevice(device));
        previous_ = current;
    }
}

DeviceGuard::~DeviceGuard() {
    if (previous_ >= 0) (void)cudaSetDevice(previous_);  // destructors never throw
}

}  // namespace tandem::gpu
