// Probe: a panel factorization beside the trailing update, with and without SMs
// of its own. At n = 16384 the device panels (cuSOLVER getrf on rows x 512)
// take 2 ms alone and 3-4 ms beside the update (2026-11-22 trace): the update's
// blocks hold every SM, and each of the panel's many small kernels waits for
// some to retire, high stream priority notwithstanding. A green context gives
// the panel R SMs of its own and the update the rest. This probe times, in one
// process: each alone, both side by side on the whole GPU (panel stream at high
// priority, as tandem runs them), and both side by side in two green contexts
// for each R.
//
// --panel recursive: tandem's recursive panel (gpu/recursive_panel.hpp, cuBLAS
// products on a handle of its own) instead of cuSOLVER's getrf; --cluster-limit
// B: its leaves' clusters of at most B blocks (1: one-block leaves).
//
// Build (links the built library):
//   nvcc -O3 -std=c++17 -arch=sm_90 -I. -Iinclude tools/probes/green_partition.cu \
//        -o build/green_partition -Lbuild -ltandem -lcublas -lcusolver -lcuda \
//        -Xlinker -rpath=$PWD/build
// Run:
//   build/green_partition --rows 16384 --width 512 --cols 16384 --reserve 8,16,24,32 \
//        --panel recursive
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "gpu/gemm.hpp"
#include "gpu/panel_leaf.hpp"
#include "gpu/recursive_panel.hpp"
#include "probe_check.cuh"
#include "probe_data.cuh"

#define CHECK_CU(call)                                                                  \
    do {                                                                                \
        CUresult r_ = (call);                                                           \
        if (r_ != CUDA_SUCCESS) {                                                       \
            const char* s_ = nullptr;                                                   \
            cuGetErrorString(r_, &s_);                                                  \
            std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, s_); \
            std::exit(1);                                                               \
        }                                                                               \
    } while (0)

namespace {

struct Args {
    int rows = 16384, width = 512, cols = 16384, repeats = 5;
    std::vector<int> reserve = {8, 16, 24, 32};
    bool recursive = false;
    int cluster_limit = tandem::gpu::kDefaultLeafClusterLimit;
};

// The two jobs, each on its own stream and handles.
struct Jobs {
    const Args& a;
    float *panel, *panel_copy, *work, *A, *B, *C;
    int* pivots;
    cusolverDnHandle_t solver;
    cublasHandle_t blas, panel_blas;

    void reset_panel(cudaStream_t s) {
        CHECK(cudaMemcpyAsync(panel, panel_copy, sizeof(float) * size_t(a.rows) * a.width,
                              cudaMemcpyDeviceToDevice, s));
    }
    void factor(cudaStream_t s) {
        if (a.recursive) {
            using namespace tandem::gpu;
            CHECK_STATUS(cublasSetStream(panel_blas, s));
            const BlasQueue queue{s, panel_blas};
            const int64_t ld = a.rows;
            CHECK(cudaMemsetAsync(pivots + a.width, 0, sizeof(int), s));
            factor_panel_recursive({panel, ld, true, a.rows, a.width, pivots, pivots + a.width,
                                    pivots + a.width + 1},
                                   queue, [&](int64_t m, int64_t n, int64_t k, const float* x,
                                              const float* y, float* c) {
                                       gemm(queue, n, m, k, -1.0f, y, ld, x, ld, 1.0f, c, ld);
                                   });
            return;
        }
        CHECK_STATUS(cusolverDnSetStream(solver, s));
        CHECK_STATUS(cusolverDnSgetrf(solver, a.rows, a.width, panel, a.rows, work, pivots,
                                   pivots + a.width));
    }
    void update(cudaStream_t s) {
        const float minus = -1.0f, one = 1.0f;
        CHECK_STATUS(cublasSetStream(blas, s));
        CHECK_STATUS(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, a.rows, a.cols, a.width, &minus, A,
                              a.rows, B, a.width, &one, C, a.rows));
    }
};

// Seconds between two events recorded around `work` on stream s.
struct Span {
    cudaEvent_t begin, end;
    Span() {
        CHECK(cudaEventCreate(&begin));
        CHECK(cudaEventCreate(&end));
    }
    double seconds() const {
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, begin, end));
        return ms * 1e-3;
    }
};

