// The refined solve's products with A in double (sgesv_refined): residuals
// whose rounding is far below FP32's, so that refinement can reach FP32's
// last bit.
#ifndef TANDEM_GPU_REFINEMENT_KERNELS_HPP
#define TANDEM_GPU_REFINEMENT_KERNELS_HPP

#include <cuda_runtime.h>

#include <cstdint>

namespace tandem::gpu {

// Y = A Z: A n x n column-major FP32 (lda), Z and Y n x k column-major double
// (ld n), all in device memory. Y is overwritten.
void multiply_in_double(cudaStream_t stream, int64_t n, int64_t k, const float* a, int64_t lda,
                        const double* z, double* y);

// sums[i] = sum_j |a_ij| of that A, in double.
void row_abs_sums(cudaStream_t stream, int64_t n, const float* a, int64_t lda, double* sums);

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_REFINEMENT_KERNELS_HPP
