// Where the recursive device panel's time goes: each of its operations timed
// alone (CUDA events, median of 7), and the whole panel beside cuSOLVER's
// getrf on the same column-major data. Built with the CUDA backend as
// build/bench/tandem-device-panel-parts (bench/CMakeLists.txt); no arguments.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <stdexcept>
#include <vector>

#include "gpu/gemm.hpp"
#include "gpu/panel_leaf.hpp"
#include "gpu/recursive_panel.hpp"
#include "probe_check.hpp"

using namespace tandem::gpu;

namespace {

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

    const int64_t n_max = 4096;           // the TRSM and GEMM parts: ld n_max
    const int64_t capacity = 8192 * 8192;  // floats: the largest panel
    std::vector<float> host(capacity);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (float& x : host) x = u(rng);
    float *source, *a, *work;
    int *ints;
    CHECK(cudaMalloc(&source, sizeof(float) * capacity));
    CHECK(cudaMalloc(&a, sizeof(float) * capacity));
    CHECK(cudaMalloc(&ints, sizeof(int) * (65536 + 1 + kLeafMovesInts)));
    CHECK(cudaMemcpy(source, host.data(), sizeof(float) * host.size(), cudaMemcpyHostToDevice));
    int work_floats = 0;
    CHECK(cusolverDnSgetrf_bufferSize(solver, 8192, 8192, a, 8192, &work_floats));
    CHECK(cudaMalloc(&work, sizeof(float) * work_floats));
    int64_t reset_floats = n_max * n_max;
    auto reset = [&] {
        CHECK(cudaMemcpyAsync(a, source, sizeof(float) * reset_floats, cudaMemcpyDeviceToDevice,
                              stream));
    };
    int* info = ints + 65536;
    int* moves = info + 1;

    std::printf("leaf kernel alone (column-major, then row-major with ld 128), us, and us a column;\n"
                "  its moves over 128 / 2048 columns (column-major)\n");
    for (auto [rows, w] : {std::pair<int64_t, int>{1024, 32}, {2048, 16}, {2048, 32}, {4096, 8},
                           {4096, 32}, {8192, 16}, {8192, 32}, {16384, 16}, {16384, 32},
                           {32768, 8}, {32768, 16}, {65536, 8}}) {
        reset_floats = std::min(capacity, rows * 128);
        double col = -1, row = -1;
        try {
            col = time_ms(reset, [&] { factor_leaf(a, rows, true, rows, w, ints, 0, info, 0, moves, stream); });
            row = time_ms(reset, [&] { factor_leaf(a, 128, false, rows, w, ints, 0, info, 0, moves, stream); });
        } catch (const std::exception& e) {
            std::printf("  %5lld x %2d: %s\n", (long long)rows, w, e.what());
            continue;
        }
        const double moves128 = time_ms([] {}, [&] { apply_leaf_moves(a, 128, false, 128, moves, stream); });
        const double moves2048 = time_ms([] {}, [&] { apply_leaf_moves(a, 2048, true, 2048, moves, stream); });
        std::printf("  %5lld x %2d: %7.1f %7.1f (%5.2f a column)  moves %6.1f %6.1f\n", (long long)rows, w,
                    1e3 * col, 1e3 * row, 1e3 * col / w, 1e3 * moves128, 1e3 * moves2048);
    }
    reset_floats = n_max * n_max;
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
    std::printf("whole panels, column-major (ld = rows), ms: recursive with cluster leaves,\n"
                "  with one-block leaves only (where they reach), cusolverDnSgetrf\n");
    for (auto [rows, width] : {std::pair<int64_t, int>{1024, 128}, {2048, 512}, {2048, 2048},
                               {4096, 256}, {4096, 1024}, {4096, 4096}, {8192, 512}, {8192, 8192},
                               {12288, 512}, {16384, 256}, {16384, 512}, {16384, 1024},
                               {32768, 512}, {32768, 1024}, {65536, 512}}) {
        reset_floats = rows * width;
        const SubtractProduct subtract = [&, ld = rows](int64_t m, int64_t n, int64_t k, const float* x,
                                                        const float* y, float* c) {
            gemm(queue, n, m, k, -1.0f, y, ld, x, ld, 1.0f, c, ld);  // c^T -= y^T x^T
        };
        auto recursive = [&](bool clusters) {
            set_leaf_cluster_limit(clusters ? kDefaultLeafClusterLimit : 1);
            if (!recursive_panel_fits(rows)) return -1.0;
            const double ms = time_ms(reset, [&] {
                CHECK(cudaMemsetAsync(info, 0, sizeof(int), stream));
                factor_panel_recursive({a, rows, true, rows, width, ints, info, moves}, queue, subtract);
            });
            return ms;
        };
        const double clustered = recursive(true), single = recursive(false);
        set_leaf_cluster_limit(kDefaultLeafClusterLimit);
        const double cusolver = time_ms(reset, [&] {
            CHECK(cusolverDnSgetrf(solver, int(rows), width, a, int(rows), work, ints, info));
        });
        std::printf("  %5lld x %4d: %8.3f %8.3f %8.3f   (cuSOLVER / clustered %.2fx)\n", (long long)rows,
                    width, clustered, single, cusolver, cusolver / clustered);
    }
    return 0;
}
