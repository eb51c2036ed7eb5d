#include "bench/baselines.hpp"

#include <stdexcept>
#include <string>

#ifdef TANDEM_HAVE_CUDA
#include "bench/cuda_resources.hpp"
#include "bench/timing.hpp"
#endif

namespace tandem_bench {

#ifndef TANDEM_HAVE_CUDA

bool cusolver_compiled() { return false; }

CusolverTimes time_cusolver_sgetrf(int, const float*, float*, int*, int) {
    throw std::runtime_error("cuSOLVER: no GPU backend in this build");
}

#else

bool cusolver_compiled() { return true; }

CusolverTimes time_cusolver_sgetrf(int n, const float* original, float* factors, int* ipiv,
                                   int repeats) {
    // tandem's multi-GPU code may have left another device current on this thread.
    CHECK_CUDA(cudaSetDevice(0));
    const std::size_t matrix_bytes = static_cast<std::size_t>(n) * n * sizeof(float);

    Stream stream;
    SolverHandle solver;
    CHECK_CUSOLVER(cusolverDnSetStream(solver.handle, stream.handle));
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
        CHECK_CUDA(cudaMemcpyAsync(d_a.pointer(), original, matrix_bytes, cudaMemcpyHostToDevice,
                                   stream.handle));
        CHECK_CUDA(cudaEventRecord(factor_start.handle, stream.handle));
        CHECK_CUSOLVER(cusolverDnSgetrf(solver.handle, n, n, d_a.as<float>(), n, d_work.as<float>(),
                                        d_ipiv.as<int>(), d_info.as<int>()));
        CHECK_CUDA(cudaEventRecord(factor_stop.handle, stream.handle));
        CHECK_CUDA(cudaMemcpyAsync(factors, d_a.pointer(), matrix_bytes, cudaMemcpyDeviceToHost,
                                   stream.handle));
        CHECK_CUDA(cudaMemcpyAsync(ipiv, d_ipiv.pointer(), static_cast<std::size_t>(n) * sizeof(int),
                                   cudaMemcpyDeviceToHost, stream.handle));
        CHECK_CUDA(cudaMemcpyAsync(&info, d_info.pointer(), sizeof(int), cudaMemcpyDeviceToHost,
                                   stream.handle));
        CHECK_CUDA(cudaStreamSynchronize(stream.handle));
        const double stop = wall_seconds();
        float factor_ms = 0.0f;
        CHECK_CUDA(cudaEventElapsedTime(&factor_ms, factor_start.handle, factor_stop.handle));
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
