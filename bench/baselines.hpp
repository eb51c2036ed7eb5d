// The baselines tandem is measured against: LAPACK's sgetrf on the CPU (the
// BLAS/LAPACK tandem links, through LAPACKE) and cuSOLVER's cusolverDnSgetrf.
// Each runs one warm-up and `repeats` timed factorizations of fresh copies of
// the original matrix, leaving the last run's factors and pivots to be checked.
// Failures throw std::runtime_error naming the failing call.
#ifndef TANDEM_BENCH_BASELINES_HPP
#define TANDEM_BENCH_BASELINES_HPP

#include <vector>

namespace tandem_bench {

// Seconds of each timed LAPACK sgetrf (host wall clock; restoring the copy is
// not timed). `factors` holds n*n floats, `ipiv` n ints.
std::vector<double> time_lapack_sgetrf(int n, const float* original, float* factors, int* ipiv,
                                       int repeats);

struct CusolverTimes {
    // cusolverDnSgetrf alone, the matrix already on the device (CUDA events).
    std::vector<double> factor_seconds;
    // The same run from the host's view: copy A (pageable) to the device, factor,
    // copy A and ipiv back; host wall clock, as tandem is timed.
    std::vector<double> with_transfer_seconds;
};

// Whether this build has the cuSOLVER baseline (the CUDA backend was compiled).
bool cusolver_compiled();

// cuSOLVER's getrf with partial pivoting on CUDA device 0.
CusolverTimes time_cusolver_sgetrf(int n, const float* original, float* factors, int* ipiv,
                                   int repeats);

}  // namespace tandem_bench

#endif
