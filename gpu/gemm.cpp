#include "gpu/gemm.hpp"

#include <climits>
#include <string>

#include "gpu/cuda_check.hpp"
#include "gpu/sgemm_variants.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {
namespace {

bool can_run_cublas(const SgemmArgs& args, const SgemmStream& where) {
    return where.cublas_handle != nullptr && args.lda <= INT_MAX && args.ldb <= INT_MAX &&
           args.ldc <= INT_MAX;
}

// SgemmStream leaves binding the handle to where.stream to the call (its owner
// need not have), so gemm's bound queue is made here.
void run_cublas(const SgemmArgs& args, const SgemmStream& where) {
    const BlasQueue queue{static_cast<cudaStream_t>(where.stream),
                          static_cast<cublasHandle_t>(where.cublas_handle)};
    TANDEM_CUBLAS_CHECK(cublasSetStream(queue.handle, queue.stream));
    gemm(queue, args.m, args.n, args.k, args.alpha, args.a, args.lda, args.b, args.ldb, args.beta,
         args.c, args.ldc);
}

}  // namespace

int blas_int(int64_t v, const char* what) {
    if (v < 0 || v > INT_MAX)
        throw Error(TANDEM_ERROR_INTERNAL, std::string("cuBLAS argument ") + what + " = " +
                                               std::to_string(v) + " does not fit in an int");
    return static_cast<int>(v);
}

// cuBLAS is column-major, and a row-major matrix read as column-major is its
// transpose. So C = A B (row-major) is computed as C^T = B^T A^T (column-major):
// the same memory, operands swapped, no transposition flags.
void gemm(const BlasQueue& queue, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
    if (m <= 0 || n <= 0) return;
    TANDEM_CUBLAS_CHECK(cublasSgemm(queue.handle, CUBLAS_OP_N, CUBLAS_OP_N, blas_int(n, "n"),
                                    blas_int(m, "m"), blas_int(k, "k"), &alpha, b,
                                    blas_int(ldb, "ldb"), a, blas_int(lda, "lda"), &beta, c,
                                    blas_int(ldc, "ldc")));
}

void gemm_tensor_cores(const BlasQueue& queue, cublasComputeType_t compute, int64_t m, int64_t n,
                       int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                       int64_t ldb, float beta, float* c, int64_t ldc) {
    if (m <= 0 || n <= 0) return;
    TANDEM_CUBLAS_CHECK(cublasGemmEx(queue.handle, CUBLAS_OP_N, CUBLAS_OP_N, blas_int(n, "n"),
                                     blas_int(m, "m"), blas_int(k, "k"), &alpha, b, CUDA_R_32F,
                                     blas_int(ldb, "ldb"), a, CUDA_R_32F, blas_int(lda, "lda"),
                                     &beta, c, CUDA_R_32F, blas_int(ldc, "ldc"), compute,
                                     CUBLAS_GEMM_DEFAULT));
}

SgemmVariant make_cublas_variant() {
    SgemmVariant variant;
    variant.name = kCublasVariant;
    variant.can_run = &can_run_cublas;
    variant.run = &run_cublas;
    return variant;
}

// L X = B (row-major) is X^T L^T = B^T (column-major): a right-side solve with
// L^T, which column-major cuBLAS sees as the UPPER triangle of the stored array.
// Column-major L and B are cuBLAS's own layout: a left-side lower solve.
void trsm_unit_lower_left(const BlasQueue& queue, int64_t m, int64_t n, const float* l,
                          int64_t ldl, float* b, int64_t ldb, bool column_major) {
    if (m <= 0 || n <= 0) return;
    const float one = 1.0f;
    const int rows = blas_int(column_major ? m : n, "rows of B");
    const int cols = blas_int(column_major ? n : m, "columns of B");
    TANDEM_CUBLAS_CHECK(cublasStrsm(queue.handle, column_major ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT,
                                    column_major ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER,
                                    CUBLAS_OP_N, CUBLAS_DIAG_UNIT, rows, cols, &one, l,
                                    blas_int(ldl, "ldl"), b, blas_int(ldb, "ldb")));
}

void trsm_unit_lower_left_on_columns(const BlasQueue& queue, int64_t m, int64_t n,
                                     const float* l_row_major, int64_t ldl, float* b,
                                     int64_t ldb) {
    if (m <= 0 || n <= 0) return;
    const float one = 1.0f;
    // L row-major is U = L^T column-major: solve U^T X = B.
    TANDEM_CUBLAS_CHECK(cublasStrsm(queue.handle, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER,
                                    CUBLAS_OP_T, CUBLAS_DIAG_UNIT, blas_int(m, "rows of B"),
                                    blas_int(n, "columns of B"), &one, l_row_major,
                                    blas_int(ldl, "ldl"), b, blas_int(ldb, "ldb")));
}

}  // namespace tandem::gpu
