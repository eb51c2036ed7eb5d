#include "gpu/matrix_samples.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "gpu/cuda_check.hpp"
#include "gpu/device_buffer.hpp"

namespace tandem::gpu {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 4096;

// splitmix64's finaliser: a counter-based generator, so any element can be
// produced by any thread in any order.
__device__ __forceinline__ uint64_t mix64(uint64_t x) {
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// Contract: x(i, j) for i < m, j < n (row-major, ld >= n) := uniform [-1, 1)
// from (seed, i, j). Blocks stride over rows, threads over columns.
__global__ void fill_uniform_kernel(int64_t m, int64_t n, float* x, int64_t ld, uint64_t seed) {
    for (int64_t row = blockIdx.x; row < m; row += gridDim.x)
        for (int64_t col = threadIdx.x; col < n; col += blockDim.x) {
            const uint64_t bits = mix64(seed ^ mix64(static_cast<uint64_t>(row) * 0x9e3779b97f4a7c15ull + col));
            // 24 random bits -> [0, 1) exactly representable, then [-1, 1).
            x[row * ld + col] = static_cast<float>(bits >> 40) * (2.0f / 16777216.0f) - 1.0f;
        }
}

// Contract: result[0] = max bits of |x - ref|, result[1] = max bits of |ref|
// over the m x n row-major matrices. Non-negative floats (and NaN with its sign
// cleared, which sorts above +inf) order as their bit patterns, so an unsigned
// atomicMax on the bits is a float max that keeps NaN.
__global__ void max_difference_kernel(int64_t m, int64_t n, const float* x, int64_t ldx,
                                      const float* ref, int64_t ldref, unsigned* result) {
    unsigned diff_bits = 0, ref_bits = 0;
    for (int64_t row = blockIdx.x; row < m; row += gridDim.x)
        for (int64_t col = threadIdx.x; col < n; col += blockDim.x) {
            const float r = ref[row * ldref + col];
            diff_bits = max(diff_bits, __float_as_uint(fabsf(x[row * ldx + col] - r)));
            ref_bits = max(ref_bits, __float_as_uint(fabsf(r)));
        }
    for (int offset = 16; offset > 0; offset /= 2) {
        diff_bits = max(diff_bits, __shfl_down_sync(0xffffffffu, diff_bits, offset));
        ref_bits = max(ref_bits, __shfl_down_sync(0xffffffffu, ref_bits, offset));
    }
    if (threadIdx.x % 32 == 0) {
        atomicMax(&result[0], diff_bits);
        atomicMax(&result[1], ref_bits);
    }
}

unsigned grid_for(int64_t rows) { return static_cast<unsigned>(std::clamp<int64_t>(rows, 1, kMaxBlocks)); }

}  // namespace

double MatrixDifference::relative() const {
    if (std::isnan(max_abs_difference)) return max_abs_difference;
    if (max_abs_reference == 0.0f) return max_abs_difference == 0.0f ? 0.0 : INFINITY;
    return static_cast<double>(max_abs_difference) / max_abs_reference;
}

void fill_uniform_rm(int64_t m, int64_t n, float* x, int64_t ld, uint64_t seed, cudaStream_t stream) {
    if (m <= 0 || n <= 0) return;
    fill_uniform_kernel<<<grid_for(m), kThreads, 0, stream>>>(m, n, x, ld, seed);
    TANDEM_CHECK_LAUNCH("fill_uniform_kernel");
}

MatrixDifference max_difference_rm(int64_t m, int64_t n, const float* x, int64_t ldx,
                                   const float* ref, int64_t ldref, cudaStream_t stream) {
    MatrixDifference result;
    if (m <= 0 || n <= 0) return result;
    DeviceBuffer maxima(2 * sizeof(unsigned), "comparison result");
    auto* bits = reinterpret_cast<unsigned*>(maxima.ints());
    TANDEM_CUDA_CHECK(cudaMemsetAsync(bits, 0, 2 * sizeof(unsigned), stream));
    max_difference_kernel<<<grid_for(m), kThreads, 0, stream>>>(m, n, x, ldx, ref, ldref, bits);
    TANDEM_CHECK_LAUNCH("max_difference_kernel");
    unsigned host[2] = {0, 0};
    TANDEM_CUDA_CHECK(cudaMemcpyAsync(host, bits, sizeof host, cudaMemcpyDeviceToHost, stream));
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::memcpy(&result.max_abs_difference, &host[0], sizeof(float));
    std::memcpy(&result.max_abs_reference, &host[1], sizeof(float));
    return result;
}

}  // namespace tandem::gpu
