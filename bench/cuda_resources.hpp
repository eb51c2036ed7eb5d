// The cuSOLVER baselines' CUDA plumbing (bench/baseline_cusolver*.cpp): checks
// that turn a failing CUDA or cuSOLVER return code into std::runtime_error
// naming the call, and owners of the CUDA resources, so that an exception
// midway releases them. For CUDA builds only (TANDEM_HAVE_CUDA).
#ifndef TANDEM_BENCH_CUDA_RESOURCES_HPP
#define TANDEM_BENCH_CUDA_RESOURCES_HPP

#ifdef TANDEM_HAVE_CUDA

#include <cstddef>
#include <stdexcept>
#include <string>

#include <cuda_runtime.h>
#include <cusolverDn.h>

#include "bench/baselines.hpp"

namespace tandem_bench {

inline void check_cuda(cudaError_t status, const char* call) {
    if (status != cudaSuccess) {
        throw std::runtime_error(std::string(call) + " failed: " + cudaGetErrorName(status) + " (" +
                                 cudaGetErrorString(status) + ")");
    }
}

inline const char* cusolver_status_name(cusolverStatus_t status) {
    switch (status) {
        case CUSOLVER_STATUS_NOT_INITIALIZED: return "CUSOLVER_STATUS_NOT_INITIALIZED";
        case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED";
        case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE";
        case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH";
        case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED";
        case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR";
        case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED";
        case CUSOLVER_STATUS_IRS_INTERNAL_ERROR: return "CUSOLVER_STATUS_IRS_INTERNAL_ERROR";
        case CUSOLVER_STATUS_IRS_NOT_SUPPORTED: return "CUSOLVER_STATUS_IRS_NOT_SUPPORTED";
        case CUSOLVER_STATUS_IRS_OUT_OF_RANGE: return "CUSOLVER_STATUS_IRS_OUT_OF_RANGE";
        case CUSOLVER_STATUS_IRS_NRHS_NOT_SUPPORTED_FOR_REFINE_GMRES:
            return "CUSOLVER_STATUS_IRS_NRHS_NOT_SUPPORTED_FOR_REFINE_GMRES";
        case CUSOLVER_STATUS_IRS_MATRIX_SINGULAR: return "CUSOLVER_STATUS_IRS_MATRIX_SINGULAR";
        case CUSOLVER_STATUS_INVALID_WORKSPACE: return "CUSOLVER_STATUS_INVALID_WORKSPACE";
        default: return "cusolverStatus_t";
    }
}

// A status that says the library or the GPU does not offer the call for these
// arguments throws BaselineUnsupported (the sweep reports "unavailable"), any
// other failure std::runtime_error.
inline void check_cusolver(cusolverStatus_t status, const char* call) {
    if (status == CUSOLVER_STATUS_SUCCESS) return;
    const std::string what = std::string(call) + " failed: " + cusolver_status_name(status) +
                             " (" + std::to_string(static_cast<int>(status)) + ")";
    switch (status) {
        case CUSOLVER_STATUS_NOT_SUPPORTED:
        case CUSOLVER_STATUS_ARCH_MISMATCH:
        case CUSOLVER_STATUS_IRS_NOT_SUPPORTED:
        case CUSOLVER_STATUS_IRS_NRHS_NOT_SUPPORTED_FOR_REFINE_GMRES:
            throw BaselineUnsupported(what);
        default:
            throw std::runtime_error(what);
    }
}

#define CHECK_CUDA(call) ::tandem_bench::check_cuda((call), #call)
#define CHECK_CUSOLVER(call) ::tandem_bench::check_cusolver((call), #call)

// Owner of one CUDA or cuSOLVER object, which `release` frees when the owner
// goes. Release errors are ignored: nothing useful can be done about them in a
// destructor.
template <class Handle, auto release>
struct Owned {
    Handle handle{};
    Owned() = default;
    ~Owned() {
        if (handle) release(handle);
    }
    Owned(const Owned&) = delete;
    Owned& operator=(const Owned&) = delete;
};

struct DeviceMemory : Owned<void*, cudaFree> {
    explicit DeviceMemory(std::size_t bytes) { CHECK_CUDA(cudaMalloc(&handle, bytes)); }
    void* pointer() const { return handle; }
    template <class T> T* as() const { return static_cast<T*>(handle); }
};

struct Stream : Owned<cudaStream_t, cudaStreamDestroy> {
    Stream() { CHECK_CUDA(cudaStreamCreateWithFlags(&handle, cudaStreamNonBlocking)); }
};

struct Event : Owned<cudaEvent_t, cudaEventDestroy> {
    Event() { CHECK_CUDA(cudaEventCreate(&handle)); }
};

struct SolverHandle : Owned<cusolverDnHandle_t, cusolverDnDestroy> {
    SolverHandle() { CHECK_CUSOLVER(cusolverDnCreate(&handle)); }
};

}  // namespace tandem_bench

#endif  // TANDEM_HAVE_CUDA

#endif
