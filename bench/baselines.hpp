// The baselines tandem is measured against: LAPACK's sgetrf and sgesv on the
// CPU (the BLAS/LAPACK tandem links, through LAPACKE) and cuSOLVER's
// cusolverDnSgetrf, getrf + getrs and its mixed-precision IRS solvers.
// Each runs a warm-up (timing.hpp) and `repeats` timed runs on fresh copies of
// the original arrays, leaving the last run's results to be checked.
// Failures throw std::runtime_error naming the failing call.
#ifndef TANDEM_BENCH_BASELINES_HPP
#define TANDEM_BENCH_BASELINES_HPP

#include <stdexcept>
#include <vector>

namespace tandem_bench {

// Thrown when the library or the GPU does not offer a baseline for the
// arguments given (a cuSOLVER "not supported" status): the sweep reports the
// baseline as unavailable rather than failed.
class BaselineUnsupported : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Seconds of each timed LAPACK sgetrf (host wall clock; restoring the copy is
// not timed). `factors` holds n*n floats, `ipiv` n ints.
std::vector<double> time_lapack_sgetrf(int n, const float* original, float* factors, int* ipiv,
                                       int repeats);

// Seconds of each timed LAPACK sgesv of A X = B (host wall clock; restoring the
// copies is not timed). `a` (n*n) and `b` (n*nrhs) are the originals; the last
// run leaves its LU factors in `factors` (n*n), X in `x` (n*nrhs) and its
// pivots in `ipiv` (n).
std::vector<double> time_lapack_sgesv(int n, int nrhs, const float* a, const float* b,
                                      float* factors, float* x, int* ipiv, int repeats);

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

// cusolverMg's getrf on GPUs 0 .. gpus-1 (gpus >= 2, peer access between
// them): the matrix in 1-D column block-cyclic tiles of 256 columns, already
// on the GPUs (distributing it is the restore between runs, not timed); host
// wall clock around the call and the GPUs' synchronization. The last run's
// factors and pivots are gathered into `factors` (n*n) and `ipiv` (n).
std::vector<double> time_cusolvermg_sgetrf(int n, int gpus, const float* original, float* factors,
                                           int* ipiv, int repeats);

struct CusolverSolveTimes {
    // cusolverDnSgetrf then cusolverDnSgetrs, A and B already on the device (CUDA events).
    std::vector<double> solve_seconds;
    // The same run from the host's view: copy A and B (pageable) to the device,
    // factor, solve, copy X back; host wall clock, as tandem::sgesv is timed.
    std::vector<double> with_transfer_seconds;
};

// cuSOLVER's getrf + getrs on CUDA device 0: A (n*n) and B (n*nrhs) column-major
// originals on the host; the last run's X is left in `x` (n*nrhs).
CusolverSolveTimes time_cusolver_sgesv(int n, int nrhs, const float* a, const float* b, float* x,
                                       int repeats);

// cuSOLVER's iterative-refinement solvers cusolverDnS<t>gesv: the matrix is
// factored in a lower precision <t> and the solution refined to single
// precision (falling back to a single-precision factorization when the
// refinement does not converge).
enum class IrsPrecision {
    single,    // SSgesv: factored in single precision
    tf32,      // SXgesv: TF32 tensor cores
    bfloat16,  // SBgesv: bfloat16
    half       // SHgesv: half precision
};

// "cusolverDnSSgesv", ...
const char* irs_function_name(IrsPrecision precision);

struct IrsTimes {
    std::vector<double> seconds;  // the solver's call alone, A and B on the device (CUDA events)
    int iter = 0;  // of the last run: refinement iterations; negative: it fell back (cuSOLVER's codes)
};

// One IRS solver on CUDA device 0, with the same arguments as time_cusolver_sgesv.
IrsTimes time_cusolver_irs_sgesv(IrsPrecision precision, int n, int nrhs, const float* a,
                                 const float* b, float* x, int repeats);

}  // namespace tandem_bench

#endif
