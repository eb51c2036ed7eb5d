#include "gpu/refinement_kernels.hpp"

#include <algorithm>

#include "gpu/cuda_check.hpp"

namespace tandem::gpu {
namespace {

constexpr int kRows = 256;     // threads of a block, one row each
constexpr int kColumns = 256;  // columns of a block: its share of each row's sum

// One thread per row of a kRows x kColumns tile; z's slice in shared memory.
// A FP32 product is exact in double; the tiles' partial sums meet in y by
// atomic adds (blockIdx.z picks the column of Z and Y). abs_values: sum
// |a_ij| (z ignored) instead.
template <bool abs_values>
__global__ void tile_products(int64_t n, const float* a, int64_t lda, const double* z, double* y) {
    __shared__ double slice[kColumns];
    const int64_t row = int64_t(blockIdx.x) * kRows + threadIdx.x;
    const int64_t first = int64_t(blockIdx.y) * kColumns;
    const int64_t count = min(int64_t(kColumns), n - first);
    const int64_t rhs = blockIdx.z;
    if (!abs_values)
        for (int64_t j = threadIdx.x; j < count; j += blockDim.x) slice[j] = z[rhs * n + first + j];
    __syncthreads();
    if (row >= n) return;
    const float* column = a + first * lda + row;
    double sum = 0.0;
    for (int64_t j = 0; j < count; ++j) {
        const double value = static_cast<double>(column[j * lda]);
        sum += abs_values ? fabs(value) : value * slice[j];
    }
    atomicAdd(y + rhs * n + row, sum);
}

template <bool abs_values>
void launch(cudaStream_t stream, int64_t n, int64_t k, const float* a, int64_t lda, const double* z,
            double* y) {
    TANDEM_CUDA_CHECK(cudaMemsetAsync(y, 0, sizeof(double) * n * k, stream));
    if (n <= 0 || k <= 0) return;
    const dim3 grid(static_cast<unsigned>((n + kRows - 1) / kRows),
                    static_cast<unsigned>((n + kColumns - 1) / kColumns), static_cast<unsigned>(k));
    tile_products<abs_values><<<grid, kRows, 0, stream>>>(n, a, lda, z, y);
    TANDEM_CHECK_LAUNCH("tile_products");
}

}  // namespace

void multiply_in_double(cudaStream_t stream, int64_t n, int64_t k, const float* a, int64_t lda,
                        const double* z, double* y) {
    launch<false>(stream, n, k, a, lda, z, y);
}

void row_abs_sums(cudaStream_t stream, int64_t n, const float* a, int64_t lda, double* sums) {
    launch<true>(stream, n, 1, a, lda, nullptr, sums);
}

}  // namespace tandem::gpu
