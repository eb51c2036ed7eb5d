// Row-major level-3 BLAS on the device: the two products of each LU step.
// This is the seam where tandem's own SGEMM kernels will replace cuBLAS; the
// callers see only row-major shapes.
#ifndef TANDEM_GPU_GEMM_HPP
#define TANDEM_GPU_GEMM_HPP

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace tandem::gpu {

// Where a product runs: the stream, and a cuBLAS handle already bound to it
// (cublasSetStream, pointer mode host).
struct BlasQueue {
    cudaStream_t stream;
    cublasHandle_t handle;
};

// C = alpha * A * B + beta * C, row-major: A is m x k (lda >= k), B is k x n
// (ldb >= n), C is m x n (ldc >= n). Device pointers; C must not overlap A or B.
void gemm(const BlasQueue& queue, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// B := inv(L) * B, i.e. solve L * X = B in place: L is m x m unit lower
// triangular (only its strict lower triangle is read), B is m x n, both
// row-major (ldl >= m, ldb >= n; the TRSM fallback of U12 = inv(L11) * A12)
// or both column-major (ldl, ldb >= m).
void trsm_unit_lower_left(const BlasQueue& queue, int64_t m, int64_t n, const float* l,
                          int64_t ldl, float* b, int64_t ldb, bool column_major = false);

// v as cuBLAS's int, or tandem::Error (TANDEM_ERROR_INTERNAL) naming `what`.
int blas_int(int64_t v, const char* what);

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_GEMM_HPP
