// A late block's catch-up (Device::catch_up) taken apart: for an n x n matrix
// (--n, default 8192) and a block of w columns (--w, default 512) brought up
// to date with j = w .. n/2 factored columns, in ms (medians of 5):
//   catch-up        the whole operation as the factorization issues it
//   trsm / gemm     cuBLAS's TRSM with L(0:j, 0:j) and SGEMM with L(j:n, 0:j)
//                   of the same shapes, alone
//   trsm left       the same solve with the block transposed first (cuBLAS's
//                   left-side TRSM, the transpose included)
//   blocked left    that solve by blocks of 1024 rows: a TRSM with each
//                   diagonal block, one SGEMM carrying its solution into the
//                   rows below (the transpose included)
//   split B         the TRSM split in halves down to triangles of B, the
//                   halves' coupling by SGEMM
//   right-looking   what the block would have cost had it been there from the
//                   start: j / w steps of swaps, U12 and update on it
//   beside a panel  the catch-up issued while a device panel of n x 512 runs
//                   on the transfer queue, as in the factorization's first steps
// Built with the CUDA backend as build/bench/tandem-catch-up-parts.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gpu/cuda_device.hpp"
#include "gpu/transpose.hpp"
#include "probe_check.hpp"
#include "probe_timing.hpp"

