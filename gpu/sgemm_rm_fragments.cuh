// The pieces of the sgemm_rm kernel (sgemm_rm.cuh): its tile configuration,
// its parameters, the register fragments of the inner product, the L2
// prefetch of the C tile, and the epilogue's guarded loads and stores of C.
#ifndef TANDEM_GPU_SGEMM_RM_FRAGMENTS_CUH
#define TANDEM_GPU_SGEMM_RM_FRAGMENTS_CUH

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/async_copy.cuh"
#include "gpu/sgemm_args.hpp"

namespace tandem::gpu {

// One tile configuration. WarpThreadsM x (32 / WarpThreadsM) threads of a warp
// cover a warp tile of (TM * WarpThreadsM) x (TN * 32 / WarpThreadsM).
template <int BM, int BN, int BK, int TM, int TN, int WarpThreadsM, int Stages, int Vec,
          int MinBlocks>
struct SgemmRmConfig {
    static constexpr int bm = BM, bn = BN, bk = BK, tm = TM, tn = TN, stages = Stages, vec = Vec;
    static constexpr int min_blocks = MinBlocks;
    static constexpr int warp_threads_m = WarpThreadsM;
    static constexpr int warp_threads_n = 32 / WarpThreadsM;
    static constexpr int warp_m = TM * warp_threads_m;  // warp tile
    static constexpr int warp_n = TN * warp_threads_n;
    static constexpr int warps_n = BN / warp_n;
    static constexpr int threads = 32 * (BM / warp_m) * warps_n;

    // a_tile[k][m] rows are BM + 4 floats: the 4-byte copies of a warp (8 k x 4
    // rows) then land in 32 distinct banks, and rows stay 16-byte aligned.
    static constexpr int a_stride = BM + 4;
    static constexpr int a_stage_floats = BK * a_stride;
    static constexpr int b_stage_floats = BK * BN;
    static constexpr int shared_bytes = Stages * (a_stage_floats + b_stage_floats) * 4;

    // A copies: thread t copies k (t % 8) + 8g of rows (t / 8) + a_rows_per_pass * pass.
    static constexpr int a_rows_per_pass = threads / 8;
    static constexpr int a_row_passes = BM / a_rows_per_pass;
    static constexpr int a_k_groups = BK / 8;
    // B copies: thread t copies vector (t % b_vectors_per_row) of k rows (t / ...) + b_rows_per_pass * pass.
    static constexpr int b_vectors_per_row = BN / Vec;
    static constexpr int b_rows_per_pass = threads / b_vectors_per_row;
    static constexpr int b_row_passes = BK / b_rows_per_pass;

