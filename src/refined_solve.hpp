// sgesv_refined: a lower-precision LU on a device, refined to FP32 quality
// (scheduler/iterative_refinement.hpp), with FP32's sgesv as the fallback.
#ifndef TANDEM_SRC_REFINED_SOLVE_HPP
#define TANDEM_SRC_REFINED_SOLVE_HPP

#include <cstdint>

#include "src/solver.hpp"

namespace tandem::detail {

// The options of the lower-precision factorization: the caller's, with
// update_precision tf32x3 where the caller left fp32.
Options refined_factor_options(const Options& options);

// A X = B, column-major. `low` was made with refined_factor_options(options)
// and, for device_memory (sgesv_refined_gpu), has checked the arrays with
// use_device_memory. Returns LAPACK's info; iter as sgesv_refined documents.
int solve_refined(Solver& low, const Options& options, bool device_memory, int64_t n,
                  int64_t nrhs, float* a, int64_t lda, int* ipiv, const float* b, int64_t ldb,
                  float* x, int64_t ldx, int& iter, Report& report);

}  // namespace tandem::detail

#endif  // TANDEM_SRC_REFINED_SOLVE_HPP
