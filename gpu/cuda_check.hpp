// Checked CUDA, cuBLAS and cuSOLVER calls. Every runtime call, cuBLAS call and kernel
// launch of the GPU backend goes through one of these macros, so that a failure
// surfaces as tandem::Error naming the call, where it was made and why it failed:
//   "cudaMemcpy2DAsync(...) failed at cuda_device.cpp:120: invalid argument"
// Allocation failures carry TANDEM_ERROR_OUT_OF_MEMORY, all others TANDEM_ERROR_DEVICE.
#ifndef TANDEM_GPU_CUDA_CHECK_HPP
#define TANDEM_GPU_CUDA_CHECK_HPP

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

namespace tandem::gpu {

[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file,
                                   int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file,
                                     int line);
[[noreturn]] void throw_cusolver_error(cusolverStatus_t status, const char* call,
                                       const char* file, int line);

// Makes `device` the calling thread's current CUDA device for the guard's
// lifetime and restores the caller's device afterwards (without throwing).
class DeviceGuard {
public:
    explicit DeviceGuard(int device);
    ~DeviceGuard();
    DeviceGuard(const DeviceGuard&) = delete;
    DeviceGuard& operator=(const DeviceGuard&) = delete;

private:
    int previous_ = -1;  // -1: nothing to restore
};

}  // namespace tandem::gpu

#define TANDEM_CUDA_CHECK(call)                                                     \
    do {                                                                            \
        const cudaError_t tandem_status_ = (call);                                  \
        if (tandem_status_ != cudaSuccess)                                          \
            ::tandem::gpu::throw_cuda_error(tandem_status_, #call, __FILE__, __LINE__); \
    } while (0)

#define TANDEM_CUBLAS_CHECK(call)                                                     \
    do {                                                                              \
        const cublasStatus_t tandem_status_ = (call);                                 \
        if (tandem_status_ != CUBLAS_STATUS_SUCCESS)                                  \
            ::tandem::gpu::throw_cublas_error(tandem_status_, #call, __FILE__, __LINE__); \
    } while (0)

#define TANDEM_CUSOLVER_CHECK(call)                                                     \
    do {                                                                                \
        const cusolverStatus_t tandem_status_ = (call);                                 \
        if (tandem_status_ != CUSOLVER_STATUS_SUCCESS)                                  \
            ::tandem::gpu::throw_cusolver_error(tandem_status_, #call, __FILE__, __LINE__); \
    } while (0)

// After a <<<...>>> launch: configuration errors (and earlier asynchronous
// faults) are reported by cudaGetLastError. `kernel` is the kernel's name.
#define TANDEM_CHECK_LAUNCH(kernel)                                                 \
    do {                                                                            \
        const cudaError_t tandem_status_ = cudaGetLastError();                      \
        if (tandem_status_ != cudaSuccess)                                          \
            ::tandem::gpu::throw_cuda_error(tandem_status_, "launch of " kernel,     \
                                            __FILE__, __LINE__);                    \
    } while (0)

#endif  // TANDEM_GPU_CUDA_CHECK_HPP
