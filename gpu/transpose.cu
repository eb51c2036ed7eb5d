#include "gpu/transpose.hpp"

#include <algorithm>

#include "gpu/cuda_check.hpp"

namespace tandem::gpu {
namespace {

constexpr int kTile = 32;      // a tile is kTile x kTile elements
constexpr int kTileRows = 8;   // threads per block: kTile x kTileRows, 4 elements each

// Contract: out(c, r) = in(r, c) for r < rows, c < cols.
//   in:  rows x cols, column-major, ld_in >= rows (element (r, c) at in[r + c * ld_in]).
//   out: cols x rows, column-major, ld_out >= cols (element (c, r) at out[c + r * ld_out]).
//   No alignment requirement; in and out must not overlap. All offsets are 64-bit
//   (a 46341 x 46341 matrix already has more than 2^31 elements).
// Each block moves 32 x 32 tiles through shared memory: threadIdx.x runs along
// r when reading (contiguous in `in`) and along c when writing (contiguous in
// `out`), so both sides are coalesced. The +1 column of padding puts the
// column-wise reads of the tile in distinct banks. blockIdx.x picks the tile
// row; blockIdx.y strides over tile columns (gridDim.y is capped at 65535).
__global__ void transpose_kernel(const float* __restrict__ in, int64_t ld_in, int64_t rows,
                                 int64_t cols, float* __restrict__ out, int64_t ld_out) {
    __shared__ float tile[kTile][kTile + 1];  // tile[c - c_base][r - r_base]
    const int64_t r_base = int64_t(blockIdx.x) * kTile;
    const int64_t tile_cols = (cols + kTile - 1) / kTile;
    for (int64_t tc = blockIdx.y; tc < tile_cols; tc += gridDim.y) {
        const int64_t c_base = tc * kTile;
        for (int i = threadIdx.y; i < kTile; i += kTileRows) {
            const int64_t r = r_base + threadIdx.x, c = c_base + i;
            if (r < rows && c < cols) tile[i][threadIdx.x] = in[r + c * ld_in];
        }
        __syncthreads();
        for (int i = threadIdx.y; i < kTile; i += kTileRows) {
            const int64_t c = c_base + threadIdx.x, r = r_base + i;
            if (r < rows && c < cols) out[c + r * ld_out] = tile[threadIdx.x][i];
        }
        __syncthreads();  // the tile is refilled by the next iteration
    }
}

}  // namespace

void transpose(const float* in, int64_t ld_in, int64_t rows, int64_t cols, float* out,
               int64_t ld_out, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;
    const int64_t tile_rows = (rows + kTile - 1) / kTile;
    const int64_t tile_cols = (cols + kTile - 1) / kTile;
    const dim3 grid(static_cast<unsigned>(tile_rows),
                    static_cast<unsigned>(std::min<int64_t>(tile_cols, 65535)));
    transpose_kernel<<<grid, dim3(kTile, kTileRows), 0, stream>>>(in, ld_in, rows, cols, out,
                                                                   ld_out);
    TANDEM_CHECK_LAUNCH("transpose_kernel");
}

}  // namespace tandem::gpu
