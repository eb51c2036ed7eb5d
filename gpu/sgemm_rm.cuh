// The sgemm_rm kernel family: C = alpha * A * B + beta * C for row-major A, B, C
// in FP32 on the SIMT cores, one template instantiated for a short menu of tile
// configurations (the sgemm_rm_*.cu files). Included only by those files.
//
// How a block computes its BM x BN tile of C (after Volkov & Demmel, and the
// parametrized kernels of Li, Dongarra & Tomov):
//   * The k dimension is walked in steps of BK. Each step's A tile (BM x BK) and
//     B tile (BK x BN) are copied global -> shared with cp.async into one of
//     `stages` buffers, stages - 1 steps ahead of the math, so that the copies'
//     latency hides behind the FFMAs of earlier steps (one barrier per step).
//   * A is stored TRANSPOSED in shared memory (a_tile[k][m]), so that for each k
//     a thread reads its TM values of A and its TN values of B with 128-bit
//     loads: (TM + TN) / 4 shared loads per TM * TN FFMAs. cp.async cannot
//     transpose 16 bytes at once, so A moves 4 bytes per copy (a warp still reads
//     whole 32-byte sectors: 8 consecutive k of 4 rows). B moves 16 bytes per copy
//     when aligned (the `_scalar` configuration moves 4 bytes and needs nothing).
//   * A thread's TM x TN accumulators are 4 x 4 sub-tiles spaced one warp-width
//     apart, so that each 128-bit shared load of a warp reads one contiguous run
//     (no bank conflicts; equal addresses broadcast) and each 128-bit store of C
//     writes whole 32-byte sectors.
//   * Edges: copies beyond m, n or k zero-fill shared memory without reading;
//     stores are guarded. Any m, n, k and leading dimension; 64-bit offsets.
//   * When beta != 0 the C tile is prefetched into L2 during the last
//     kPrefetchDistanceK of the k loop, so that reading C in the epilogue does
//     not wait on DRAM (at k = 64..128 the C traffic is as long as the math).
#ifndef TANDEM_GPU_SGEMM_RM_CUH
#define TANDEM_GPU_SGEMM_RM_CUH

#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <string>

#include "gpu/async_copy.cuh"
#include "gpu/cuda_check.hpp"
#include "gpu/kernel_shared_memory.hpp"
#include "gpu/sgemm_rm_fragments.cuh"
#include "gpu/sgemm_variants.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {

// Contract: C = alpha * A * B + beta * C on the tile of C this block owns.
//   A m x k, B k x n, C m x n, all row-major with 64-bit leading dimensions;
//   k >= 1 and alpha != 0 (the launcher handles the other cases); C must not
//   overlap A or B; A and B may alias each other. Vec == 4 needs B and C 16-byte
//   aligned and ldb, ldc multiples of 4; Vec == 1 needs only float alignment.
//   Launch: 1-D grid of tiles_m * tiles_n blocks of Cfg::threads threads and
//   Cfg::shared_bytes of dynamic shared memory.
template <class Cfg>
__global__ void __launch_bounds__(Cfg::threads, Cfg::min_blocks) sgemm_rm_kernel(const SgemmRmParams p) {
    extern __shared__ float4 shared_vec4[];
    float* const a_tiles = reinterpret_cast<float*>(shared_vec4);    // [stages][bk][a_stride]
    float* const b_tiles = a_tiles + Cfg::stages * Cfg::a_stage_floats;  // [stages][bk][bn]
    const int tid = threadIdx.x;

    // This block's tile (see kGroupTileRows).
    const int group_tiles = kGroupTileRows * p.tiles_n;
    const int first_tile_m = int(blockIdx.x) / group_tiles * kGroupTileRows;
    const int group_rows = min(p.tiles_m - first_tile_m, kGroupTileRows);
    const int in_group = int(blockIdx.x) % group_tiles;
    const int row0 = (first_tile_m + in_group % group_rows) * Cfg::bm;
    const int col0 = (in_group / group_rows) * Cfg::bn;

    // Copy assignments (see SgemmRmConfig).
    const int a_k = tid % 8, a_row = tid / 8;
    unsigned a_rows_valid = 0;  // bit `pass`: that row is inside A
#pragma unroll
    for (int pass = 0; pass < Cfg::a_row_passes; ++pass)
        if (row0 + a_row + pass * Cfg::a_rows_per_pass < p.m) a_rows_valid |= 1u << pass;
    const float* const a_src = p.a + int64_t(min(row0 + a_row, p.m - 1)) * p.lda + a_k;
    const int64_t a_pass_stride = int64_t(Cfg::a_rows_per_pass) * p.lda;
    float* const a_dst = a_tiles + a_k * Cfg::a_stride + a_row;
    const int b_vector = tid % Cfg::b_vectors_per_row, b_k = tid / Cfg::b_vectors_per_row;
    const int b_col = col0 + b_vector * Cfg::vec;
    const unsigned b_bytes = 4u * unsigned(max(0, min(p.n - b_col, Cfg::vec)));
    float* const b_dst = b_tiles + b_k * Cfg::bn + b_vector * Cfg::vec;

    // Where copy (g, pass) of A and copy pass of B land in a stage.
    auto a_slot = [&](int stage, int g, int pass) {
        return a_dst + stage * Cfg::a_stage_floats + 8 * g * Cfg::a_stride + pass * Cfg::a_rows_per_pass;
    };
    auto b_slot = [&](int stage, int pass) {
        return b_dst + stage * Cfg::b_stage_floats + pass * Cfg::b_rows_per_pass * Cfg::bn;
    };
    auto copy_b = [](float* dst, const float* src, unsigned bytes) {
        if constexpr (Cfg::vec == 4)
            async::copy16(dst, src, bytes);
        else
            async::copy4(dst, src, bytes);
    };

    // Tiles wholly inside A, B and C (all but the edges of large products) copy
    // without the per-copy bounds checks: fewer instructions in the k loop.
    const bool interior = row0 + Cfg::bm <= p.m && col0 + Cfg::bn <= p.n;
    auto load_tile = [&](int k_tile, int stage) {
        const int k0 = k_tile * Cfg::bk;
        // Recomputed per step on purpose: hoisting one 64-bit pointer per copy out
        // of the k loop would cost the registers the accumulators need.
        const float* const a_row_src = async::opaque(a_src);
        const int64_t a_step = async::opaque(a_pass_stride);
        const int64_t ldb = async::opaque(p.ldb);
        if (interior && k0 + Cfg::bk <= p.k) {
            const float* const a_k0 = a_row_src + k0;
#pragma unroll
            for (int g = 0; g < Cfg::a_k_groups; ++g)
#pragma unroll
                for (int pass = 0; pass < Cfg::a_row_passes; ++pass)
                    async::copy4(a_slot(stage, g, pass), a_k0 + pass * a_step + 8 * g, 4u);
            const float* const b_k0 = p.b + int64_t(k0 + b_k) * ldb + b_col;
#pragma unroll
            for (int pass = 0; pass < Cfg::b_row_passes; ++pass)
                copy_b(b_slot(stage, pass), b_k0 + pass * Cfg::b_rows_per_pass * ldb, 4u * Cfg::vec);
            return;
        }
#pragma unroll
        for (int g = 0; g < Cfg::a_k_groups; ++g) {
            const bool k_inside = k0 + 8 * g + a_k < p.k;
#pragma unroll
            for (int pass = 0; pass < Cfg::a_row_passes; ++pass) {
                const bool inside = k_inside && (a_rows_valid >> pass & 1u);
                const float* src = inside ? a_row_src + pass * a_step + (k0 + 8 * g) : p.a;
                async::copy4(a_slot(stage, g, pass), src, inside ? 4u : 0u);
            }
        }
#pragma unroll
        for (int pass = 0; pass < Cfg::b_row_passes; ++pass) {
            const int k_row = k0 + b_k + pass * Cfg::b_rows_per_pass;
            const unsigned bytes = k_row < p.k ? b_bytes : 0u;
            copy_b(b_slot(stage, pass), bytes ? p.b + int64_t(k_row) * ldb + b_col : p.b, bytes);
        }
    };

    // Where this thread's fragments start in a stage (see the header comment).
    const int warp = tid / 32, lane = tid % 32;
    const int frag_row = (warp / Cfg::warps_n) * Cfg::warp_m + (lane / Cfg::warp_threads_n) * 4;
    const int frag_col = (warp % Cfg::warps_n) * Cfg::warp_n + (lane % Cfg::warp_threads_n) * 4;

    float acc[Cfg::tm][Cfg::tn];
#pragma unroll
    for (int i = 0; i < Cfg::tm; ++i)
#pragma unroll
        for (int j = 0; j < Cfg::tn; ++j) acc[i][j] = 0.0f;

    const int k_tiles = (p.k + Cfg::bk - 1) / Cfg::bk;
#pragma unroll
    for (int s = 0; s < Cfg::stages - 1; ++s) {
        if (s < k_tiles) load_tile(s, s);
        async::commit();
    }
    int read_stage = 0, write_stage = Cfg::stages - 1;
    for (int k_tile = 0; k_tile < k_tiles; ++k_tile) {
        async::wait<Cfg::stages - 2>();  // this thread's copies of step k_tile have landed,
        __syncthreads();                 // everyone's have, and step k_tile - 1 is consumed
        if (k_tile + Cfg::stages - 1 < k_tiles) load_tile(k_tile + Cfg::stages - 1, write_stage);
        async::commit();
        if (k_tile == p.prefetch_k_tile && p.beta != 0.0f) prefetch_c_tile<Cfg>(p, row0, col0);
        multiply_tile<Cfg>(a_tiles + read_stage * Cfg::a_stage_floats + frag_row,
                           b_tiles + read_stage * Cfg::b_stage_floats + frag_col, acc);
        read_stage = read_stage + 1 == Cfg::stages ? 0 : read_stage + 1;
        write_stage = write_stage + 1 == Cfg::stages ? 0 : write_stage + 1;
    }

    // Epilogue, four rows (one sub-tile row) at a time: all loads of C for the
    // four rows are issued before any store, so that their latencies overlap
    // (the compiler may not move a load of C past a store to C by itself).
#pragma unroll
    for (int i4 = 0; i4 < Cfg::tm / 4; ++i4) {
        const int row = row0 + frag_row + i4 * 4 * Cfg::warp_threads_m;
        float old[4][Cfg::tn];
        if (p.beta != 0.0f) {
#pragma unroll
            for (int ii = 0; ii < 4; ++ii)
#pragma unroll
                for (int j = 0; j < Cfg::tn / 4; ++j)
                    load_c4<Cfg::vec>(p, row + ii, col0 + frag_col + j * 4 * Cfg::warp_threads_n, &old[ii][4 * j]);
        }
#pragma unroll
        for (int ii = 0; ii < 4; ++ii)
#pragma unroll
            for (int j = 0; j < Cfg::tn / 4; ++j)
                store_c4<Cfg::vec>(p, row + ii, col0 + frag_col + j * 4 * Cfg::warp_threads_n,
                                   &acc[4 * i4 + ii][4 * j], &old[ii][4 * j]);
    }
}

