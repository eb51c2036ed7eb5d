#include "gpu/split_product.hpp"

#include <algorithm>

#include "gpu/cuda_check.hpp"

namespace tandem::gpu {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 65535;

// x rounded to TF32 (to nearest, ties to even, at bit 13), as an FP32 value
// whose low 13 bits are zero. Inf and NaN stay themselves; a finite value
// whose rounding would overflow is truncated instead.
__device__ float tf32_high_part(float x) {
    const unsigned bits = __float_as_uint(x);
    if ((bits & 0x7f800000u) == 0x7f800000u) return x;
    const unsigned rounded = (bits + 0xfffu + ((bits >> 13) & 1u)) & 0xffffe000u;
    if ((rounded & 0x7f800000u) == 0x7f800000u) return __uint_as_float(bits & 0xffffe000u);
    return __uint_as_float(rounded);
}

// Row i of the m x k block `a` (ld lda) goes to hi1 / hi2 / lo at i * ld_out:
// blocks stride over rows, threads over a row's columns (coalesced).
__global__ void split_kernel(int64_t m, int64_t k, const float* a, int64_t lda, float* hi1,
                             float* hi2, float* lo, int64_t ld_out) {
    for (int64_t row = blockIdx.x; row < m; row += gridDim.x) {
        const float* in = a + row * lda;
        const int64_t out = row * ld_out;
        for (int64_t col = threadIdx.x; col < k; col += blockDim.x) {
            const float x = in[col];
            const float hi = tf32_high_part(x);
            const float low = isfinite(x) ? x - hi : 0.0f;  // exact: hi is x with its low bits cut
            hi1[out + col] = hi;
            hi2[out + col] = hi;
            lo[out + col] = low;
        }
    }
}

void launch_split(cudaStream_t stream, int64_t m, int64_t k, const float* a, int64_t lda,
                  float* hi1, float* hi2, float* lo, int64_t ld_out) {
    if (m <= 0 || k <= 0) return;
    const auto blocks = static_cast<unsigned>(std::min(m, kMaxBlocks));
    split_kernel<<<blocks, kThreads, 0, stream>>>(m, k, a, lda, hi1, hi2, lo, ld_out);
    TANDEM_CHECK_LAUNCH("split_kernel");
}

}  // namespace

void split_left_tf32x3(cudaStream_t stream, int64_t m, int64_t k, const float* a, int64_t lda,
                       float* split) {
    launch_split(stream, m, k, a, lda, split + k, split + 2 * k, split, 3 * k);
}

void split_right_tf32x3(cudaStream_t stream, int64_t k, int64_t n, const float* b, int64_t ldb,
                        float* split) {
    launch_split(stream, k, n, b, ldb, split, split + 2 * k * n, split + k * n, n);
}

// Row-major C = A B is column-major C^T = B^T A^T: operands swapped, as gemm().
void product_tf32x3(const BlasQueue& queue, int64_t m, int64_t n, int64_t k, float alpha,
                    const float* a_split, const float* b_split, float beta, float* c, int64_t ldc) {
    gemm_tensor_cores(queue, CUBLAS_COMPUTE_32F_FAST_TF32, m, n, 3 * k, alpha, a_split, 3 * k,
                      b_split, n, beta, c, ldc);
}

}  // namespace tandem::gpu
