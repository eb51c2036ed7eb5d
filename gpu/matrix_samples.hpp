// Random device matrices and their comparison: the inputs and the correctness
// check of the SGEMM tuner and benchmark (which time products far too large to
// check on the host).
#ifndef TANDEM_GPU_MATRIX_SAMPLES_HPP
#define TANDEM_GPU_MATRIX_SAMPLES_HPP

#include <cuda_runtime.h>

#include <cstdint>

namespace tandem::gpu {

// x(i, j) = a value uniform in [-1, 1) that depends only on (seed, i, j), for the
// m x n row-major device matrix x (ld >= n): the same seed gives the same matrix.
void fill_uniform_rm(int64_t m, int64_t n, float* x, int64_t ld, uint64_t seed, cudaStream_t stream);

struct MatrixDifference {
    float max_abs_difference = 0.0f;  // max |x(i,j) - ref(i,j)|; NaN if any entry of either is NaN
    float max_abs_reference = 0.0f;   // max |ref(i,j)|
    // max_abs_difference / max_abs_reference (0 when both are 0).
    double relative() const;
};

// Compares two m x n row-major device matrices; waits for `stream`.
MatrixDifference max_difference_rm(int64_t m, int64_t n, const float* x, int64_t ldx,
                                   const float* ref, int64_t ldref, cudaStream_t stream);

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_MATRIX_SAMPLES_HPP