void report(const char* what, int panel_sms, int update_sms, double panel, double update,
            double both) {
    std::printf("%-34s panel SMs %3d update SMs %3d | panel %7.3f ms | update %7.3f ms | both %7.3f ms\n",
                what, panel_sms, update_sms, panel * 1e3, update * 1e3, both * 1e3);
}

// Alone, then side by side: medians over repeats.
void measure(Jobs& jobs, const Args& a, cudaStream_t panel_stream, cudaStream_t update_stream,
             const char* what, int panel_sms, int update_sms) {
    std::vector<double> p_alone, u_alone, p_both, u_both, wall;
    Span sp, su;
    for (int r = 0; r < a.repeats + 1; ++r) {
        jobs.reset_panel(panel_stream);
        CHECK(cudaStreamSynchronize(panel_stream));
        CHECK(cudaEventRecord(sp.begin, panel_stream));
        jobs.factor(panel_stream);
        CHECK(cudaEventRecord(sp.end, panel_stream));
        CHECK(cudaEventSynchronize(sp.end));
        CHECK(cudaEventRecord(su.begin, update_stream));
        jobs.update(update_stream);
        CHECK(cudaEventRecord(su.end, update_stream));
        CHECK(cudaEventSynchronize(su.end));
        if (r > 0) p_alone.push_back(sp.seconds()), u_alone.push_back(su.seconds());

        jobs.reset_panel(panel_stream);
        CHECK(cudaStreamSynchronize(panel_stream));
        const auto t0 = std::chrono::steady_clock::now();
        CHECK(cudaEventRecord(su.begin, update_stream));
        jobs.update(update_stream);
        CHECK(cudaEventRecord(su.end, update_stream));
        CHECK(cudaEventRecord(sp.begin, panel_stream));
        jobs.factor(panel_stream);
        CHECK(cudaEventRecord(sp.end, panel_stream));
        CHECK(cudaEventSynchronize(sp.end));
        CHECK(cudaEventSynchronize(su.end));
        const auto t1 = std::chrono::steady_clock::now();
        if (r > 0) {
            p_both.push_back(sp.seconds());
            u_both.push_back(su.seconds());
            wall.push_back(std::chrono::duration<double>(t1 - t0).count());
        }
    }
    char alone[80], beside[80];
    std::snprintf(alone, sizeof alone, "%s, alone", what);
    std::snprintf(beside, sizeof beside, "%s, side by side", what);
    report(alone, panel_sms, update_sms, median(p_alone), median(u_alone), 0.0);
    report(beside, panel_sms, update_sms, median(p_both), median(u_both), median(wall));
}