int main(int argc, char** argv) {
    int64_t n = 8192, w = 512;
    for (int i = 1; i + 1 < argc; ++i) {
        if (std::string(argv[i]) == "--n") n = std::atoll(argv[i + 1]);
        if (std::string(argv[i]) == "--w") w = std::atoll(argv[i + 1]);
    }
    if (w < 1 || n < 2 * w) {  // a block right of at least w factored columns
        std::fprintf(stderr, "--w must be at least 1 and --n at least 2 w\n");
        return 2;
    }
    using tandem::Queue;
    // Small off-diagonal entries and a dominant diagonal: the triangles solve
    // to finite numbers at any j.
    std::vector<float> a(size_t(n) * n);
    std::mt19937 gen(7);
    std::uniform_real_distribution<float> u(-1e-3f, 1e-3f);
    for (int64_t c = 0; c < n; ++c)
        for (int64_t r = 0; r < n; ++r) a[size_t(c * n + r)] = (r == c) ? 1.0f : u(gen);
    std::unique_ptr<tandem::gpu::CudaDevice> dev = tandem::gpu::make_cuda_device(0);
    dev->allocate(n, n, int(w));  // panels as wide as the block, as in a factorization
    dev->upload(Queue::compute, a.data(), n, 0, 0, n, n);
    dev->synchronize();
    std::vector<int> ipiv(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) ipiv[size_t(i)] = int(i) + 1;
    int* pivots = reinterpret_cast<int*>(dev->host_alloc(n));  // room for n ints

    float *l = nullptr, *b = nullptr, *c = nullptr;
    CHECK(cudaMalloc(reinterpret_cast<void**>(&l), sizeof(float) * n * n));
    CHECK(cudaMalloc(reinterpret_cast<void**>(&b), sizeof(float) * n * w));
    CHECK(cudaMalloc(reinterpret_cast<void**>(&c), sizeof(float) * n * w));
    CHECK(cudaMemcpy(l, a.data(), sizeof(float) * n * n, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(b, a.data(), sizeof(float) * n * w, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(c, a.data(), sizeof(float) * n * w, cudaMemcpyHostToDevice));
    cublasHandle_t blas;
    CHECK(cublasCreate(&blas));
    cudaStream_t stream;
    CHECK(cudaStreamCreate(&stream));
    CHECK(cublasSetStream(blas, stream));
    float* t = nullptr;
    CHECK(cudaMalloc(reinterpret_cast<void**>(&t), sizeof(float) * n * w));
    const float one = 1.0f, minus_one = -1.0f;
    // The solve X U = B (the storage's row-major L seen column-major as U =
    // L^T, B as w x j with ld w), split: X1 U11 = B1, B2 -= X1 U12, X2 U22 = B2.
    std::function<void(int64_t, const float*, float*, int64_t)> split_trsm =
        [&](int64_t j, const float* u, float* x, int64_t base) {
            if (j <= base) {
                CHECK(cublasStrsm(blas, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                                  CUBLAS_DIAG_UNIT, int(w), int(j), &one, u, int(n), x, int(w)));
                return;
            }
            const int64_t j1 = j / 2;
            split_trsm(j1, u, x, base);
            CHECK(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, int(w), int(j - j1), int(j1), &minus_one, x,
                              int(w), u + j1 * n, int(n), &one, x + j1 * w, int(w)));
            split_trsm(j - j1, u + j1 * n + j1, x + j1 * w, base);
        };

    // L X = B with L row-major (U = L^T column-major, ld n) and B column-major
    // (j x w, ld j), by blocks of rows: U_ii^T X_i = B_i, then B_below -=
    // U(i, below)^T X_i.
    const auto blocked_left = [&](int64_t j, const float* u, float* x) {
        const int64_t block = 1024;
        for (int64_t i = 0; i < j; i += block) {
            const int64_t rows = std::min(block, j - i), below = j - i - rows;
            CHECK(cublasStrsm(blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T,
                              CUBLAS_DIAG_UNIT, int(rows), int(w), &one, u + i * n + i, int(n),
                              x + i, int(j)));
            if (below > 0)
                CHECK(cublasSgemm(blas, CUBLAS_OP_T, CUBLAS_OP_N, int(below), int(w), int(rows),
                                  &minus_one, u + (i + rows) * n + i, int(n), x + i, int(j), &one,
                                  x + i + rows, int(j)));
        }
    };

    const int64_t c0 = n - w;  // the block: the last w columns
    std::printf("n = %lld, block of %lld columns; ms, medians of 5\n", (long long)n, (long long)w);
    std::printf("%6s %10s %8s %8s %14s %16s %22s %10s %13s %10s %10s\n", "j", "catch-up", "trsm",
                "gemm", "right-looking", "beside a panel", "", "trsm left", "blocked left",
                "split 256", "split 512");
    for (int64_t j = w; j <= n / 2; j *= 2) {
        const double whole = median_ms([&] {
            dev->catch_up(Queue::compute, c0, w, j, ipiv.data());
            dev->synchronize();
        });
        // Row-major storage seen column-major: B is w x j, L^T upper on the right.
        const double trsm = median_ms([&] {
            CHECK(cublasStrsm(blas, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT,
                              int(w), int(j), &one, l, int(n), b, int(w)));
            CHECK(cudaDeviceSynchronize());
        });
        const double left = median_ms([&] {
            // B^T (w x j, ld w) -> B (j x w, ld j), then L X = B with L = U^T.
            tandem::gpu::transpose(b, w, w, j, t, j, stream);
            CHECK(cublasStrsm(blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, CUBLAS_DIAG_UNIT,
                              int(j), int(w), &one, l, int(n), t, int(j)));
            CHECK(cudaStreamSynchronize(stream));
        });
        const double blocked = median_ms([&] {
            tandem::gpu::transpose(b, w, w, j, t, j, stream);
            blocked_left(j, l, t);
            CHECK(cudaStreamSynchronize(stream));
        });
        double split[2];
        for (int i = 0; i < 2; ++i)
            split[i] = median_ms([&] {
                split_trsm(j, l, c, i == 0 ? 256 : 512);
                CHECK(cudaStreamSynchronize(stream));
            });
        const double gemm = median_ms([&] {
            CHECK(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, int(w), int(n - j), int(j), &minus_one, b, int(w),
                              l, int(n), &one, c, int(w)));
            CHECK(cudaDeviceSynchronize());
        });
        const double right = median_ms([&] {
            for (int64_t k = 0; k < j; k += w) {
                dev->take_panel(Queue::compute, k, k, n - k, int(w));
                dev->swap_rows(Queue::compute, c0, w, k, k + w, ipiv.data());
                dev->form_u12(Queue::compute, k, int(w), c0, w, false);
                dev->update_trailing(Queue::compute, k, int(w), n - k - w, c0, w);
            }
            dev->synchronize();
        });
        const double beside = median_ms([&] {
            dev->factor_panel(Queue::transfer, 0, 0, n, int(w), pivots);
            dev->catch_up(Queue::compute, c0, w, j, ipiv.data());
            dev->synchronize();
        });
        const double panel = median_ms([&] {
            dev->factor_panel(Queue::transfer, 0, 0, n, int(w), pivots);
            dev->synchronize();
        });
        std::printf("%6lld %10.3f %8.3f %8.3f %14.3f %9.3f (panel %.3f) %10.3f %13.3f %10.3f %10.3f\n",
                    (long long)j, whole, trsm, gemm, right, beside, panel, left, blocked, split[0],
                    split[1]);
    }
    dev->host_free(reinterpret_cast<float*>(pivots));
    CHECK(cublasDestroy(blas));
    CHECK(cudaStreamDestroy(stream));
    CHECK(cudaFree(t));
    CHECK(cudaFree(l));
    CHECK(cudaFree(b));
    CHECK(cudaFree(c));
    return 0;
}
