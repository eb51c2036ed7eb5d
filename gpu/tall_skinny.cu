// The tall-skinny kernel (after TSM2, seed 002): each block owns BM = 32 * TM
// whole rows of C (all n <= NP columns), so every element of A is read exactly
// once; B (k x n) is small, streamed through shared memory in k chunks beside
// the A chunks, and re-read from L2 by every block. The block's C rows are
// loaded into registers before the k loop, so that their DRAM latency overlaps
// the A stream; with few registers per thread several blocks share an SM and
// keep enough bytes in flight to saturate memory bandwidth.
#include "gpu/tall_skinny.hpp"

#include <cuda_runtime.h>

#include <string>

#include "gpu/async_copy.cuh"
#include "gpu/cuda_check.hpp"
#include "gpu/kernel_shared_memory.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {
namespace {

// NP: the padded column count (n <= NP); TM: consecutive rows per thread;
// MinBlocks: blocks per SM to fit in registers (bytes in flight for bandwidth);
// KC: k per pipeline step; Stages: pipeline depth.
// 256 threads = 32 thread rows (ty) x 8 thread columns (tx); a warp is 4 x 8.
template <int NP, int TM, int MinBlocks, int KC = 32, int Stages = 3>
struct TallSkinnyConfig {
    static constexpr int np = NP, tm = TM, min_blocks = MinBlocks;
    static constexpr int threads = 256;
    static constexpr int bm = 32 * TM;                // rows per block
    static constexpr int kc = KC;                     // k per pipeline step
    static constexpr int stages = Stages;
    static constexpr int tn = NP / 8;                 // columns per thread
    static constexpr int tn_vec = NP / 8 < 4 ? NP / 8 : 4;  // contiguous columns per access
    static constexpr int a_stride = bm + 4;           // a_tile[k][row]: see sgemm_rm.cuh
    static constexpr int a_stage_floats = kc * a_stride;
    static constexpr int b_stage_floats = kc * NP;
    static constexpr int shared_bytes = stages * (a_stage_floats + b_stage_floats) * 4;
    static constexpr int b_rows_per_pass = threads / NP;
    static_assert(TM == 2 || TM == 4, "A fragments are read as float2 or float4");
    static_assert(NP == 16 || NP == 32 || NP == 64, "column groups of tn_vec must tile tn");
    static_assert(KC % 8 == 0 && KC % b_rows_per_pass == 0 && Stages >= 2, "copy layout and pipeline");
};

struct TallSkinnyParams : SgemmKernelProduct {
    bool c_vectors;  // C 16-byte aligned and ldc % 4 == 0
};

template <int W>
__device__ __forceinline__ void load_vec(const float* src, float* dst) {
    if constexpr (W == 4) {
        const float4 v = *reinterpret_cast<const float4*>(src);
        dst[0] = v.x, dst[1] = v.y, dst[2] = v.z, dst[3] = v.w;
    } else {
        const float2 v = *reinterpret_cast<const float2*>(src);
        dst[0] = v.x, dst[1] = v.y;
    }
}

template <int W>
__device__ __forceinline__ void store_vec(float* dst, const float* v) {
    if constexpr (W == 4)
        *reinterpret_cast<float4*>(dst) = make_float4(v[0], v[1], v[2], v[3]);
    else
        *reinterpret_cast<float2*>(dst) = make_float2(v[0], v[1]);
}

// Contract: rows [blockIdx.x * BM, +BM) of C = alpha * A * B + beta * C, where
//   A m x k, B k x n (n <= NP), C m x n, row-major, 64-bit leading dimensions,
//   4-byte alignment (C is accessed in vectors only when p.c_vectors); k >= 1,
//   alpha != 0 (the launcher handles the rest); C must not overlap A or B.
//   Launch: ceil(m / BM) blocks of 256 threads, Cfg::shared_bytes of shared memory.
template <class Cfg>
__global__ void __launch_bounds__(Cfg::threads, Cfg::min_blocks) tall_skinny_kernel(const TallSkinnyParams p) {
    extern __shared__ float4 shared_vec4[];
    float* const a_tiles = reinterpret_cast<float*>(shared_vec4);       // [stages][kc][a_stride]
    float* const b_tiles = a_tiles + Cfg::stages * Cfg::a_stage_floats;  // [stages][kc][np]
    const int tid = threadIdx.x, lane = tid % 32;
    const int row0 = int(blockIdx.x) * Cfg::bm;
    const int ty = tid / 32 * 4 + lane / 8, tx = lane % 8;
    const int first_row = row0 + ty * Cfg::tm;
    constexpr int col_groups = Cfg::tn / Cfg::tn_vec;
    auto column = [&](int g) { return g * 8 * Cfg::tn_vec + tx * Cfg::tn_vec; };

    // A copies: k (tid % 8) + 8g of rows (tid / 8) + 32 * pass; B copies: element tid + 256 * pass.
    const int a_k = tid % 8, a_row = tid / 8;
    const int b_col = tid % Cfg::np, b_k = tid / Cfg::np;
    auto load_chunk = [&](int chunk, int stage) {
        const int k0 = chunk * Cfg::kc;
        const float* const a = async::opaque(p.a);  // addresses made here, not hoisted (registers)
        float* a_dst = a_tiles + stage * Cfg::a_stage_floats + a_k * Cfg::a_stride + a_row;
#pragma unroll
        for (int g = 0; g < Cfg::kc / 8; ++g)
#pragma unroll
            for (int pass = 0; pass < Cfg::tm; ++pass) {
                const int row = row0 + a_row + 32 * pass, kk = k0 + 8 * g + a_k;
                const bool inside = row < p.m && kk < p.k;
                const float* src = inside ? a + int64_t(row) * p.lda + kk : p.a;
                async::copy4(a_dst + 8 * g * Cfg::a_stride + 32 * pass, src, inside ? 4u : 0u);
            }
        float* b_dst = b_tiles + stage * Cfg::b_stage_floats + b_k * Cfg::np + b_col;
#pragma unroll
        for (int pass = 0; pass < Cfg::kc / Cfg::b_rows_per_pass; ++pass) {
            const int kk = k0 + b_k + pass * Cfg::b_rows_per_pass;
            const bool inside = b_col < p.n && kk < p.k;
            const float* src = inside ? p.b + int64_t(kk) * p.ldb + b_col : p.b;
            async::copy4(b_dst + pass * Cfg::b_rows_per_pass * Cfg::np, src, inside ? 4u : 0u);
        }
    };

    const int chunks = (p.k + Cfg::kc - 1) / Cfg::kc;
#pragma unroll
    for (int s = 0; s < Cfg::stages - 1; ++s) {
        if (s < chunks) load_chunk(s, s);
        async::commit();
    }

    // C rows to registers while the first chunks are in flight.
    float c_old[Cfg::tm][Cfg::tn];
#pragma unroll
    for (int i = 0; i < Cfg::tm; ++i)
#pragma unroll
        for (int g = 0; g < col_groups; ++g) {
            const int row = first_row + i, col = column(g);
            float* v = &c_old[i][g * Cfg::tn_vec];
            const float* src = p.c + int64_t(row) * p.ldc + col;
            const bool whole = p.c_vectors && col + Cfg::tn_vec <= p.n;
#pragma unroll
            for (int j = 0; j < Cfg::tn_vec; ++j) v[j] = 0.0f;
            if (p.beta == 0.0f || row >= p.m) continue;
            if (whole) {
                load_vec<Cfg::tn_vec>(src, v);
            } else {
#pragma unroll
                for (int j = 0; j < Cfg::tn_vec; ++j)
                    if (col + j < p.n) v[j] = src[j];
            }
        }

    float acc[Cfg::tm][Cfg::tn];
#pragma unroll
    for (int i = 0; i < Cfg::tm; ++i)
#pragma unroll
        for (int j = 0; j < Cfg::tn; ++j) acc[i][j] = 0.0f;

    int read_stage = 0, write_stage = Cfg::stages - 1;
    for (int chunk = 0; chunk < chunks; ++chunk) {
        async::wait<Cfg::stages - 2>();
        __syncthreads();
        if (chunk + Cfg::stages - 1 < chunks) load_chunk(chunk + Cfg::stages - 1, write_stage);
        async::commit();
        const float* a_frag = a_tiles + read_stage * Cfg::a_stage_floats + ty * Cfg::tm;
        const float* b_frag = b_tiles + read_stage * Cfg::b_stage_floats;
#pragma unroll 8
        for (int kk = 0; kk < Cfg::kc; ++kk) {
            float a[Cfg::tm], b[Cfg::tn];
            load_vec<Cfg::tm>(a_frag + kk * Cfg::a_stride, a);
#pragma unroll
            for (int g = 0; g < col_groups; ++g)
                load_vec<Cfg::tn_vec>(b_frag + kk * Cfg::np + column(g), &b[g * Cfg::tn_vec]);
#pragma unroll
            for (int i = 0; i < Cfg::tm; ++i)
#pragma unroll
                for (int j = 0; j < Cfg::tn; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        read_stage = read_stage + 1 == Cfg::stages ? 0 : read_stage + 1;
        write_stage = write_stage + 1 == Cfg::stages ? 0 : write_stage + 1;
    }

#pragma unroll
    for (int i = 0; i < Cfg::tm; ++i) {
        const int row = first_row + i;
        if (row >= p.m) continue;
#pragma unroll
        for (int g = 0; g < col_groups; ++g) {
            const int col = column(g);
            float out[Cfg::tn_vec];
#pragma unroll
            for (int j = 0; j < Cfg::tn_vec; ++j) {
                out[j] = p.alpha * acc[i][g * Cfg::tn_vec + j];
                if (p.beta != 0.0f) out[j] = fmaf(p.beta, c_old[i][g * Cfg::tn_vec + j], out[j]);
            }
            float* dst = p.c + int64_t(row) * p.ldc + col;
            if (p.c_vectors && col + Cfg::tn_vec <= p.n) {
                store_vec<Cfg::tn_vec>(dst, out);
            } else {
#pragma unroll
                for (int j = 0; j < Cfg::tn_vec; ++j)
                    if (col + j < p.n) dst[j] = out[j];
            }
        }
    }
}

template <class Cfg>
void launch_tall_skinny(const TallSkinnyParams& p, cudaStream_t stream) {
    prepare_kernel_shared_memory(reinterpret_cast<const void*>(&tall_skinny_kernel<Cfg>),
                                 Cfg::shared_bytes);
    const unsigned blocks = unsigned((int64_t(p.m) + Cfg::bm - 1) / Cfg::bm);
    tall_skinny_kernel<Cfg><<<blocks, Cfg::threads, Cfg::shared_bytes, stream>>>(p);
    const cudaError_t status = cudaGetLastError();
    if (status != cudaSuccess) {
        const std::string what = "launch of tall_skinny_kernel<" + std::to_string(Cfg::np) + ">";
        throw_cuda_error(status, what.c_str(), __FILE__, __LINE__);
    }
}

bool can_run_tall_skinny(const SgemmArgs& args, const SgemmStream&) {
    return args.n <= kTallSkinnyMaxN;
}

// Called by the dispatcher only (see SgemmVariant::run).
void run_tall_skinny(const SgemmArgs& args, const SgemmStream& where) {
    const auto stream = static_cast<cudaStream_t>(where.stream);
    TallSkinnyParams p;
    static_cast<SgemmKernelProduct&>(p) = sgemm_kernel_product(args);
    p.c_vectors = reinterpret_cast<uintptr_t>(args.c) % 16 == 0 && args.ldc % 4 == 0;
    // n <= 16: k in chunks of 16 (a chunk of 32 is half zeros at the LU's
    // k = n = 16) and 128 rows a block: 3711 against 2459 GB/s at 4194304 x 16 x
    // 16, 3373 against 2301 at 1048576 rows, 80-90% of the device's copy
    // bandwidth against 55-59% (H200, 2026-11-22).
    if (args.n <= 16)
        launch_tall_skinny<TallSkinnyConfig<16, 4, 4, 16, 3>>(p, stream);
    else if (args.n <= 32)
        launch_tall_skinny<TallSkinnyConfig<32, 2, 4>>(p, stream);
    else
        launch_tall_skinny<TallSkinnyConfig<64, 4, 2>>(p, stream);
}

}  // namespace

SgemmVariant make_tall_skinny_variant() {
    SgemmVariant variant;
    variant.name = kTallSkinnyVariant;
    variant.can_run = &can_run_tall_skinny;
    variant.run = &run_tall_skinny;
    return variant;
}

}  // namespace tandem::gpu
