#include "gpu/permute_rows.hpp"

#include <algorithm>

#include "gpu/cuda_check.hpp"

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

}  // namespace

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
