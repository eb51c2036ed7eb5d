#include "bench/baselines.hpp"

#include <stdexcept>
#include <string>

#ifdef TANDEM_HAVE_CUDA
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include "bench/timing.hpp"
#endif

namespace tandem_bench {

#ifndef TANDEM_HAVE_CUDA

bool cusolver_compiled() { return false; }

CusolverTimes time_cusolver_sgetrf(int, const float*, float*, int*, int) {
    throw std::runtime_error("cuSOLVER: no GPU backend in this build");
}

#else

namespace {

void check_cuda(cudaError_t status, const char* call) {
    if (status != cudaSuccess) {
        throw std::runtime_error(std::string(call) + " failed: " + cudaGetErrorName(status) + " (" +
                                 cudaGetErrorString(status) + ")");
    }
}

const char* cusolver_status_name(cusolverStatus_t status) {
    switch (status) {
        case CUSOLVER_STATUS_NOT_INITIALIZED: return "CUSOLVER_STATUS_NOT_INITIALIZED";
        case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED";
        case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE";
        case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH";
        case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED";
        case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR";
        case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED";
        default: return "cusolverStatus_t";
    }
}

void check_cusolver(cusolverStatus_t status, const char* call) {
    if (status != CUSOLVER_STATUS_SUCCESS) {
        throw std::runtime_error(std::string(call) + " failed: " + cusolver_status_name(status) +
                                 " (" + std::to_string(static_cast<int>(status)) + ")");
    }
}

#define CHECK_CUDA(call) check_cuda((call), #call)
#define CHECK_CUSOLVER(call) check_cusolver((call), #call)

// Owners of the CUDA resources, so an exception midway releases them. Release
// errors are ignored: nothing useful can be done about them in a destructor.
struct DeviceMemory {
    void* pointer = nullptr;
    explicit DeviceMemory(std::size_t bytes) { CHECK_CUDA(cudaMalloc(&pointer, bytes)); }
    ~DeviceMemory() { cudaFree(pointer); }
    DeviceMemory(const DeviceMemory&) = delete;
    DeviceMemory& operator=(const DeviceMemory&) = delete;
    template <class T> T* as() const { return static_cast<T*>(pointer); }
};

struct Stream {
    cudaStream_t stream = nullptr;
    Stream() { CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)); }
    ~Stream() { cudaStreamDestroy(stream); }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
};

struct Event {
    cudaEvent_t event = nullptr;
    Event() { CHECK_CUDA(cudaEventCreate(&event)); }
    ~Event() { cudaEventDestroy(event); }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
};

struct SolverHandle {
    cusolverDnHandle_t handle = nullptr;
    SolverHandle() { CHECK_CUSOLVER(cusolverDnCreate(&handle)); }
    ~SolverHandle() { cusolverDnDestroy(handle); }
    SolverHandle(const SolverHandle&) = delete;
    SolverHandle& operator=(const SolverHandle&) = delete;
};

}  // namespace

bool cusolver_compiled() { return true; }

CusolverTimes time_cusolver_sgetrf(int n, const float* original, float* factors, int* ipiv,
                                   int repeats) {
    // tandem's multi-GPU code may have left another device current on this thread.
    CHECK_CUDA(cudaSetDevice(0));
    const std::size_t matrix_bytes = static_cast<std::size_t>(n) * n * sizeof(float);

    Stream stream;
    SolverHandle solver;
    CHECK_CUSOLVER(cusolverDnSetStream(solver.handle, stream.stream));
    DeviceMemory d_a(matrix_bytes);
    DeviceMemory d_ipiv(static_cast<std::size_t>(n) * sizeof(int));
    DeviceMemory d_info(sizeof(int));
    int work_floats = 0;
    CHECK_CUSOLVER(cusolverDnSgetrf_bufferSize(solver.handle, n, n, d_a.as<float>(), n, &work_floats));
    DeviceMemory d_work(static_cast<std::size_t>(work_floats > 0 ? work_floats : 1) * sizeof(float));
    Event factor_start, factor_stop;

    CusolverTimes times;
    warm_up_then_time(repeats, [&](bool timed) {
        int info = -1;
        const double start = wall_seconds();
        // Uploading the original is also the restore between repeats; the
        // factor-only time starts after it.
        CHECK_CUDA(cudaMemcpyAsync(d_a.pointer, original, matrix_bytes, cudaMemcpyHostToDevice,
                                   stream.stream));
        CHECK_CUDA(cudaEventRecord(factor_start.event, stream.stream));
        CHECK_CUSOLVER(cusolverDnSgetrf(solver.handle, n, n, d_a.as<float>(), n, d_work.as<float>(),
                                        d_ipiv.as<int>(), d_info.as<int>()));
        CHECK_CUDA(cudaEventRecord(factor_stop.event, stream.stream));
        CHECK_CUDA(cudaMemcpyAsync(factors, d_a.pointer, matrix_bytes, cudaMemcpyDeviceToHost,
                                   stream.stream));
        CHECK_CUDA(cudaMemcpyAsync(ipiv, d_ipiv.pointer, static_cast<std::size_t>(n) * sizeof(int),
                                   cudaMemcpyDeviceToHost, stream.stream));
        CHECK_CUDA(cudaMemcpyAsync(&info, d_info.pointer, sizeof(int), cudaMemcpyDeviceToHost,
                                   stream.stream));
        CHECK_CUDA(cudaStreamSynchronize(stream.stream));
        const double stop = wall_seconds();
        float factor_ms = 0.0f;
        CHECK_CUDA(cudaEventElapsedTime(&factor_ms, factor_start.event, factor_stop.event));
        if (info != 0) {
            throw std::runtime_error("cusolverDnSgetrf returned info = " + std::to_string(info));
        }
        if (timed) {
            times.factor_seconds.push_back(1e-3 * factor_ms);
            times.with_transfer_seconds.push_back(stop - start);
        }
    });
    return times;
}

#endif  // TANDEM_HAVE_CUDA

}  // namespace tandem_bench
