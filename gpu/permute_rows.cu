#include "gpu/permute_rows.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "gpu/cuda_check.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {
namespace {

constexpr int kThreads = 256;

// Contract: see permute_rows() in the header. One thread per element; threads
// of a block run down a column, so the side indexed by i is coalesced and the
// permuted side is a gather (or scatter) of single floats. blockIdx.y strides
// over the columns (gridDim.y is capped at 65535). 64-bit offsets.
__global__ void permute_rows_kernel(const float* __restrict__ in, int64_t ld_in,
                                    float* __restrict__ out, int64_t ld_out, int64_t rows,
                                    int64_t cols, const int* __restrict__ perm, bool scatter) {
    const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= rows) return;
    const int64_t p = perm[i];
    const int64_t src = scatter ? i : p;
    const int64_t dst = scatter ? p : i;
    for (int64_t c = blockIdx.y; c < cols; c += gridDim.y)
        out[dst + c * ld_out] = in[src + c * ld_in];
}

// One block per row (grid-stride), its threads along the row's columns.
__global__ void gather_rows_row_major_kernel(const float* __restrict__ in, int64_t ld_in,
                                             float* __restrict__ out, int64_t ld_out,
                                             int64_t rows, int64_t cols,
                                             const int* __restrict__ perm) {
    for (int64_t i = blockIdx.x; i < rows; i += gridDim.x) {
        const float* src = in + int64_t(perm[i]) * ld_in;
        float* dst = out + i * ld_out;
        for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) dst[c] = src[c];
    }
}

__global__ void iota_kernel(int* perm, int64_t rows) {
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < rows;
         i += int64_t(gridDim.x) * blockDim.x)
        perm[i] = static_cast<int>(i);
}

constexpr int kFoldSwaps = 1024;  // 8 KiB of parameters per launch
struct Swaps {
    int count;
    int first;  // row of the first swap
    int other[kFoldSwaps];
};

// Sequential by nature (each swap may touch the result of an earlier one) and
// tiny: one thread.
__global__ void fold_swaps_kernel(int* perm, const __grid_constant__ Swaps swaps) {
    for (int s = 0; s < swaps.count; ++s) {
        const int a = swaps.first + s, b = swaps.other[s];
        const int t = perm[a];
        perm[a] = perm[b];
        perm[b] = t;
    }
}

}  // namespace

std::vector<int> fold_pivots(const int* ipiv, int64_t count, int64_t rows, const std::string& who,
                             bool from_factorization) {
    std::vector<int> perm(static_cast<size_t>(rows));
    std::iota(perm.begin(), perm.end(), 0);
    for (int64_t k = 0; k < count; ++k) {
        const int64_t p = int64_t(ipiv[k]) - 1, least = from_factorization ? k : 0;
        if (p < least || p >= rows)
            throw Error(TANDEM_ERROR_INTERNAL, who + ": ipiv[" + std::to_string(k) + "] = " +
                                                   std::to_string(ipiv[k]) + " is outside " +
                                                   std::to_string(least + 1) + " .. " +
                                                   std::to_string(rows));
        std::swap(perm[static_cast<size_t>(k)], perm[static_cast<size_t>(p)]);
    }
    return perm;
}

void iota_rows(int* perm, int64_t rows, cudaStream_t stream) {
    if (rows <= 0) return;
    const unsigned blocks = static_cast<unsigned>(std::min<int64_t>((rows + kThreads - 1) / kThreads, 4096));
    iota_kernel<<<blocks, kThreads, 0, stream>>>(perm, rows);
    TANDEM_CHECK_LAUNCH("iota_kernel");
}

void fold_swaps(int* perm, int64_t first, int64_t count, const int* ipiv, cudaStream_t stream) {
    Swaps swaps;
    for (int64_t s = 0; s < count; s += kFoldSwaps) {
        swaps.count = static_cast<int>(std::min<int64_t>(kFoldSwaps, count - s));
        swaps.first = static_cast<int>(first + s);
        for (int i = 0; i < swaps.count; ++i) swaps.other[i] = ipiv[first + s + i] - 1;
        fold_swaps_kernel<<<1, 1, 0, stream>>>(perm, swaps);
        TANDEM_CHECK_LAUNCH("fold_swaps_kernel");
    }
}

void gather_rows_row_major(const float* in, int64_t ld_in, float* out, int64_t ld_out,
                           int64_t rows, int64_t cols, const int* perm, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;
    const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(rows, 65535));
    gather_rows_row_major_kernel<<<blocks, kThreads, 0, stream>>>(in, ld_in, out, ld_out, rows,
                                                                  cols, perm);
    TANDEM_CHECK_LAUNCH("gather_rows_row_major_kernel");
}

void permute_rows(const float* in, int64_t ld_in, float* out, int64_t ld_out, int64_t rows,
                  int64_t cols, const int* perm, bool scatter, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;
    const dim3 grid(static_cast<unsigned>((rows + kThreads - 1) / kThreads),
                    static_cast<unsigned>(std::min<int64_t>(cols, 65535)));
    permute_rows_kernel<<<grid, kThreads, 0, stream>>>(in, ld_in, out, ld_out, rows, cols, perm,
                                                       scatter);
    TANDEM_CHECK_LAUNCH("permute_rows_kernel");
}

}  // namespace tandem::gpu
