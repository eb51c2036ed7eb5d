// Row-major level-3 BLAS on the device through cuBLAS, for callers that see
// only row-major shapes: the one place tandem calls cublasSgemm, and the LU's
// TRSMs (the solves call cublasStrsm on column-major factors themselves). The
// products here are the cuBLAS route: every product under
// Options::gemm = cublas (CudaDevice::product), the recursive panel's own
// products unless tandem's kernels are forced, and the `cublas` member of the
// SGEMM menu (make_cublas_variant). The other policies send the trailing
// updates to the dispatcher (sgemm_dispatch.hpp), which runs tandem's kernels,
// cuBLASLt's or this product per shape bucket as the tuning table says.
#ifndef TANDEM_GPU_GEMM_HPP
#define TANDEM_GPU_GEMM_HPP

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace tandem::gpu {

struct SgemmVariant;

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

// gemm on the tensor cores: FP32 operands and C, the products in the
// precision `compute` names (CUBLAS_COMPUTE_32F_FAST_TF32: operands rounded to
// TF32; CUBLAS_COMPUTE_32F_FAST_16BF: to BF16), accumulated in FP32.
void gemm_tensor_cores(const BlasQueue& queue, cublasComputeType_t compute, int64_t m, int64_t n,
                       int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                       int64_t ldb, float beta, float* c, int64_t ldc);

// gemm as the SGEMM menu's variant `cublas`: the baseline that the tuner and
// the benchmark measure tandem's kernels against, and the dispatcher's choice
// wherever the tuning table says cuBLAS wins. Runs when where.cublas_handle is
// set and the leading dimensions fit in int; binds the handle to where.stream
// and uses its math mode (the default, CUBLAS_DEFAULT_MATH, is plain FP32
// without tensor cores).
SgemmVariant make_cublas_variant();

// B := inv(L) * B, i.e. solve L * X = B in place: L is m x m unit lower
// triangular (only its strict lower triangle is read), B is m x n, both
// row-major (ldl >= m, ldb >= n; the TRSM fallback of U12 = inv(L11) * A12)
// or both column-major (ldl, ldb >= m).
void trsm_unit_lower_left(const BlasQueue& queue, int64_t m, int64_t n, const float* l,
                          int64_t ldl, float* b, int64_t ldb, bool column_major = false);

// The same solve with L row-major (ldl >= m) and B column-major (ldb >= m):
// cuBLAS's left-side TRSM, which runs 1.4-1.9x as fast as the right-side one
// that a row-major B takes when B is narrow and L large (a catch-up's shapes:
// tandem-catch-up-parts).
void trsm_unit_lower_left_on_columns(const BlasQueue& queue, int64_t m, int64_t n,
                                     const float* l_row_major, int64_t ldl, float* b,
                                     int64_t ldb);

// v as cuBLAS's int, or tandem::Error (TANDEM_ERROR_INTERNAL) naming `what`.
int blas_int(int64_t v, const char* what);

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_GEMM_HPP
