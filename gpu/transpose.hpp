// Out-of-place transpose on the device: the building block of the transposing
// copies between the caller's column-major arrays and the row-major storage.
#ifndef TANDEM_GPU_TRANSPOSE_HPP
#define TANDEM_GPU_TRANSPOSE_HPP

#include <cuda_runtime.h>

#include <cstdint>

namespace tandem::gpu {

// out = in^T, where `in` is a rows x cols column-major matrix (ld_in >= rows)
// and `out` the cols x rows column-major result (ld_out >= cols). Seen the
// other way round: `out` holds `in` in row-major order with leading dimension
// ld_out. Device pointers; in and out must not overlap. Issued on `stream`.
void transpose(const float* in, int64_t ld_in, int64_t rows, int64_t cols, float* out,
               int64_t ld_out, cudaStream_t stream);

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_TRANSPOSE_HPP
