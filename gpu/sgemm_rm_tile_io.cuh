// The global-memory side of the sgemm_rm kernel (sgemm_rm.cuh): the cp.async
// copies of a tile's k steps into the shared-memory stages, and the epilogue
// that reads and writes the tile of C.
#ifndef TANDEM_GPU_SGEMM_RM_TILE_IO_CUH
#define TANDEM_GPU_SGEMM_RM_TILE_IO_CUH

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/async_copy.cuh"
#include "gpu/sgemm_rm_fragments.cuh"

namespace tandem::gpu {

// This thread's share of the copies of the tile at `origin` (see SgemmRmConfig
// for who copies what). Made once per tile; load() issues one k step.
template <class Cfg>
struct SgemmRmTileCopies {
    float* a_dst;            // this thread's first A slot in stage 0
    float* b_dst;            // its first B slot in stage 0
    const float* a_src;      // A(row0 + a_row, a_k), the row clamped inside A
    int64_t a_pass_stride;   // a_rows_per_pass rows of A
    unsigned a_rows_valid;   // bit `pass`: that row is inside A
    int b_k, b_col;          // this thread's first k row of a B step and its column
    unsigned b_bytes;        // valid bytes of its B vector
    bool interior;           // the tile lies wholly inside A, B and C

    __device__ __forceinline__ SgemmRmTileCopies(const SgemmRmParams& p, float* a_tiles, float* b_tiles,
                                                 int2 origin) {
        const int tid = threadIdx.x;
        const int a_k = tid % 8, a_row = tid / 8;
        a_rows_valid = 0;
#pragma unroll
        for (int pass = 0; pass < Cfg::a_row_passes; ++pass)
            if (origin.x + a_row + pass * Cfg::a_rows_per_pass < p.m) a_rows_valid |= 1u << pass;
        a_src = p.a + int64_t(min(origin.x + a_row, p.m - 1)) * p.lda + a_k;
        a_pass_stride = int64_t(Cfg::a_rows_per_pass) * p.lda;
        a_dst = a_tiles + a_k * Cfg::a_stride + a_row;
        const int b_vector = tid % Cfg::b_vectors_per_row;
        b_k = tid / Cfg::b_vectors_per_row;
        b_col = origin.y + b_vector * Cfg::vec;
        b_bytes = 4u * unsigned(max(0, min(p.n - b_col, Cfg::vec)));
        b_dst = b_tiles + b_k * Cfg::bn + b_vector * Cfg::vec;
        interior = origin.x + Cfg::bm <= p.m && origin.y + Cfg::bn <= p.n;
    }

    // Where copy (g, pass) of A and copy pass of B land in a stage.
    __device__ __forceinline__ float* a_slot(int stage, int g, int pass) const {
        return a_dst + stage * Cfg::a_stage_floats + 8 * g * Cfg::a_stride + pass * Cfg::a_rows_per_pass;
    }
    __device__ __forceinline__ float* b_slot(int stage, int pass) const {
        return b_dst + stage * Cfg::b_stage_floats + pass * Cfg::b_rows_per_pass * Cfg::bn;
    }
    static __device__ __forceinline__ void copy_b(float* dst, const float* src, unsigned bytes) {
        if constexpr (Cfg::vec == 4)
            async::copy16(dst, src, bytes);
        else
            async::copy4(dst, src, bytes);
    }

    // Copies k step k_tile of the tile into `stage`; copies beyond m, n or k
    // zero-fill without reading. Interior steps skip the per-copy bounds checks.
    __device__ __forceinline__ void load(const SgemmRmParams& p, int k_tile, int stage) const {
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
        const int a_k = int(threadIdx.x) % 8;
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
    }
};

// C := alpha * acc + beta * C on this thread's outputs of the tile at `origin`
// (its fragments start at (frag_row, frag_col) of the tile), Rows rows at a
// time: all loads of C for those rows are issued before any store, so that
// their latencies overlap (the compiler may not move a load of C past a store
// to C by itself). More rows overlap more, at Rows * TN registers.
template <class Cfg, int Rows>
__device__ __forceinline__ void store_c_tile(const SgemmRmParams& p, int2 origin, int frag_row, int frag_col,
                                             const float (&acc)[Cfg::tm][Cfg::tn]) {
    static_assert(4 % Rows == 0, "rows of a 4 x 4 sub-tile at a time");
#pragma unroll
    for (int i = 0; i < Cfg::tm; i += Rows) {
        const int row = origin.x + frag_row + (i / 4) * 4 * Cfg::warp_threads_m + i % 4;
        float old[Rows][Cfg::tn];
        if (p.beta != 0.0f) {
#pragma unroll
            for (int ii = 0; ii < Rows; ++ii)
#pragma unroll
                for (int j = 0; j < Cfg::tn / 4; ++j)
                    load_c4<Cfg::vec>(p, row + ii, origin.y + frag_col + j * 4 * Cfg::warp_threads_n,
                                      &old[ii][4 * j]);
        }
#pragma unroll
        for (int ii = 0; ii < Rows; ++ii)
#pragma unroll
            for (int j = 0; j < Cfg::tn / 4; ++j)
                store_c4<Cfg::vec>(p, row + ii, origin.y + frag_col + j * 4 * Cfg::warp_threads_n,
                                   &acc[i + ii][4 * j], &old[ii][4 * j]);
    }
}

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_SGEMM_RM_TILE_IO_CUH
