#include "gpu/swap_rows.hpp"

#include <algorithm>

#include "gpu/cuda_check.hpp"

namespace tandem::gpu {
namespace {

// Pivots of one launch, passed by value. Kept under the classic 4 KiB limit of
// kernel parameters together with the other arguments; a panel wider than
// kSwapsPerLaunch takes several launches, issued in order on one stream.
constexpr int kSwapsPerLaunch = 1000;
struct RowSwaps {
    int64_t first_row;                // row k of partner[0]
    int count;                        // swaps in this launch
    int partner[kSwapsPerLaunch];     // 0-based: row first_row + t swaps with partner[t]
};
static_assert(sizeof(RowSwaps) + 3 * sizeof(int64_t) <= 4096, "kernel parameters exceed 4 KiB");

constexpr int kThreads = 256;

// Contract: a is row-major (element (i, j) at a[i * ld + j]), any alignment;
// for t = 0 .. count-1 in order, rows first_row + t and partner[t] are swapped
// over columns 0 .. cols-1. Every thread owns whole columns and applies all
// swaps to them in order, so the sequence semantics hold without any
// synchronization; consecutive threads touch consecutive addresses of a row
// (coalesced). The pivots are a __grid_constant__ parameter: read in place
// from the constant bank, the same index for the whole warp (a broadcast).
__global__ void swap_rows_kernel(float* __restrict__ a, int64_t ld, int64_t cols,
                                 const __grid_constant__ RowSwaps swaps) {
    const int64_t stride = int64_t(gridDim.x) * blockDim.x;
    for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < cols; j += stride) {
        for (int t = 0; t < swaps.count; ++t) {
            const int64_t k = swaps.first_row + t;
            const int64_t p = swaps.partner[t];
            if (p == k) continue;
            float* row_k = a + k * ld + j;
            float* row_p = a + p * ld + j;
            const float v = *row_k;
            *row_k = *row_p;
            *row_p = v;
        }
    }
}

}  // namespace

void swap_rows(float* a, int64_t ld, int64_t cols, int64_t k1, int64_t k2, const int* ipiv,
               cudaStream_t stream) {
    if (cols <= 0 || k2 <= k1) return;
    const int64_t blocks = std::min<int64_t>((cols + kThreads - 1) / kThreads, 65535);
    RowSwaps swaps;
    for (int64_t k = k1; k < k2; k += kSwapsPerLaunch) {
        swaps.first_row = k;
        swaps.count = static_cast<int>(std::min<int64_t>(kSwapsPerLaunch, k2 - k));
        for (int t = 0; t < swaps.count; ++t) swaps.partner[t] = ipiv[k + t] - 1;
        swap_rows_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(a, ld, cols,
                                                                                 swaps);
        TANDEM_CHECK_LAUNCH("swap_rows_kernel");
    }
}

}  // namespace tandem::gpu