std::vector<int> parse_list(const char* s) {
    std::vector<int> out;
    for (const char* p = s; *p;) {
        out.push_back(std::atoi(p));
        while (*p && *p != ',') ++p;
        if (*p == ',') ++p;
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    Args a;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string k = argv[i];
        if (k == "--rows") a.rows = std::atoi(argv[i + 1]);
        else if (k == "--width") a.width = std::atoi(argv[i + 1]);
        else if (k == "--cols") a.cols = std::atoi(argv[i + 1]);
        else if (k == "--repeats") a.repeats = std::atoi(argv[i + 1]);
        else if (k == "--reserve") a.reserve = parse_list(argv[i + 1]);
        else if (k == "--panel") a.recursive = std::string(argv[i + 1]) == "recursive";
        else if (k == "--cluster-limit") a.cluster_limit = std::atoi(argv[i + 1]);
    }
    tandem::gpu::set_leaf_cluster_limit(a.cluster_limit);
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(nullptr));  // the primary context, current
    CHECK_CU(cuInit(0));
    CUdevice dev;
    CHECK_CU(cuDeviceGet(&dev, 0));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("%s, %d SMs; panel %d x %d (%s, leaf clusters up to %d blocks), update %d x %d x %d (sgemm)\n",
                prop.name, prop.multiProcessorCount, a.rows, a.width,
                a.recursive ? "recursive" : "getrf", a.cluster_limit, a.rows, a.cols, a.width);

    Jobs jobs{a};
    const size_t panel_n = size_t(a.rows) * a.width;
    CHECK(cudaMalloc(&jobs.panel, sizeof(float) * panel_n));
    CHECK(cudaMalloc(&jobs.panel_copy, sizeof(float) * panel_n));
    CHECK(cudaMalloc(&jobs.A, sizeof(float) * panel_n));
    CHECK(cudaMalloc(&jobs.B, sizeof(float) * size_t(a.width) * a.cols));
    CHECK(cudaMalloc(&jobs.C, sizeof(float) * size_t(a.rows) * a.cols));
    CHECK(cudaMalloc(&jobs.pivots, sizeof(int) * (a.width + 1 + tandem::gpu::kLeafMovesInts)));
    fill_random(jobs.panel_copy, panel_n, 1);
    fill_random(jobs.A, panel_n, 2);
    fill_random(jobs.B, size_t(a.width) * a.cols, 3);
    fill_random(jobs.C, size_t(a.rows) * a.cols, 4);
    CHECK(cudaDeviceSynchronize());
    CHECK_STATUS(cusolverDnCreate(&jobs.solver));
    CHECK_STATUS(cublasCreate(&jobs.blas));
    CHECK_STATUS(cublasCreate(&jobs.panel_blas));
    int work_n = 0;
    CHECK_STATUS(cusolverDnSgetrf_bufferSize(jobs.solver, a.rows, a.width, jobs.panel, a.rows, &work_n));
    CHECK(cudaMalloc(&jobs.work, sizeof(float) * std::max(work_n, 1)));

    int low = 0, high = 0;
    CHECK(cudaDeviceGetStreamPriorityRange(&low, &high));
    cudaStream_t panel_stream, update_stream;
    CHECK(cudaStreamCreateWithPriority(&panel_stream, cudaStreamNonBlocking, high));
    CHECK(cudaStreamCreateWithPriority(&update_stream, cudaStreamNonBlocking, low));
    measure(jobs, a, panel_stream, update_stream, "whole GPU", prop.multiProcessorCount,
            prop.multiProcessorCount);

    CUdevResource all;
    CHECK_CU(cuDeviceGetDevResource(dev, &all, CU_DEV_RESOURCE_TYPE_SM));
    for (int r : a.reserve) {
        CUdevResource group, rest;
        unsigned int groups = 1;
        CHECK_CU(cuDevSmResourceSplitByCount(&group, &groups, &all, &rest, 0, r));
        CUdevResourceDesc panel_desc, update_desc;
        CHECK_CU(cuDevResourceGenerateDesc(&panel_desc, &group, 1));
        CHECK_CU(cuDevResourceGenerateDesc(&update_desc, &rest, 1));
        CUgreenCtx panel_ctx, update_ctx;
        CHECK_CU(cuGreenCtxCreate(&panel_ctx, panel_desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
        CHECK_CU(cuGreenCtxCreate(&update_ctx, update_desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
        CUstream ps, us;
        CHECK_CU(cuGreenCtxStreamCreate(&ps, panel_ctx, CU_STREAM_NON_BLOCKING, high));
        CHECK_CU(cuGreenCtxStreamCreate(&us, update_ctx, CU_STREAM_NON_BLOCKING, low));
        char what[64];
        std::snprintf(what, sizeof what, "green contexts, reserve %d", r);
        measure(jobs, a, ps, us, what, int(group.sm.smCount), int(rest.sm.smCount));
        // The panel in its own SMs, the update on the whole GPU's primary stream
        // (it then shares the panel's SMs when they are idle).
        std::snprintf(what, sizeof what, "panel green %d, update primary", r);
        measure(jobs, a, ps, update_stream, what, int(group.sm.smCount), prop.multiProcessorCount);
        CHECK(cudaDeviceSynchronize());
        CHECK_CU(cuStreamDestroy(ps));
        CHECK_CU(cuStreamDestroy(us));
        CHECK_CU(cuGreenCtxDestroy(panel_ctx));
        CHECK_CU(cuGreenCtxDestroy(update_ctx));
    }
    std::printf("done\n");
    return 0;
}
