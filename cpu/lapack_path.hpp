// The CPU path: tandem's calls answered by LAPACK (OpenBLAS) on the host,
// column-major, giving exactly LAPACK's results.
#ifndef TANDEM_CPU_LAPACK_PATH_HPP
#define TANDEM_CPU_LAPACK_PATH_HPP

#include <cstdint>

namespace tandem {

// LAPACK sgetrf; returns info (>= 0: arguments are checked before).
int lapack_getrf(int m, int n, float* a, int lda, int* ipiv);

// LAPACK sgetrs with trans 'N' or 'T'.
void lapack_getrs(char trans, int n, int nrhs, const float* a, int lda, const int* ipiv,
                  float* b, int ldb);

// Name of the BLAS/LAPACK in use, e.g. "OpenBLAS 0.3.21 (16 threads)".
const char* lapack_name();

}  // namespace tandem

#endif
