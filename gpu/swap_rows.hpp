// Row interchanges (LAPACK laswp) on row-major storage, where swapping two rows
// moves two contiguous runs of memory.
#ifndef TANDEM_GPU_SWAP_ROWS_HPP
#define TANDEM_GPU_SWAP_ROWS_HPP

#include <cuda_runtime.h>

#include <cstdint>

namespace tandem::gpu {

// For k = k1 .. k2-1 in order, swap rows k and ipiv[k]-1 of the row-major
// matrix `a` (device pointer, leading dimension ld), over its first `cols`
// columns. ipiv is a HOST array of 1-based global row indices, already checked
// by the caller; the pivots travel in the kernel parameters, so the host may
// change ipiv as soon as this returns. Issued on `stream`. The swaps are applied
// as their net permutation of the rows they touch (each such row read and
// written once), one launch per up to 512 swaps (fewer on devices with less
// shared memory per block).
void swap_rows(float* a, int64_t ld, int64_t cols, int64_t k1, int64_t k2, const int* ipiv,
               cudaStream_t stream);

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_SWAP_ROWS_HPP