template <class Cfg>
SgemmTileShape sgemm_rm_tile_shape() {
    SgemmTileShape shape;
    shape.block_m = Cfg::bm, shape.block_n = Cfg::bn, shape.block_k = Cfg::bk;
    shape.thread_m = Cfg::tm, shape.thread_n = Cfg::tn, shape.stages = Cfg::stages;
    shape.vector_loads = Cfg::vec == 4;
    shape.threads = Cfg::threads, shape.shared_bytes = Cfg::shared_bytes;
    shape.min_blocks_per_sm = Cfg::min_blocks;
    return shape;
}

template <class Cfg>
bool can_run_sgemm_rm(const SgemmArgs& args, const SgemmStream&) {
    return Cfg::vec == 1 || sgemm_vector_aligned(args);
}

// Called by the dispatcher only (see SgemmVariant::run): a real product that
// this configuration can run.
template <class Cfg>
void run_sgemm_rm(const SgemmArgs& args, const SgemmStream& where) {
    static const std::string name = sgemm_rm_variant_name(sgemm_rm_tile_shape<Cfg>());
    const auto stream = static_cast<cudaStream_t>(where.stream);
    SgemmRmParams p;
    static_cast<SgemmKernelProduct&>(p) = sgemm_kernel_product(args);
    p.tiles_m = int((args.m + Cfg::bm - 1) / Cfg::bm);
    p.tiles_n = int((args.n + Cfg::bn - 1) / Cfg::bn);
    const int k_tiles = int((args.k + Cfg::bk - 1) / Cfg::bk);
    p.prefetch_k_tile = k_tiles - (kPrefetchDistanceK + Cfg::bk - 1) / Cfg::bk;
    if (p.prefetch_k_tile < 0) p.prefetch_k_tile = 0;
    const int64_t blocks = int64_t(p.tiles_m) * p.tiles_n;
    if (blocks > INT_MAX)
        throw Error(TANDEM_ERROR_INTERNAL, name + ": " + std::to_string(blocks) + " tiles exceed the grid");
    prepare_kernel_shared_memory(reinterpret_cast<const void*>(&sgemm_rm_kernel<Cfg>), Cfg::shared_bytes);
    sgemm_rm_kernel<Cfg><<<unsigned(blocks), Cfg::threads, Cfg::shared_bytes, stream>>>(p);
    const cudaError_t status = cudaGetLastError();
    if (status != cudaSuccess) throw_cuda_error(status, ("launch of " + name).c_str(), __FILE__, __LINE__);
}

// The menu entry of configuration Cfg (called by the sgemm_rm_*.cu files).
template <class Cfg>
SgemmVariant make_sgemm_rm_variant() {
    SgemmVariant variant;
    variant.shape = sgemm_rm_tile_shape<Cfg>();
    variant.name = sgemm_rm_variant_name(variant.shape);
    variant.can_run = &can_run_sgemm_rm<Cfg>;
    variant.run = &run_sgemm_rm<Cfg>;
    return variant;
}

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_SGEMM_RM_CUH
