// The row permutation of a solve, applied to column-major right-hand sides.
#ifndef TANDEM_GPU_PERMUTE_ROWS_HPP
#define TANDEM_GPU_PERMUTE_ROWS_HPP

#include <cuda_runtime.h>

#include <cstdint>

namespace tandem::gpu {

// in and out are rows x cols column-major device arrays (ld_in, ld_out >= rows)
// that must not overlap; perm is a device array holding a permutation of
// 0 .. rows-1.
//   gather  (scatter = false): out(i, c) = in(perm[i], c)   -- P * B
//   scatter (scatter = true):  out(perm[i], c) = in(i, c)   -- P^T * B
// Issued on `stream`.
void permute_rows(const float* in, int64_t ld_in, float* out, int64_t ld_out, int64_t rows,
                  int64_t cols, const int* perm, bool scatter, cudaStream_t stream);

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_PERMUTE_ROWS_HPP