    static_assert(TM % 4 == 0 && TN % 4 == 0, "thread tiles are made of 4x4 sub-tiles");
    static_assert(32 % WarpThreadsM == 0, "a warp is WarpThreadsM x (32 / WarpThreadsM) threads");
    static_assert(BM % warp_m == 0 && BN % warp_n == 0, "warp tiles must tile the block tile");
    static_assert(threads == (BM / TM) * (BN / TN), "one thread per thread tile");
    static_assert(BK % 8 == 0 && BM % a_rows_per_pass == 0 && a_row_passes <= 32, "A copy layout");
    static_assert(threads % b_vectors_per_row == 0 && BK % b_rows_per_pass == 0, "B copy layout");
    static_assert(Vec == 1 || Vec == 4, "4-byte or 16-byte B copies");
    static_assert(Stages >= 2, "the pipeline needs at least double buffering");
    static_assert(BM % 32 == 0, "a_stride % 32 == 4 puts 8 k x 4 rows in distinct banks");
};

// Blocks are grouped by this many tile rows, column by column within a group:
// the blocks resident at one time then share a few A row panels and B column
// panels in L2 instead of streaming all of B for each tile row.
constexpr int kGroupTileRows = 8;
// The C tile is prefetched to L2 when this much of k is left (about 4 us of a
// 128 x 128 tile's math at two blocks per SM: several DRAM latencies, yet short
// enough that the lines are still in L2 when the epilogue reads them).
constexpr int kPrefetchDistanceK = 64;

struct SgemmRmParams : SgemmKernelProduct {
    int tiles_m, tiles_n;
    int prefetch_k_tile;  // k step at which the C tile is prefetched (if beta != 0)
};

// The first row and column of C of tile `tile`: tiles are numbered by groups of
// kGroupTileRows tile rows, column by column within a group (see there).
template <class Cfg>
__device__ __forceinline__ int2 sgemm_rm_tile_origin(const SgemmRmParams& p, int tile) {
    const int group_tiles = kGroupTileRows * p.tiles_n;
    const int first_tile_m = tile / group_tiles * kGroupTileRows;
    const int group_rows = min(p.tiles_m - first_tile_m, kGroupTileRows);
    const int in_group = tile % group_tiles;
    return make_int2((first_tile_m + in_group % group_rows) * Cfg::bm, (in_group / group_rows) * Cfg::bn);
}

// Fragments of step kk: a = this thread's TM values of column kk of the A
// tile, b = its TN values of row kk of the B tile. a_frag points at
// a_tile[0][first row of the thread], b_frag at b_tile[0][first column].
template <class Cfg>
__device__ __forceinline__ void load_fragments(const float* a_frag, const float* b_frag, int kk,
                                               float (&a)[Cfg::tm], float (&b)[Cfg::tn]) {
#pragma unroll
    for (int i = 0; i < Cfg::tm / 4; ++i) {
        const float4 v = *reinterpret_cast<const float4*>(a_frag + kk * Cfg::a_stride +
                                                          i * 4 * Cfg::warp_threads_m);
        a[4 * i] = v.x, a[4 * i + 1] = v.y, a[4 * i + 2] = v.z, a[4 * i + 3] = v.w;
    }
#pragma unroll
    for (int j = 0; j < Cfg::tn / 4; ++j) {
        const float4 v = *reinterpret_cast<const float4*>(b_frag + kk * Cfg::bn +
                                                          j * 4 * Cfg::warp_threads_n);
        b[4 * j] = v.x, b[4 * j + 1] = v.y, b[4 * j + 2] = v.z, b[4 * j + 3] = v.w;
    }
}

// acc += a_tile^T b_tile over one k step. Fully unrolled: the compiler issues
// the shared loads of kk + 1 under the FFMAs of kk (an explicit register
// double buffer costs the 32 registers that then spill at 128 per thread).
// The outer product goes column by column (b[j] held across the TM FFMAs of
// a column): 1-3% faster than row by row for the 64 x 128 and 128 x 128 tiles
// at k = 64..512 and 8192^3 (the H200, 2026-11-22, docs/PERFORMANCE.md).
template <class Cfg>
__device__ __forceinline__ void multiply_tile(const float* a_frag, const float* b_frag,
                                              float (&acc)[Cfg::tm][Cfg::tn]) {
#pragma unroll
    for (int kk = 0; kk < Cfg::bk; ++kk) {
        float a[Cfg::tm], b[Cfg::tn];
        load_fragments<Cfg>(a_frag, b_frag, kk, a, b);
#pragma unroll
        for (int j = 0; j < Cfg::tn; ++j)
#pragma unroll
            for (int i = 0; i < Cfg::tm; ++i) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
}

// Prefetches the rows of the C tile into L2: one hint per 128-byte line, plus
// the tile row's last element (rows need not start on a line boundary).
template <class Cfg>
__device__ __forceinline__ void prefetch_c_tile(const SgemmRmParams& p, int2 origin) {
    const int row0 = origin.x, col0 = origin.y;
    constexpr int hints_per_row = Cfg::bn / 32 + 1;
    constexpr int hints = Cfg::bm * hints_per_row;
    const int last_col = min(col0 + Cfg::bn, p.n) - 1;
    const float* const c = async::opaque(p.c);  // addresses made here, not hoisted out of the k loop
#pragma unroll
    for (int i = 0; i < (hints + Cfg::threads - 1) / Cfg::threads; ++i) {
        const int h = int(threadIdx.x) + i * Cfg::threads;
        const int row = row0 + h / hints_per_row;
        const int chunk = h % hints_per_row;
        const int col = chunk + 1 == hints_per_row ? last_col : col0 + 32 * chunk;
        if (h < hints && row < p.m && col <= last_col) async::prefetch_l2(c + int64_t(row) * p.ldc + col);
    }
}

// old[0..3] := C(row, col .. col+3), zeros outside C (row >= m, columns >= n).
template <int Vec>
__device__ __forceinline__ void load_c4(const SgemmRmParams& p, int row, int col, float* old) {
    old[0] = old[1] = old[2] = old[3] = 0.0f;
    if (row >= p.m) return;
    const float* src = p.c + int64_t(row) * p.ldc + col;
    if (Vec == 4 && col + 4 <= p.n) {
        const float4 v = *reinterpret_cast<const float4*>(src);
        old[0] = v.x, old[1] = v.y, old[2] = v.z, old[3] = v.w;
        return;
    }
#pragma unroll
    for (int j = 0; j < 4; ++j)
        if (col + j < p.n) old[j] = src[j];
}

// C(row, col .. col+3) (those inside C) := alpha * v + beta * old (old unused when beta == 0).
template <int Vec>
__device__ __forceinline__ void store_c4(const SgemmRmParams& p, int row, int col, const float* v,
                                         const float* old) {
    if (row >= p.m) return;
    float out[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) out[j] = p.beta != 0.0f ? fmaf(p.beta, old[j], p.alpha * v[j]) : p.alpha * v[j];
    float* dst = p.c + int64_t(row) * p.ldc + col;
    if (Vec == 4 && col + 4 <= p.n) {
        *reinterpret_cast<float4*>(dst) = make_float4(out[0], out[1], out[2], out[3]);
        return;
    }
#pragma unroll
    for (int j = 0; j < 4; ++j)
        if (col + j < p.n) dst[j] = out[j];
}

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_SGEMM_RM_FRAGMENTS_CUH
