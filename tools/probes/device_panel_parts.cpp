// Where the recursive device panel's time goes: each of its operations timed
// alone (CUDA events, median of 7), and the whole panel beside cuSOLVER's
// getrf on the same column-major data. Links the built library:
//   nvcc -O2 -std=c++17 -I. -Iinclude tools/probes/device_panel_parts.cpp -o /tmp/parts \
//     -Lbuild -ltandem -lcublas -lcusolver -Xlinker -rpath=$PWD/build && /tmp/parts
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <random>
#include <vector>

#include "gpu/gemm.hpp"
#include "gpu/panel_leaf.hpp"
#include "gpu/recursive_panel.hpp"

using namespace tandem::gpu;

namespace {

#define CHECK(call)                                                                      \
    do {                                                                                 \
        auto status_ = (call);                                                           \
        if (status_ != 0) {                                                              \
            std::fprintf(stderr, "%s failed (%d) at line %d\n", #call, int(status_), __LINE__); \
            std::exit(1);                                                                \
        }                                                                                \
    } while (0)

cudaStream_t stream;
cudaEvent_t start_event, stop_event;

// Median milliseconds of `run`, with `reset` before each (untimed).
double time_ms(const std::function<void()>& reset, const std::function<void()>& run) {
    std::vector<double> ms;
    for (int i = 0; i < 8; ++i) {
        reset();
        CHECK(cudaEventRecord(start_event, stream));
        run();
        CHECK(cudaEventRecord(stop_event, stream));
        CHECK(cudaEventSynchronize(stop_event));
        float t = 0;
        CHECK(cudaEventElapsedTime(&t, start_event, stop_event));
        if (i > 0) ms.push_back(t);  // the first is a warm-up
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

}  // namespace

int main() {
    CHECK(cudaStreamCreate(&stream));
    CHECK(cudaEventCreate(&start_event));
    CHECK(cudaEventCreate(&stop_event));
    cublasHandle_t blas;
    CHECK(cublasCreate(&blas));
    CHECK(cublasSetStream(blas, stream));
    cusolverDnHandle_t solver;
    CHECK(cusolverDnCreate(&solver));
    CHECK(cusolverDnSetStream(solver, stream));
    const BlasQueue queue{stream, blas};

    const int64_t n_max = 4096;
    std::vector<float> host(n_max * n_max);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (float& x : host) x = u(rng);
    float *source, *a, *work;
    int *ints;
    CHECK(cudaMalloc(&source, sizeof(float) * n_max * n_max));
    CHECK(cudaMalloc(&a, sizeof(float) * n_max * n_max));
    CHECK(cudaMalloc(&ints, sizeof(int) * (n_max + 1 + kLeafMovesInts)));
    CHECK(cudaMemcpy(source, host.data(), sizeof(float) * host.size(), cudaMemcpyHostToDevice));
    int work_floats = 0;
    CHECK(cusolverDnSgetrf_bufferSize(solver, n_max, n_max, a, n_max, &work_floats));
    CHECK(cudaMalloc(&work, sizeof(float) * work_floats));
    auto reset = [&] {
        CHECK(cudaMemcpyAsync(a, source, sizeof(float) * n_max * n_max, cudaMemcpyDeviceToDevice,
                              stream));
    };
    int* info = ints + n_max;
    int* moves = info + 1;

    std::printf("leaf kernel alone (column-major, then row-major), and its moves over 128 / 2048 columns, us\n");
    for (int64_t rows : {256, 512, 1024, 1536, 2048, 3072, 4096}) {
        const int w = leaf_width_for(rows);
        const double col = time_ms(reset, [&] {
            factor_leaf(a, rows, true, rows, w, ints, 0, info, 0, moves, stream);
        });
        const double row = time_ms(reset, [&] {
            factor_leaf(a, 128, false, rows, w, ints, 0, info, 0, moves, stream);
        });
        const double moves128 = time_ms([] {}, [&] { apply_leaf_moves(a, 128, false, 128, moves, stream); });
        const double moves2048 = time_ms([] {}, [&] { apply_leaf_moves(a, rows, true, 2048, moves, stream); });
        std::printf("  %5lld x %2d: %7.1f %7.1f   moves %6.1f %6.1f\n", (long long)rows, w,
                    1e3 * col, 1e3 * row, 1e3 * moves128, 1e3 * moves2048);
    }
    std::printf("cuBLAS TRSM (unit lower, column-major / row-major) and GEMM (c -= a b) of a node, us\n");
    for (int half : {16, 32, 64, 128, 256, 512, 1024}) {
        const int64_t below = 4096 - 2 * half;
        const double col = time_ms(reset, [&] {
            trsm_unit_lower_left(queue, half, half, a, n_max, a + half * n_max, n_max, true);
        });
        const double row = time_ms(reset, [&] {
            trsm_unit_lower_left(queue, half, half, a, n_max, a + half, n_max);
        });
        const double product = time_ms(reset, [&] {
            gemm(queue, below, half, half, -1.0f, a, n_max, a + half, n_max, 1.0f,
                 a + 2 * half * n_max, n_max);
        });
        std::printf("  %4d: trsm %7.1f %7.1f   gemm %lldx%dx%d %7.1f\n", half, 1e3 * col, 1e3 * row,
                    (long long)below, half, half, 1e3 * product);
    }
    std::printf("whole panels, column-major: recursive (cuBLAS products) vs cusolverDnSgetrf, ms\n");
    const SubtractProduct subtract = [&](int64_t m, int64_t n, int64_t k, const float* x,
                                         const float* y, float* c) {
        gemm(queue, n, m, k, -1.0f, y, n_max, x, n_max, 1.0f, c, n_max);  // c^T -= y^T x^T
    };
    for (auto [rows, width] : {std::pair<int64_t, int>{1024, 128}, {4096, 128}, {4096, 256},
                               {2048, 512}, {1024, 1024}, {2048, 2048}, {4096, 4096}}) {
        const double recursive = time_ms(reset, [&] {
            CHECK(cudaMemsetAsync(info, 0, sizeof(int), stream));
            factor_panel_recursive({a, n_max, true, rows, width, ints, info, moves}, queue, subtract);
        });
        const double cusolver = time_ms(reset, [&] {
            CHECK(cusolverDnSgetrf(solver, int(rows), width, a, int(n_max), work, ints, info));
        });
        std::printf("  %5lld x %4d: %8.3f %8.3f\n", (long long)rows, width, recursive, cusolver);
    }
    return 0;
}
