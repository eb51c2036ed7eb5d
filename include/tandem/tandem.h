/*
 * tandem: dense LU factorization and solve in single precision, CPU + GPU.
 *
 * C ABI. Every function returns LAPACK's INFO:
 *   info = 0      success
 *   info = -i     the i-th argument had an illegal value; arguments are counted
 *                 as LAPACKE counts them, with `layout` as argument 1. The
 *                 caller's arrays are left untouched.
 *   info = i > 0  U(i,i) is exactly zero. The factorization was completed (as
 *                 LAPACK does); solving with it would divide by zero, so
 *                 tandem_sgesv leaves B untouched in that case.
 *   info <= TANDEM_ERROR_BACKEND_UNAVAILABLE
 *                 a run-time failure (see the TANDEM_ERROR_* codes below);
 *                 tandem_last_error() describes it. Arrays are untouched,
 *                 except when tandem_sgesv's solve fails on a GPU after its
 *                 factorization succeeded: A and ipiv then hold the factors and
 *                 B may be partially overwritten (the error text says so).
 *
 * layout is TANDEM_COL_MAJOR (102) or TANDEM_ROW_MAJOR (101), as LAPACKE.
 * Pivot indices in ipiv are 1-based: row i was interchanged with row ipiv[i-1].
 */
#ifndef TANDEM_TANDEM_H
#define TANDEM_TANDEM_H

#ifdef __cplusplus
extern "C" {
#endif

#define TANDEM_ROW_MAJOR 101
#define TANDEM_COL_MAJOR 102

/* Run-time failures, all below any argument index. */
#define TANDEM_ERROR_BACKEND_UNAVAILABLE (-1001) /* e.g. GPU asked for, none present */
#define TANDEM_ERROR_DEVICE (-1002)              /* a CUDA/cuBLAS/cuSOLVER call failed */
#define TANDEM_ERROR_OUT_OF_MEMORY (-1003)       /* host or device allocation failed */
#define TANDEM_ERROR_INTERNAL (-1004)            /* LAPACK or an internal check failed */

/* P*A = L*U of the m x n matrix A. */
int tandem_sgetrf(int layout, int m, int n, float* a, int lda, int* ipiv);

/* P*A = L*U of the column-major m x n matrix d_a in GPU memory, and the
 * solves with it (see tandem::sgetrf_gpu, sgetrs_gpu, sgesv_gpu); ipiv is host
 * memory. No layout argument: info -i names argument i of these signatures. */
int tandem_sgetrf_gpu(int m, int n, float* d_a, int ldda, int* ipiv);
int tandem_sgetrs_gpu(char trans, int n, int nrhs, const float* d_a, int ldda, const int* ipiv,
                      float* d_b, int lddb);
int tandem_sgesv_gpu(int n, int nrhs, float* d_a, int ldda, int* ipiv, float* d_b, int lddb);

/* Solve op(A)*X = B with the factors from tandem_sgetrf; trans is 'N', 'T' or
 * 'C' in either case. B is n x nrhs. */
int tandem_sgetrs(int layout, char trans, int n, int nrhs, const float* a, int lda,
                  const int* ipiv, float* b, int ldb);

/* Solve A*X = B: tandem_sgetrf followed by tandem_sgetrs. */
int tandem_sgesv(int layout, int n, int nrhs, float* a, int lda, int* ipiv, float* b,
                 int ldb);

/* Solve A*X = B by a lower-precision LU refined to FP32 quality, as LAPACK's
 * DSGESV (see tandem::sgesv_refined): X is separate from B; iter >= 0 is the
 * number of corrections (A unchanged), iter < 0 says why tandem_sgesv's FP32
 * factors answered instead (A and ipiv hold them). */
int tandem_sgesv_refined(int layout, int n, int nrhs, float* a, int lda, int* ipiv,
                         const float* b, int ldb, float* x, int ldx, int* iter);
int tandem_sgesv_refined_gpu(int n, int nrhs, float* d_a, int ldda, int* ipiv, const float* d_b,
                             int lddb, float* d_x, int lddx, int* iter);

/* Text of the last run-time error or argument error on this thread ("" if none). */
const char* tandem_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* TANDEM_TANDEM_H */
