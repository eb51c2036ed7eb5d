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
#include "gpu/sgemm_rm_tile_io.cuh"
#include "gpu/sgemm_variants.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {

// Where this thread's fragments start in a stage's tiles (see the header
// comment): (row of the A tile, column of the B tile).
template <class Cfg>
__device__ __forceinline__ int2 sgemm_rm_fragment_origin() {
    const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
    return make_int2((warp / Cfg::warps_n) * Cfg::warp_m + (lane / Cfg::warp_threads_n) * 4,
                     (warp % Cfg::warps_n) * Cfg::warp_n + (lane % Cfg::warp_threads_n) * 4);
}

// Contract: C = alpha * A * B + beta * C on the tile of C each block owns.
//   A m x k, B k x n, C m x n, all row-major with 64-bit leading dimensions;
//   k >= 1 and alpha != 0 (the launcher handles the other cases); C must not
//   overlap A or B; A and B may alias each other. Vec == 4 needs B and C 16-byte
//   aligned and ldb, ldc multiples of 4; Vec == 1 needs only float alignment.
//   Launch: a 1-D grid of tiles_m * tiles_n blocks (block b on tile b) of
//   Cfg::threads threads and Cfg::shared_bytes of dynamic shared memory.
template <class Cfg>
__global__ void __launch_bounds__(Cfg::threads, Cfg::min_blocks) sgemm_rm_kernel(const SgemmRmParams p) {
    extern __shared__ float4 shared_vec4[];
    float* const a_tiles = reinterpret_cast<float*>(shared_vec4);    // [stages][bk][a_stride]
    float* const b_tiles = a_tiles + Cfg::stages * Cfg::a_stage_floats;  // [stages][bk][bn]
    const int2 origin = sgemm_rm_tile_origin<Cfg>(p, int(blockIdx.x));
    const SgemmRmTileCopies<Cfg> copies(p, a_tiles, b_tiles, origin);
    const int2 frag = sgemm_rm_fragment_origin<Cfg>();

    float acc[Cfg::tm][Cfg::tn];
#pragma unroll
    for (int i = 0; i < Cfg::tm; ++i)
#pragma unroll
        for (int j = 0; j < Cfg::tn; ++j) acc[i][j] = 0.0f;

    const int k_tiles = (p.k + Cfg::bk - 1) / Cfg::bk;
#pragma unroll
    for (int s = 0; s < Cfg::stages - 1; ++s) {
        if (s < k_tiles) copies.load(p, s, s);
        async::commit();
    }
    int read_stage = 0, write_stage = Cfg::stages - 1;
    for (int k_tile = 0; k_tile < k_tiles; ++k_tile) {
        async::wait<Cfg::stages - 2>();  // this thread's copies of step k_tile have landed,
        __syncthreads();                 // everyone's have, and step k_tile - 1 is consumed
        if (k_tile + Cfg::stages - 1 < k_tiles) copies.load(p, k_tile + Cfg::stages - 1, write_stage);
        async::commit();
        if (k_tile == p.prefetch_k_tile && p.beta != 0.0f) prefetch_c_tile<Cfg>(p, origin);
        multiply_tile<Cfg>(a_tiles + read_stage * Cfg::a_stage_floats + frag.x,
                           b_tiles + read_stage * Cfg::b_stage_floats + frag.y, acc);
        read_stage = read_stage + 1 == Cfg::stages ? 0 : read_stage + 1;
        write_stage = write_stage + 1 == Cfg::stages ? 0 : write_stage + 1;
    }
    store_c_tile<Cfg, 4>(p, origin, frag.x, frag.y, acc);
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
