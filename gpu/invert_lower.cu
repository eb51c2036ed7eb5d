#include "gpu/invert_lower.hpp"

#include <cmath>
#include <string>

#include "gpu/cuda_check.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {
namespace {

constexpr int kLeafMax = 64;       // the diagonal blocks' largest size
constexpr int kNormThreads = 128;  // columns a block of the norm kernel sums

// The leaf size b of width = b * 2^p (the largest power of two taken out
// while the rest exceeds kLeafMax), 0 if b still exceeds it.
int leaf_size(int width) {
    int b = width;
    while (b > kLeafMax && b % 2 == 0) b /= 2;
    return b >= 1 && b <= kLeafMax ? b : 0;
}

int norm_blocks(int width) { return (width + kNormThreads - 1) / kNormThreads; }

// inv = the unit lower triangle of l, ones on the diagonal, zeros above.
__global__ void copy_unit_lower_kernel(int width, const float* __restrict__ l, int64_t ldl,
                                       float* __restrict__ inv, int64_t ldi) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= width) return;
    for (int i = blockIdx.y; i < width; i += gridDim.y)
        inv[int64_t(i) * ldi + j] = i > j ? l[int64_t(i) * ldl + j] : (i == j ? 1.0f : 0.0f);
}

// Each block inverts one b x b unit lower diagonal block of inv in place;
// thread j solves column j: x_j = 1, x_i = -sum_{j <= k < i} L(i,k) x_k.
__global__ void invert_diagonal_blocks_kernel(int b, float* inv, int64_t ldi) {
    __shared__ float lower[kLeafMax][kLeafMax + 1];
    __shared__ float x[kLeafMax][kLeafMax + 1];
    float* block = inv + int64_t(blockIdx.x) * b * (ldi + 1);
    const int j = threadIdx.x;
    for (int i = 0; i < b; ++i) lower[i][j] = block[int64_t(i) * ldi + j];
    __syncthreads();
    for (int i = 0; i < b; ++i) {
        float v = 0.0f;
        if (i == j) {
            v = 1.0f;
        } else if (i > j) {
            for (int k = j; k < i; ++k) v -= lower[i][k] * x[k][j];
        }
        x[i][j] = v;
    }
    __syncthreads();
    for (int i = 0; i < b; ++i) block[int64_t(i) * ldi + j] = x[i][j];
}

// Per block of kNormThreads columns: the largest column sum of |inv| (NaN
// if any sum is NaN) into partial[blockIdx.x].
__global__ void column_sums_kernel(int width, const float* __restrict__ inv, int64_t ldi,
                                   float* __restrict__ partial) {
    __shared__ float largest[kNormThreads];
    const int j = blockIdx.x * kNormThreads + threadIdx.x;
    float sum = 0.0f;
    if (j < width)
        for (int i = j; i < width; ++i) sum += fabsf(inv[int64_t(i) * ldi + j]);
    largest[threadIdx.x] = sum;
    __syncthreads();
    for (int half = kNormThreads / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) {
            const float a = largest[threadIdx.x], b = largest[threadIdx.x + half];
            largest[threadIdx.x] = isnan(a) || isnan(b) ? NAN : fmaxf(a, b);
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = largest[0];
}

__global__ void largest_of_kernel(int count, const float* __restrict__ partial, float* norm) {
    float result = 0.0f;
    for (int i = 0; i < count; ++i)
        result = isnan(result) || isnan(partial[i]) ? NAN : fmaxf(result, partial[i]);
    *norm = result;
}

}  // namespace

bool unit_lower_inverse_fits(int width) { return width > 0 && leaf_size(width) > 0; }

int64_t unit_lower_inverse_scratch_floats(int width) {
    // Each level's products L21 * A: width / 2s blocks of s x s, s <= width / 2.
    return int64_t(width) * width / 2 + norm_blocks(width);
}

void invert_unit_lower(const BlasQueue& queue, int width, const float* l, int64_t ldl,
                       float* inv, int64_t ldi, float* scratch, float* norm) {
    const int b = leaf_size(width);
    if (width <= 0 || b == 0)
        throw Error(TANDEM_ERROR_INTERNAL, "invert_unit_lower: width " + std::to_string(width) +
                                               " is not a block of at most 64 times a power of two");
    const dim3 copy_grid((width + 127) / 128, std::min(width, 65535));
    copy_unit_lower_kernel<<<copy_grid, 128, 0, queue.stream>>>(width, l, ldl, inv, ldi);
    TANDEM_CUDA_CHECK(cudaGetLastError());
    invert_diagonal_blocks_kernel<<<width / b, b, 0, queue.stream>>>(b, inv, ldi);
    TANDEM_CUDA_CHECK(cudaGetLastError());
    // Level s: blocks t = 0 .. width/2s - 1 at (2st, 2st), A and C their
    // inverted s x s diagonal halves, L21 below A. Row-major products run as
    // column-major ones on the transposes, operands swapped (gpu/gemm.cpp).
    const float one = 1.0f, minus_one = -1.0f, zero = 0.0f;
    for (int s = b; 2 * s <= width; s *= 2) {
        const int count = width / (2 * s);
        const long long stride = 2LL * s * (ldi + 1);
        float* const a = inv;
        float* const l21 = inv + int64_t(s) * ldi;
        float* const c = inv + int64_t(s) * (ldi + 1);
        // scratch_t = L21 A
        TANDEM_CUBLAS_CHECK(cublasSgemmStridedBatched(
            queue.handle, CUBLAS_OP_N, CUBLAS_OP_N, s, s, s, &one, a, static_cast<int>(ldi), stride,
            l21, static_cast<int>(ldi), stride, &zero, scratch, s, 1LL * s * s, count));
        // L21 = -C scratch_t
        TANDEM_CUBLAS_CHECK(cublasSgemmStridedBatched(
            queue.handle, CUBLAS_OP_N, CUBLAS_OP_N, s, s, s, &minus_one, scratch, s, 1LL * s * s, c,
            static_cast<int>(ldi), stride, &zero, l21, static_cast<int>(ldi), stride, count));
    }
    float* const partial = scratch + int64_t(width) * width / 2;
    column_sums_kernel<<<norm_blocks(width), kNormThreads, 0, queue.stream>>>(width, inv, ldi,
                                                                              partial);
    TANDEM_CUDA_CHECK(cudaGetLastError());
    largest_of_kernel<<<1, 1, 0, queue.stream>>>(norm_blocks(width), partial, norm);
    TANDEM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tandem::gpu
