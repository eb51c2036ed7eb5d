// The arguments of one row-major SGEMM, C = alpha * A * B + beta * C, shared by
// every implementation of it (our kernels, the tall-skinny kernel, cuBLAS) and
// by their callers. No CUDA types: the dispatcher's users need no CUDA headers.
#ifndef TANDEM_GPU_SGEMM_ARGS_HPP
#define TANDEM_GPU_SGEMM_ARGS_HPP

#include <cstdint>

namespace tandem::gpu {

// Row-major device matrices: A is m x k (element (i, p) at a[i * lda + p],
// lda >= max(1, k)), B is k x n (ldb >= max(1, n)), C is m x n (ldc >= max(1, n)).
// C must not overlap A or B. Dimensions may be 0. As in BLAS, A and B are not
// read when alpha == 0 or k == 0, and C is not read when beta == 0 (so NaNs in
// C do not propagate).
struct SgemmArgs {
    int64_t m = 0;
    int64_t n = 0;
    int64_t k = 0;
    float alpha = 1.0f;
    const float* a = nullptr;
    int64_t lda = 1;
    const float* b = nullptr;
    int64_t ldb = 1;
    float beta = 0.0f;
    float* c = nullptr;
    int64_t ldc = 1;
};

// The product as our kernels take it, by value in their parameters (each
// kernel's parameter struct adds its own fields): 32-bit sizes, which
// check_sgemm_args has bounded.
struct SgemmKernelProduct {
    int m, n, k;
    float alpha, beta;
    const float* a;
    const float* b;
    float* c;
    int64_t lda, ldb, ldc;
};

inline SgemmKernelProduct sgemm_kernel_product(const SgemmArgs& args) {
    return {int(args.m), int(args.n), int(args.k), args.alpha, args.beta, args.a, args.b,
            args.c,      args.lda,    args.ldb,    args.ldc};
}

// Where a product runs: a cudaStream_t, and for the `cublas` variant a
// cublasHandle_t (pointer mode host) that the call binds to that stream.
struct SgemmStream {
    void* stream = nullptr;
    void* cublas_handle = nullptr;
};

// Throws tandem::Error (TANDEM_ERROR_INTERNAL) naming the first bad argument:
// negative or over-int-range dimensions, leading dimensions below the width,
// or a null matrix pointer that the product would use.
void check_sgemm_args(const SgemmArgs& args);

// Whether B and C allow 16-byte vector access: both pointers 16-byte aligned
// and ldb, ldc multiples of 4 (A is always read 4 bytes at a time).
bool sgemm_vector_aligned(const SgemmArgs& args);
// The same for A, B and C (what cuBLASLt's vector kernels need).
bool sgemm_all_vector_aligned(const SgemmArgs& args);

// Useful flops of the product, 2 m n k.
double sgemm_flops(const SgemmArgs& args);

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_SGEMM_ARGS_HPP
