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
#include "gpu/scale_matrix.hpp"
#include "gpu/sgemm_variants.hpp"
#include "tandem/tandem.hpp"

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
};

// Blocks are grouped by this many tile rows, column by column within a group:
// the blocks resident at one time then share a few A row panels and B column
// panels in L2 instead of streaming all of B for each tile row.
constexpr int kGroupTileRows = 8;
// The C tile is prefetched to L2 when this much of k is left (about 4 us of a
// 128 x 128 tile's math at two blocks per SM: several DRAM latencies, yet short
// enough that the lines are still in L2 when the epilogue reads them).
constexpr int kPrefetchDistanceK = 64;

struct SgemmRmParams {
    int m, n, k;
    float alpha, beta;
    const float* a;
    const float* b;
    float* c;
    int64_t lda, ldb, ldc;
    int tiles_m, tiles_n;
    int prefetch_k_tile;  // k step at which the C tile is prefetched (if beta != 0)
};

// acc += (column kk of the A tile) x (row kk of the B tile) for kk < BK, with
// the next kk's fragments loaded while the current ones are multiplied.
// a_frag points at a_tile[0][first row of the thread], b_frag at b_tile[0][first column].
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

template <class Cfg>
__device__ __forceinline__ void multiply_tile(const float* a_frag, const float* b_frag,
                                              float (&acc)[Cfg::tm][Cfg::tn]) {
#pragma unroll
    for (int kk = 0; kk < Cfg::bk; ++kk) {
        float a[Cfg::tm], b[Cfg::tn];
        load_fragments<Cfg>(a_frag, b_frag, kk, a, b);
#pragma unroll
        for (int i = 0; i < Cfg::tm; ++i)
#pragma unroll
            for (int j = 0; j < Cfg::tn; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
}

// Prefetches the rows of the C tile into L2: one hint per 128-byte line, plus
// the tile row's last element (rows need not start on a line boundary).
template <class Cfg>
__device__ __forceinline__ void prefetch_c_tile(const SgemmRmParams& p, int row0, int col0) {
    constexpr int hints_per_row = Cfg::bn / 32 + 1;
    const int last_col = min(col0 + Cfg::bn, p.n) - 1;
    const float* const c = async::opaque(p.c);  // addresses made here, not hoisted out of the k loop
    for (int h = threadIdx.x; h < Cfg::bm * hints_per_row; h += Cfg::threads) {
        const int row = row0 + h / hints_per_row;
        const int chunk = h % hints_per_row;
        const int col = chunk + 1 == hints_per_row ? last_col : col0 + 32 * chunk;
        if (row < p.m && col <= last_col) async::prefetch_l2(c + int64_t(row) * p.ldc + col);
    }
}

// c_row[col .. col+3] (those < n) := alpha * v + beta * c_row[...], C not read when beta == 0.
template <int Vec>
__device__ __forceinline__ void store_c4(float* c_row, int col, int n, const float* v, float alpha,
                                         float beta) {
    if (Vec == 4 && col + 4 <= n) {
        float4* dst = reinterpret_cast<float4*>(c_row + col);
        float4 out = make_float4(alpha * v[0], alpha * v[1], alpha * v[2], alpha * v[3]);
        if (beta != 0.0f) {
            const float4 old = *dst;
            out.x = fmaf(beta, old.x, out.x), out.y = fmaf(beta, old.y, out.y);
            out.z = fmaf(beta, old.z, out.z), out.w = fmaf(beta, old.w, out.w);
        }
        *dst = out;
        return;
    }
#pragma unroll
    for (int j = 0; j < 4; ++j)
        if (col + j < n) {
            float out = alpha * v[j];
            if (beta != 0.0f) out = fmaf(beta, c_row[col + j], out);
            c_row[col + j] = out;
        }
}

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

    auto load_tile = [&](int k_tile, int stage) {
        const int k0 = k_tile * Cfg::bk;
        // Recomputed per step on purpose: hoisting one 64-bit pointer per copy out
        // of the k loop would cost the registers the accumulators need.
        const float* const a_row_src = async::opaque(a_src);
        const int64_t a_step = async::opaque(a_pass_stride);
        const int64_t ldb = async::opaque(p.ldb);
#pragma unroll
        for (int g = 0; g < Cfg::a_k_groups; ++g) {
            const bool k_inside = k0 + 8 * g + a_k < p.k;
#pragma unroll
            for (int pass = 0; pass < Cfg::a_row_passes; ++pass) {
                const bool inside = k_inside && (a_rows_valid >> pass & 1u);
                const float* src = inside ? a_row_src + pass * a_step + (k0 + 8 * g) : p.a;
                async::copy4(a_dst + stage * Cfg::a_stage_floats + 8 * g * Cfg::a_stride +
                                 pass * Cfg::a_rows_per_pass,
                             src, inside ? 4u : 0u);
            }
        }
#pragma unroll
        for (int pass = 0; pass < Cfg::b_row_passes; ++pass) {
            const int k_row = k0 + b_k + pass * Cfg::b_rows_per_pass;
            const unsigned bytes = k_row < p.k ? b_bytes : 0u;
            const float* src = bytes ? p.b + int64_t(k_row) * ldb + b_col : p.b;
            float* dst = b_dst + stage * Cfg::b_stage_floats + pass * Cfg::b_rows_per_pass * Cfg::bn;
            if constexpr (Cfg::vec == 4)
                async::copy16(dst, src, bytes);
            else
                async::copy4(dst, src, bytes);
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

#pragma unroll
    for (int i = 0; i < Cfg::tm; ++i) {
        const int row = row0 + frag_row + (i / 4) * 4 * Cfg::warp_threads_m + i % 4;
        if (row >= p.m) continue;
        float* const c_row = p.c + int64_t(row) * p.ldc;
#pragma unroll
        for (int j = 0; j < Cfg::tn / 4; ++j)
            store_c4<Cfg::vec>(c_row, col0 + frag_col + j * 4 * Cfg::warp_threads_n, p.n,
                               &acc[i][4 * j], p.alpha, p.beta);
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

template <class Cfg>
void run_sgemm_rm(const SgemmArgs& args, const SgemmStream& where) {
    check_sgemm_args(args);
    static const std::string name = sgemm_rm_variant_name(sgemm_rm_tile_shape<Cfg>());
    if (!can_run_sgemm_rm<Cfg>(args, where))
        throw Error(TANDEM_ERROR_INTERNAL, name + ": B or C is not 16-byte aligned with ldb, ldc "
                                                  "multiples of 4");
    const auto stream = static_cast<cudaStream_t>(where.stream);
    if (args.m == 0 || args.n == 0) return;
    if (args.k == 0 || args.alpha == 0.0f) {
        scale_matrix_rm(args.m, args.n, args.beta, args.c, args.ldc, stream);
        return;
    }
    SgemmRmParams p;
    p.m = int(args.m), p.n = int(args.n), p.k = int(args.k);
    p.alpha = args.alpha, p.beta = args.beta;
    p.a = args.a, p.b = args.b, p.c = args.c;
    p.lda = args.lda, p.ldb = args.ldb, p.ldc = args.ldc;
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
