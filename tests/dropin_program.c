/* A program written for LAPACK alone (the Fortran-ABI sgesv_, sgetrf_,
 * sgetrs_), as an existing C or Fortran program is: the drop-in test runs it
 * with and without libtandem_lapack in front of the system LAPACK. It solves
 * A x = b and A^T y = c at n = 300 and checks the scaled residuals against
 * LAPACK's threshold of 30, then passes a bad LDA and expects INFO = -4.
 * Prints "ok" and exits 0 when everything holds. */
#include <math.h>
#include <stdio.h>
#include <string.h>

void sgesv_(const int* n, const int* nrhs, float* a, const int* lda, int* ipiv, float* b,
            const int* ldb, int* info);
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void sgetrs_(const char* trans, const int* n, const int* nrhs, const float* a, const int* lda,
             const int* ipiv, float* b, const int* ldb, int* info, size_t trans_length);

enum { N = 300 };
static float a[N * N], lu[N * N], b[N], x[N];
static int ipiv[N];

/* ||op(A) x - b||_1 / (||A||_1 ||x||_1 n eps) in double. */
static double residual(int transposed) {
    double anorm = 0.0, xnorm = 0.0, rnorm = 0.0;
    for (int j = 0; j < N; ++j) {
        double column = 0.0;
        for (int i = 0; i < N; ++i) column += fabs(a[i + j * N]);
        if (column > anorm) anorm = column;
        xnorm += fabs(x[j]);
    }
    for (int i = 0; i < N; ++i) {
        double r = -b[i];
        for (int j = 0; j < N; ++j) r += (double)(transposed ? a[j + i * N] : a[i + j * N]) * x[j];
        rnorm += fabs(r);
    }
    return rnorm / (anorm * xnorm * N * 5.96e-8);
}

int main(void) {
    unsigned state = 7u;
    for (int i = 0; i < N * N; ++i) {
        state = state * 1664525u + 1013904223u;
        a[i] = (float)(state >> 8) / (float)(1u << 24) - 0.5f;
    }
    for (int i = 0; i < N; ++i) b[i] = 1.0f - (float)i / N;
    const int n = N, one = 1;
    int info = 0, failures = 0;

    memcpy(lu, a, sizeof a);
    memcpy(x, b, sizeof b);
    sgesv_(&n, &one, lu, &n, ipiv, x, &n, &info);
    const double r1 = residual(0);
    printf("sgesv: info %d, residual %.3g\n", info, r1);
    failures += info != 0 || !(r1 <= 30.0);

    memcpy(lu, a, sizeof a);
    memcpy(x, b, sizeof b);
    sgetrf_(&n, &n, lu, &n, ipiv, &info);
    failures += info != 0;
    sgetrs_("T", &n, &one, lu, &n, ipiv, x, &n, &info, 1);
    const double r2 = residual(1);
    printf("sgetrf + sgetrs('T'): info %d, residual %.3g\n", info, r2);
    failures += info != 0 || !(r2 <= 30.0);

    const int bad_lda = N - 1;
    sgesv_(&n, &one, lu, &bad_lda, ipiv, x, &n, &info);
    printf("sgesv with LDA = n - 1: info %d (LAPACK: -4)\n", info);
    failures += info != -4;

    printf("%s\n", failures == 0 ? "ok" : "FAILED");
    return failures == 0 ? 0 : 1;
}
