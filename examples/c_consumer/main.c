/* Solves a 100 x 100 system with an installed tandem from C (built through
 * pkg-config) and checks the residual ||A x - b||_1 / (||A||_1 ||x||_1 n eps)
 * against LAPACK's threshold of 30. Exit status 0 on success, 1 on failure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tandem/tandem.h>

enum { N = 100 };

int main(void) {
    static float a[N * N], lu[N * N], b[N], x[N];
    int ipiv[N];
    unsigned state = 2024u;
    for (int i = 0; i < N * N; ++i) {
        state = state * 1664525u + 1013904223u;
        a[i] = (float)(state >> 8) / (float)(1u << 24) - 0.5f;
    }
    for (int i = 0; i < N; ++i) b[i] = 1.0f + (float)i / N;
    memcpy(lu, a, sizeof a);
    memcpy(x, b, sizeof b);

    const int info = tandem_sgesv(TANDEM_COL_MAJOR, N, 1, lu, N, ipiv, x, N);
    if (info != 0) {
        fprintf(stderr, "tandem_sgesv returned %d: %s\n", info, tandem_last_error());
        return 1;
    }
    double anorm = 0.0, xnorm = 0.0, rnorm = 0.0;
    for (int j = 0; j < N; ++j) {
        double column = 0.0;
        for (int i = 0; i < N; ++i) column += fabs(a[i + j * N]);
        if (column > anorm) anorm = column;
        xnorm += fabs(x[j]);
    }
    for (int i = 0; i < N; ++i) {
        double r = -b[i];
        for (int j = 0; j < N; ++j) r += (double)a[i + j * N] * x[j];
        rnorm += fabs(r);
    }
    const double ratio = rnorm / (anorm * xnorm * N * 5.96e-8);
    printf("tandem from C: n = %d, residual ratio %.3g (limit 30)\n", N, ratio);
    return ratio <= 30.0 ? 0 : 1;
}
