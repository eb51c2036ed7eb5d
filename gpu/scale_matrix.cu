#include "gpu/scale_matrix.hpp"

#include <algorithm>

#include "gpu/cuda_check.hpp"

namespace tandem::gpu {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 65535;

// Contract: c(i, j) := beta * c(i, j) for i < m, j < n; c row-major, ldc >= n,
// any alignment; with beta == 0 the old values are not read. Blocks stride
// over rows, threads over the columns of a row (coalesced); 64-bit offsets.
__global__ void scale_matrix_kernel(int64_t m, int64_t n, float beta, float* c, int64_t ldc) {
    for (int64_t row = blockIdx.x; row < m; row += gridDim.x) {
        float* c_row = c + row * ldc;
        for (int64_t col = threadIdx.x; col < n; col += blockDim.x)
            c_row[col] = beta == 0.0f ? 0.0f : beta * c_row[col];
    }
}

}  // namespace

void scale_matrix_rm(int64_t m, int64_t n, float beta, float* c, int64_t ldc, cudaStream_t stream) {
    if (m <= 0 || n <= 0 || beta == 1.0f) return;
    const auto blocks = static_cast<unsigned>(std::min(m, kMaxBlocks));
    scale_matrix_kernel<<<blocks, kThreads, 0, stream>>>(m, n, beta, c, ldc);
    TANDEM_CHECK_LAUNCH("scale_matrix_kernel");
}

}  // namespace tandem::gpu
