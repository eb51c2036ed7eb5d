// Where the recursive device panel's time goes: each of its operations timed
// alone (CUDA events, median of 7), the whole panel beside cuSOLVER's getrf on
// the same column-major data, and, for the short panels of a factorization's
// last steps, whether the host's issuing or the GPU bounds them. Built with
// the CUDA backend as build/bench/tandem-device-panel-parts
// (bench/CMakeLists.txt); no arguments.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <chrono>
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

// Milliseconds between CUDA events recorded on `stream` around `run`, and,
// in `host`, the host's milliseconds in `run` (its issuing).
double events_around(const std::function<void()>& run, double* host = nullptr) {
    CHECK(cudaEventRecord(start_event, stream));
    const auto issued_from = std::chrono::steady_clock::now();
    run();
    const std::chrono::duration<double, std::milli> issuing = std::chrono::steady_clock::now() - issued_from;
    if (host) *host = issuing.count();
    CHECK(cudaEventRecord(stop_event, stream));
    CHECK(cudaEventSynchronize(stop_event));
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, start_event, stop_event));
    return t;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// The recursion's c -= x y on column-major blocks of leading dimension ld:
// row-major c^T -= y^T x^T to gemm.
SubtractProduct column_major_subtract(const BlasQueue& queue, int64_t ld) {
    return [&queue, ld](int64_t m, int64_t n, int64_t k, const float* x, const float* y, float* c) {
        gemm(queue, n, m, k, -1.0f, y, ld, x, ld, 1.0f, c, ld);
    };
}

// Median milliseconds of `run`, with `reset` before each (untimed).
double time_ms(const std::function<void()>& reset, const std::function<void()>& run) {
    std::vector<double> ms;
    for (int i = 0; i < 8; ++i) {
        reset();
        const double t = events_around(run);
        if (i > 0) ms.push_back(t);  // the first is a warm-up
    }
    return median(ms);
}

// Medians of 7 (after a warm-up) of `run`'s time as issued (CUDA events, the
// host issuing inside them), of the host's time to issue it, and of its time
// on the GPU alone: queued behind `hold` (a long SGEMM), so that all of it is
// issued before the GPU reaches it.
struct IssueAndGpu {
    double events, issue, gpu;
};
IssueAndGpu time_issue_and_gpu(const std::function<void()>& reset, const std::function<void()>& hold,
                               const std::function<void()>& run) {
    std::vector<double> events, issue, gpu;
    for (int i = 0; i < 8; ++i) {
        reset();
        CHECK(cudaStreamSynchronize(stream));
        double host = 0;
        const double as_issued = events_around(run, &host);
        reset();
        hold();
        const double alone = events_around(run);
        if (i == 0) continue;  // a warm-up
        events.push_back(as_issued);
        issue.push_back(host);
        gpu.push_back(alone);
    }
    return {median(events), median(issue), median(gpu)};
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
    // The pivots, the info and moves lists: a list a column for the short
    // panels that keep their leaves' moves (panel_scratch_ints), one elsewhere.
    CHECK(cudaMalloc(&ints, sizeof(int) * (65536 + panel_scratch_ints(12288, 1024))));
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
        const SubtractProduct subtract = column_major_subtract(queue, rows);
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
    // A factorization's last panels are short: is their time the host's
    // issuing of the recursion's launches, or the GPU's chain of them?
    std::printf("short panels 1024 wide, column-major, ms: as issued / the host's issuing / on the GPU\n"
                "  alone (queued behind an 8192^3 SGEMM), recursive, then cusolverDnSgetrf\n");
    float* held = nullptr;
    CHECK(cudaMalloc(&held, sizeof(float) * 8192 * 8192));
    const auto hold = [&] {
        gemm(queue, 8192, 8192, 8192, 1.0f, source, 8192, source, 8192, 0.0f, held, 8192);
    };
    for (int64_t rows : {1024, 2048, 4096, 8192, 16384}) {
        const int width = 1024;
        reset_floats = rows * width;
        const SubtractProduct subtract = column_major_subtract(queue, rows);
        const int lists = panel_move_lists(rows, width);
        const IssueAndGpu recursive = time_issue_and_gpu(reset, hold, [&] {
            CHECK(cudaMemsetAsync(info, 0, sizeof(int), stream));
            factor_panel_recursive({a, rows, true, rows, width, ints, info, moves, lists}, queue, subtract);
        });
        const IssueAndGpu cusolver = time_issue_and_gpu(reset, hold, [&] {
            CHECK(cusolverDnSgetrf(solver, int(rows), width, a, int(rows), work, ints, info));
        });
        std::printf("  %5lld: %7.3f %7.3f %7.3f   %7.3f %7.3f %7.3f\n", (long long)rows, recursive.events,
                    recursive.issue, recursive.gpu, cusolver.events, cusolver.issue, cusolver.gpu);
    }
    CHECK(cudaFree(held));
    return 0;
}
