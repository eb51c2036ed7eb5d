// Probe: cuSOLVER's getrf algorithms on the shapes the LU factors on the device:
// cusolverDnSgetrf (the legacy API tandem calls) against cusolverDnXgetrf with
// CUSOLVER_ALG_0 and CUSOLVER_ALG_1 (cusolverDnSetAdvOptions), on tall panels
// and on whole square matrices. Medians of CUDA-event times; each run factors
// a fresh copy of the same random matrix, and the pivots of the three must agree.
//
// Build:
//   nvcc -O3 -std=c++17 -arch=sm_90 tools/probes/getrf_algorithms.cu -o build/getrf_algorithms -lcusolver
// Run:
//   build/getrf_algorithms 16384x512 32768x1024 8192x8192
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "probe_check.cuh"
#include "probe_data.cuh"

namespace {

}  // namespace

int main(int argc, char** argv) {
    const int repeats = 5;
    cusolverDnHandle_t handle;
    CHECK_STATUS(cusolverDnCreate(&handle));
    cudaEvent_t begin, end;
    CHECK(cudaEventCreate(&begin));
    CHECK(cudaEventCreate(&end));
    std::printf("%-12s %12s %12s %12s  pivots\n", "m x n", "Sgetrf ms", "X ALG_0 ms", "X ALG_1 ms");
    for (int a = 1; a < argc; ++a) {
        const std::string shape = argv[a];
        const int64_t m = std::atoll(shape.c_str());
        const int64_t n = std::atoll(shape.c_str() + shape.find('x') + 1);
        const size_t count = size_t(m) * n;
        float *original, *work;
        CHECK(cudaMalloc(&original, sizeof(float) * count));
        CHECK(cudaMalloc(&work, sizeof(float) * count));
        fill_random(original, count, 7);
        int* info;
        CHECK(cudaMalloc(&info, sizeof(int)));
        const int64_t k = std::min(m, n);
        int* ipiv32;
        int64_t* ipiv64;
        CHECK(cudaMalloc(&ipiv32, sizeof(int) * k));
        CHECK(cudaMalloc(&ipiv64, sizeof(int64_t) * k));
        std::vector<int> p_legacy(k);
        std::vector<int64_t> p_alg[2] = {std::vector<int64_t>(k), std::vector<int64_t>(k)};
        double ms[3];

        int lwork = 0;
        CHECK_STATUS(cusolverDnSgetrf_bufferSize(handle, int(m), int(n), work, int(m), &lwork));
        float* legacy_work;
        CHECK(cudaMalloc(&legacy_work, sizeof(float) * std::max(lwork, 1)));
        std::vector<double> t;
        for (int r = 0; r <= repeats; ++r) {
            CHECK(cudaMemcpy(work, original, sizeof(float) * count, cudaMemcpyDeviceToDevice));
            CHECK(cudaEventRecord(begin));
            CHECK_STATUS(cusolverDnSgetrf(handle, int(m), int(n), work, int(m), legacy_work, ipiv32, info));
            CHECK(cudaEventRecord(end));
            CHECK(cudaEventSynchronize(end));
            float e = 0;
            CHECK(cudaEventElapsedTime(&e, begin, end));
            if (r > 0) t.push_back(e);
        }
        ms[0] = median(t);
        CHECK(cudaMemcpy(p_legacy.data(), ipiv32, sizeof(int) * k, cudaMemcpyDeviceToHost));

        for (int alg = 0; alg < 2; ++alg) {
            cusolverDnParams_t params;
            CHECK_STATUS(cusolverDnCreateParams(&params));
            CHECK_STATUS(cusolverDnSetAdvOptions(params, CUSOLVERDN_GETRF,
                                                 alg == 0 ? CUSOLVER_ALG_0 : CUSOLVER_ALG_1));
            size_t device_bytes = 0, host_bytes = 0;
            CHECK_STATUS(cusolverDnXgetrf_bufferSize(handle, params, m, n, CUDA_R_32F, work, m,
                                                     CUDA_R_32F, &device_bytes, &host_bytes));
            void* device_work;
            CHECK(cudaMalloc(&device_work, std::max<size_t>(device_bytes, 1)));
            std::vector<char> host_work(std::max<size_t>(host_bytes, 1));
            t.clear();
            for (int r = 0; r <= repeats; ++r) {
                CHECK(cudaMemcpy(work, original, sizeof(float) * count, cudaMemcpyDeviceToDevice));
                CHECK(cudaEventRecord(begin));
                CHECK_STATUS(cusolverDnXgetrf(handle, params, m, n, CUDA_R_32F, work, m, ipiv64,
                                              CUDA_R_32F, device_work, device_bytes,
                                              host_work.data(), host_bytes, info));
                CHECK(cudaEventRecord(end));
                CHECK(cudaEventSynchronize(end));
                float e = 0;
                CHECK(cudaEventElapsedTime(&e, begin, end));
                if (r > 0) t.push_back(e);
            }
            ms[1 + alg] = median(t);
            CHECK(cudaMemcpy(p_alg[alg].data(), ipiv64, sizeof(int64_t) * k, cudaMemcpyDeviceToHost));
            CHECK(cudaFree(device_work));
            CHECK_STATUS(cusolverDnDestroyParams(params));
        }
        int64_t differ = 0;
        for (int64_t i = 0; i < k; ++i)
            differ += (p_alg[0][i] != p_legacy[i]) + (p_alg[1][i] != p_legacy[i]);
        std::printf("%-12s %12.3f %12.3f %12.3f  %s\n", shape.c_str(), ms[0], ms[1], ms[2],
                    differ == 0 ? "equal" : (std::to_string(differ) + " differ").c_str());
        CHECK(cudaFree(original));
        CHECK(cudaFree(work));
        CHECK(cudaFree(info));
        CHECK(cudaFree(ipiv32));
        CHECK(cudaFree(ipiv64));
        CHECK(cudaFree(legacy_work));
    }
    CHECK_STATUS(cusolverDnDestroy(handle));
    return 0;
}
