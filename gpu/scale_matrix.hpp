// C := beta * C on the device: what a product with alpha == 0 or k == 0 leaves
// (BLAS semantics: A and B are then not read, and beta == 0 writes zeros
// without reading C, so NaNs in C do not survive).
#ifndef TANDEM_GPU_SCALE_MATRIX_HPP
#define TANDEM_GPU_SCALE_MATRIX_HPP

#include <cuda_runtime.h>

#include <cstdint>

namespace tandem::gpu {

// c is m x n row-major (ldc >= n), a device pointer. beta == 1 launches nothing.
void scale_matrix_rm(int64_t m, int64_t n, float beta, float* c, int64_t ldc, cudaStream_t stream);

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_SCALE_MATRIX_HPP
