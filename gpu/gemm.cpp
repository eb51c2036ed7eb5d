#include "gpu/gemm.hpp"

#include <climits>
#include <string>

#include "gpu/cuda_check.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {

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

}  // namespace tandem::gpu
