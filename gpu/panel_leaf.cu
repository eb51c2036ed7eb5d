#include "gpu/panel_leaf.hpp"

#include <cooperative_groups.h>

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <climits>
#include <cstdint>
#include <string>
#include <type_traits>

#include "gpu/cuda_check.hpp"
#include "gpu/kernel_shared_memory.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {
namespace {

constexpr int kNoRow = INT_MAX;  // the logical index of a thread's slot past the last row
// The largest (non-portable) cluster on Hopper, which is also the default limit.
constexpr int kMaxClusterBlocks = kDefaultLeafClusterLimit;

// Which of two candidates for a pivot wins: the larger magnitude, then the
// smaller logical row (LAPACK's isamax takes the first maximum). Magnitudes
// are never NaN here (a NaN row is never a candidate), so the order is total.
__device__ __forceinline__ bool wins(float magnitude, int row, float other_magnitude, int other_row) {
    return magnitude > other_magnitude || (magnitude == other_magnitude && row < other_row);
}

// A candidate's magnitude as an unsigned key that orders like the magnitude
// (the bits of a non-negative float do), 0 for no candidate.
__device__ __forceinline__ unsigned magnitude_key(float magnitude) {
    return __float_as_uint(magnitude) + 1u;
}

// The winner among the candidates (key, row) of a warp's lanes, in every lane:
// two warp reductions (redux.sync) instead of a butterfly of shuffles.
__device__ __forceinline__ void warp_winner(unsigned key, int row, unsigned& best_key, int& best_row) {
    best_key = __reduce_max_sync(0xffffffffu, key);
    best_row = static_cast<int>(
        __reduce_min_sync(0xffffffffu, key == best_key && key != 0 ? unsigned(row) : unsigned(kNoRow)));
}

// out[0 .. W) = v[slot][0 .. W) with zeros from slot `finished` on (see the
// update), as a chain of branches: one lane of a warp runs this, and
// predicated stores would issue S * W instructions for it.
template <int S, int W, int s = 0>
__device__ __forceinline__ void publish_slot(const float (&v)[S][W], int slot, int finished,
                                             float* out) {
    if constexpr (s < S) {
        if (slot == s) {
#pragma unroll
            for (int k = 0; k < W; ++k) out[k] = k < finished ? v[s][k] : 0.0f;
        } else {
            publish_slot<S, W, s + 1>(v, slot, finished, out);
        }
    }
}

// publish_slot for a row whose update is not done yet: v holds slot 0 of
// the next column already, the other slots before this column's update,
// which out receives as the update will leave them (the same fmaf, so the
// published row and the row its owner keeps agree to the bit).
template <int S, int W, int s = 0>
__device__ __forceinline__ void publish_updated_slot(const float (&v)[S][W], const float (&multiplier)[S],
                                                     const float (&u)[W], int slot, int finished,
                                                     float* out) {
    if constexpr (s < S) {
        if (slot == s) {
            out[0] = v[s][0];
#pragma unroll
            for (int k = 1; k < W - 1; ++k) out[k] = k < finished ? fmaf(-multiplier[s], u[k + 1], v[s][k + 1]) : 0.0f;
            out[W - 1] = 0.0f;  // finished <= W - 1: a column is always done
        } else {
            publish_updated_slot<S, W, s + 1>(v, multiplier, u, slot, finished, out);
        }
    }
}

// A block's barrier split in two (an mbarrier in shared memory): arrive
// returns at once, wait blocks until every thread of the block has arrived
// at the phase of `token`. Release and acquire at the block's scope, as
// __syncthreads orders shared memory.
__device__ __forceinline__ unsigned shared_address(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void init_split_barrier(uint64_t* barrier, unsigned threads) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(barrier)), "r"(threads)
                 : "memory");
}
__device__ __forceinline__ uint64_t arrive_split_barrier(uint64_t* barrier) {
    uint64_t token;
    asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];"
                 : "=l"(token)
                 : "r"(shared_address(barrier))
                 : "memory");
    return token;
}
__device__ __forceinline__ void wait_split_barrier(uint64_t* barrier, uint64_t token) {
    asm volatile(
        "{\n\t.reg .pred done;\n"
        "waiting:\n\t"
        "mbarrier.try_wait.shared::cta.b64 done, [%0], %1;\n\t"
        "@!done bra waiting;\n}" ::"r"(shared_address(barrier)),
        "l"(token)
        : "memory");
}

// One thread block factors the whole leaf. Thread t holds rows t, t + T, ...,
// t + (S-1) T in registers (W floats each) with their logical positions. Per
// column j:
//   1. each thread picks its best active row (logical >= j; a tree over its
//      slots), two warp reductions pick the warp's, whose owner publishes its
//      magnitude, logical row and the row itself in shared memory
//      (double-buffered by column parity, so that the next column's
//      publishing cannot overwrite what a slower warp still reads);
//   2. a barrier; every thread reduces the published candidates itself, so
//      all threads know the pivot and read its row from shared memory;
//   3. the pivot row takes logical position j, the row at j takes the pivot's
//      old position, and every other active row is scaled and updated.
// The barrier of step 2 is split in two: a thread arrives as soon as its warp
// has published the next column's candidate (the candidate row as the update
// will leave it), then updates the rest of its rows, and only then waits; so
// the bulk of the update runs while the slower warps (and, in a cluster, the
// other blocks) publish, off the chain of columns (one block: an mbarrier).
// With the trees below, that took 8-12% off the clustered leaves and left
// the one-block leaves as they were (docs/ALGORITHM.md).
// Rows never move in memory until the end, where the caller's moves list
// records the net permutation.
// Column-major storage (the caller's matrix of sgetrf_gpu) differs only in
// where element (r, k) lies.
//
// kCluster: a leaf too tall for one block's registers is held by a thread
// block cluster (Hopper) of gridDim.x blocks, block b holding rows
// b*S*T .. (b+1)*S*T-1 the same way. Candidates are pushed into an inbox in
// EVERY block's shared memory (distributed shared memory: remote stores,
// which do not stall the warp as remote loads would), the barrier of step 2
// is the cluster's, and each warp reduces the candidates of its own inbox (a
// lane a candidate) and reads the pivot row there. Pulling the candidates and
// the row from the other blocks instead cost 5 us a column at 16 blocks
// (docs/PERFORMANCE.md). Each warp pushes its own candidate, or, with
// kBlockFirst, the block first picks its winner among its warps' (one more
// block barrier) and one warp pushes that: an eighth of the remote stores.
// Block 0 alone writes ipiv, info and the moves' count.
template <int W, int S, int T, bool kColumnMajor, bool kCluster, bool kBlockFirst>
__global__ void __launch_bounds__(T, 1)
    factor_leaf_kernel(float* __restrict__ a, int64_t ld, int rows, int width,
                       int* __restrict__ ipiv, int pivot_base, int* __restrict__ info,
                       int info_base, int* __restrict__ moves, bool vector_rows) {
    namespace cg = cooperative_groups;
    constexpr int kWarps = T / 32;
    static_assert(kWarps <= 32, "one warp reduces the warps' candidates");
    __shared__ __align__(16) unsigned published_key[2][kWarps];
    __shared__ __align__(16) int published_row[2][kWarps];
    __shared__ __align__(16) float published_values[2][kWarps][W];
    __shared__ int move_count;
    __shared__ uint64_t column_barrier;  // one block's split barrier
    // The cluster's candidates: entry b * kSenders + w from block b's warp w
    // (kBlockFirst: entry b, block b's winner).
    constexpr int kSenders = kBlockFirst ? 1 : kWarps;
    constexpr int kInbox = kCluster ? kMaxClusterBlocks * kSenders : 1;
    __shared__ __align__(16) unsigned inbox_key[2][kInbox];
    __shared__ __align__(16) int inbox_row[2][kInbox];
    __shared__ __align__(16) float inbox_values[2][kInbox][W];

    const int t = threadIdx.x, lane = t % 32, warp = t / 32;
    const int block = kCluster ? static_cast<int>(blockIdx.x) : 0;
    const int blocks = kCluster ? static_cast<int>(gridDim.x) : 1;
    const int first_row = block * S * T;  // of this block's rows
    // Every block's barrier, or the cluster's (which orders shared-memory
    // writes before other blocks' reads, as __syncthreads does in a block).
    auto barrier = [] {
        if constexpr (kCluster) cg::this_cluster().sync();
        else __syncthreads();
    };
    // The column barrier, split (see above).
    uint64_t arrival = 0;  // one block: the phase this thread arrived at last
    auto arrive = [&] {
        if constexpr (kCluster) __cluster_barrier_arrive();
        else arrival = arrive_split_barrier(&column_barrier);
    };
    auto wait = [&] {
        if constexpr (kCluster) __cluster_barrier_wait();
        else wait_split_barrier(&column_barrier, arrival);
    };
    if (t == 0) move_count = 0;
    if (!kCluster && t == 0) init_split_barrier(&column_barrier, T);
    cudaGridDependencySynchronize();  // the work before on the stream (see programmatic_launch)
    // Finite contents from the start: a column without a candidate (all NaN)
    // reads a stale row here and multiplies it by zero (see the update). The
    // barrier keeps a slow thread's zeros off a row another warp publishes.
    for (int i = t; i < 2 * kWarps * W; i += T) (&published_values[0][0][0])[i] = 0.0f;
    if constexpr (kCluster)
        for (int i = t; i < 2 * kInbox * W; i += T) (&inbox_values[0][0][0])[i] = 0.0f;
    // In a cluster, also: every block has started (and zeroed its inbox)
    // before any block writes into another's shared memory.
    barrier();

    float v[S][W];
    int logical[S];
#pragma unroll
    for (int s = 0; s < S; ++s) {
        const int r = first_row + t + s * T;
        logical[s] = r < rows ? r : kNoRow;
        const float* row = kColumnMajor ? a + r : a + int64_t(r) * ld;
        const int64_t step = kColumnMajor ? ld : 1;  // from one column to the next
        if (r < rows && vector_rows && !kColumnMajor) {
#pragma unroll
            for (int k = 0; k < W; k += 4) {
                const float4 q = *reinterpret_cast<const float4*>(row + k);
                v[s][k] = q.x, v[s][k + 1] = q.y, v[s][k + 2] = q.z, v[s][k + 3] = q.w;
            }
        } else {
#pragma unroll
            for (int k = 0; k < W; ++k) v[s][k] = (r < rows && k < width) ? row[k * step] : 0.0f;
        }
    }

    // The column loop is NOT unrolled: unrolled over W columns the kernel's
    // straight-line code ran to some 100 KB, fetched afresh at every launch,
    // and a column cost about 2 us. Instead every row rotates by one slot a
    // column (the current column always in slot 0, its finished value moved
    // to slot W-1), so the loop body indexes registers at compile time and
    // after W columns each value is back in its own slot.
    //
    // Each column first updates slot 0 (the next column), picks and publishes
    // the next candidate, arrives, and only then updates the rest of the row.
    int best_slot = -1;     // this thread's candidate for the current column
    int best_row = kNoRow;
    unsigned warp_key = 0;  // the warp's candidate
    int warp_row = kNoRow;
    auto pick_candidate = [&](int j) {
        // A tree over the slots (depth log2 S, not a chain of S): the order
        // is total, so any tree picks the first maximum.
        float m[S];
        int r[S], slot[S];
#pragma unroll
        for (int s = 0; s < S; ++s) {
            const float magnitude = fabsf(v[s][0]);
            // -1: below every magnitude, so rows done, past the end or NaN never win
            const bool active = logical[s] >= j && logical[s] != kNoRow && magnitude >= 0.0f;
            m[s] = active ? magnitude : -1.0f, r[s] = logical[s], slot[s] = s;
        }
#pragma unroll
        for (int stride = 1; stride < S; stride *= 2)
#pragma unroll
            for (int s = 0; s + stride < S; s += 2 * stride)
                if (wins(m[s + stride], r[s + stride], m[s], r[s]))
                    m[s] = m[s + stride], r[s] = r[s + stride], slot[s] = slot[s + stride];
        const bool found = m[0] >= 0.0f;
        best_row = found ? r[0] : kNoRow, best_slot = found ? slot[0] : -1;
        warp_winner(found ? magnitude_key(m[0]) : 0u, best_row, warp_key, warp_row);
    };
    // Lanes < W push `value` (lane 0 also the key and row) into inbox entry
    // `entry` of every block of the cluster.
    auto push = [&](int parity, int entry, float value, unsigned key, int row) {
        const cg::cluster_group cluster = cg::this_cluster();
        for (int b = 0; b < blocks; ++b) {
            const unsigned rank = static_cast<unsigned>(b);
            if (lane < W) *cluster.map_shared_rank(&inbox_values[parity][entry][lane], rank) = value;
            if (lane == 0) {
                *cluster.map_shared_rank(&inbox_key[parity][entry], rank) = key;
                *cluster.map_shared_rank(&inbox_row[parity][entry], rank) = row;
            }
        }
    };
    // write_row(out): the candidate's row into out, by the thread that holds it.
    auto publish_candidate = [&](int j, auto write_row) {
        const int parity = j % 2;
        if (warp_row != kNoRow && best_row == warp_row)  // this thread holds the warp's candidate
            write_row(published_values[parity][warp]);
        if (kCluster && !kBlockFirst) {
            __syncwarp();
            push(parity, block * kWarps + warp, lane < W ? published_values[parity][warp][lane] : 0.0f,
                 warp_key, warp_row);
            return;
        }
        if (lane == 0) {
            published_key[parity][warp] = warp_key;
            published_row[parity][warp] = warp_row;
        }
        if constexpr (kCluster && kBlockFirst) {
            __syncthreads();
            if (warp == 0) {  // the block's winner: lane w reads warp w's candidate
                const unsigned key = lane < kWarps ? published_key[parity][lane] : 0u;
                const int row = lane < kWarps ? published_row[parity][lane] : kNoRow;
                unsigned block_key;
                int block_row;
                warp_winner(key, row, block_key, block_row);
                const unsigned holder = __ballot_sync(0xffffffffu, key != 0 && key == block_key && row == block_row);
                const int from = holder != 0 ? __ffs(holder) - 1 : 0;
                push(parity, block, lane < W ? published_values[parity][from][lane] : 0.0f, block_key, block_row);
            }
        }
    };
    if (width > 0) {
        pick_candidate(0);
        publish_candidate(0, [&](float* out) { publish_slot<S, W>(v, best_slot, W, out); });
        arrive();
    }

    int first_zero = 0;  // thread 0: 1-based column of the first zero pivot
#pragma unroll 1
    for (int j = 0; j < width; ++j) {
        const int parity = j % 2;
        wait();

        unsigned pivot_key = 0;
        int pivot = kNoRow;
        const float* pivot_values = nullptr;  // the published pivot row
        if constexpr (kCluster) {
            // Lane-striped over the inbox, then the warp's reductions; the
            // lane that read the winner names its entry.
            unsigned key = 0;
            int row = kNoRow, where = 0;
            for (int e = lane; e < blocks * kSenders; e += 32) {
                const unsigned k = inbox_key[parity][e];
                const int r = inbox_row[parity][e];
                if (k > key || (k == key && k != 0 && r < row)) key = k, row = r, where = e;
            }
            warp_winner(key, row, pivot_key, pivot);
            const unsigned holder = __ballot_sync(0xffffffffu, key == pivot_key && row == pivot);
            where = __shfl_sync(0xffffffffu, where, holder != 0 ? __ffs(holder) - 1 : 0);
            pivot_values = inbox_values[parity][where];
        } else {
            // Every thread reduces the warps' candidates itself, from shared
            // memory (broadcast reads): no cross-lane round trips; a tree.
            unsigned key[kWarps];
            int row[kWarps], from[kWarps];
#pragma unroll
            for (int w = 0; w < kWarps; ++w)
                key[w] = published_key[parity][w], row[w] = published_row[parity][w], from[w] = w;
#pragma unroll
            for (int stride = 1; stride < kWarps; stride *= 2)
#pragma unroll
                for (int w = 0; w + stride < kWarps; w += 2 * stride) {
                    const int o = w + stride;
                    if (key[o] > key[w] || (key[o] == key[w] && key[o] != 0 && row[o] < row[w]))
                        key[w] = key[o], row[w] = row[o], from[w] = from[o];
                }
            if (key[0] != 0) pivot_key = key[0], pivot = row[0];
            pivot_values = published_values[parity][from[0]];
        }
        // Every candidate NaN: no row qualifies. The row at j stays; the
        // column's NaNs spread through the update as they would in LAPACK.
        const bool found = pivot_key != 0;
        if (!found) pivot = j;
        // The pivot row in the rotated frame: u[0] the pivot, u[1 .. W-j) the
        // columns still to factor, and zeros (as published) over the slots
        // that hold finished multipliers (W-j .. W-1), which the update must
        // leave as they are (exactly: x - l * 0 = x for finite l).
        float u[W];
#pragma unroll
        for (int k = 0; k < W; ++k) u[k] = pivot_values[k];
        const float pivot_value = found ? u[0] : __int_as_float(0x7fc00000);

#pragma unroll
        for (int s = 0; s < S; ++s) {
            if (logical[s] == pivot) logical[s] = j;
            else if (logical[s] == j) logical[s] = pivot;
        }
        if (t == 0) {
            if (block == 0) ipiv[j] = pivot_base + 1 + pivot;
            if (pivot_value == 0.0f && first_zero == 0) first_zero = j + 1;
        }

        // LAPACK's sgetrf2 on one column: multiply by the reciprocal unless
        // the pivot is below the safe minimum (then divide); a zero pivot
        // leaves the column (all zeros) as it is. The branch is the whole
        // block's alike. Rows already pivoted (and slots past the last row)
        // only rotate.
        const bool divide = !(fabsf(pivot_value) >= FLT_MIN);
        float quotient[S];
        if (divide) {
#pragma unroll
            for (int s = 0; s < S; ++s) quotient[s] = pivot_value != 0.0f ? v[s][0] / pivot_value : v[s][0];
        } else {
            const float reciprocal = 1.0f / pivot_value;
#pragma unroll
            for (int s = 0; s < S; ++s) quotient[s] = v[s][0] * reciprocal;
        }
        // Branch-free: a row that is not updated (pivoted already, or past
        // the last row) takes the multiplier 0 and rotates unchanged, since
        // x - 0 * u = x for the finite pivot row; branches here diverged in
        // most warps (one pivoted row in a warp's slot is enough) and ran
        // both ways.
        float multiplier[S], finished[S];
#pragma unroll
        for (int s = 0; s < S; ++s) {  // slot 0 first: the next column
            const bool updated = logical[s] > j && logical[s] != kNoRow;
            multiplier[s] = updated ? quotient[s] : 0.0f;
            finished[s] = updated ? quotient[s] : v[s][0];
            v[s][0] = fmaf(-multiplier[s], u[1], v[s][1]);
        }
        if (j + 1 < width) {
            pick_candidate(j + 1);
            publish_candidate(j + 1, [&](float* out) {
                publish_updated_slot<S, W>(v, multiplier, u, best_slot, W - j - 1, out);
            });
            arrive();
        }
#pragma unroll
        for (int s = 0; s < S; ++s) {
#pragma unroll
            for (int k = 2; k < W; ++k) v[s][k - 1] = fmaf(-multiplier[s], u[k], v[s][k]);
            v[s][W - 1] = finished[s];
        }
    }
    // Block 0's count of the moves; the cluster's blocks add to it in place.
    int* const move_counter = kCluster ? cg::this_cluster().map_shared_rank(&move_count, 0u) : &move_count;
#pragma unroll
    for (int s = 0; s < S; ++s) {
        const int r = first_row + t + s * T;
        if (r >= rows) continue;
        float* row = kColumnMajor ? a + r : a + int64_t(r) * ld;
        const int64_t step = kColumnMajor ? ld : 1;
        if (vector_rows && !kColumnMajor) {
#pragma unroll
            for (int k = 0; k < W; k += 4)
                *reinterpret_cast<float4*>(row + k) = make_float4(v[s][k], v[s][k + 1], v[s][k + 2], v[s][k + 3]);
        } else {
#pragma unroll
            for (int k = 0; k < W; ++k) {  // `width` rotations: slot k holds column (k + width) mod W
                const int column = (k + width) % W;
                if (column < width) row[column * step] = v[s][k];
            }
        }
        if (logical[s] != r) {
            const int i = atomicAdd(move_counter, 1);
            moves[1 + 2 * i] = logical[s];
            moves[2 + 2 * i] = r;
        }
    }
    // Also keeps every block's shared memory alive until no other block reads it.
    barrier();
    if (t == 0 && block == 0) {
        moves[0] = move_count;
        if (first_zero != 0 && *info == 0) *info = info_base + first_zero;
    }
}

// Each block owns 32 columns: it reads the source rows' segments into shared
// memory, waits for the whole block, then writes them to their destinations
// (so cycles of moves need no order).
constexpr int kMoveColumns = 32;
constexpr int kMoveWarps = 4;
__global__ void __launch_bounds__(kMoveWarps * 32)
    apply_leaf_moves_kernel(float* __restrict__ a, int64_t ld, int64_t cols,
                            const int* __restrict__ moves) {
    __shared__ float segment[kLeafMovesInts / 2][kMoveColumns];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    cudaGridDependencySynchronize();  // the leaf's moves (see programmatic_launch)
    const int count = moves[0];
    const int64_t j = int64_t(blockIdx.x) * kMoveColumns + lane;
    const bool active = j < cols;
    if (active)
        for (int i = warp; i < count; i += kMoveWarps)
            segment[i][lane] = a[int64_t(moves[2 + 2 * i]) * ld + j];
    __syncthreads();
    if (active)
        for (int i = warp; i < count; i += kMoveWarps)
            a[int64_t(moves[1 + 2 * i]) * ld + j] = segment[i][lane];
}

// In a column-major block a warp's threads read consecutive rows of a column.
__global__ void __launch_bounds__(kMoveWarps * 32)
    apply_leaf_moves_column_major_kernel(float* __restrict__ a, int64_t ld, int64_t cols,
                                         const int* __restrict__ moves) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    cudaGridDependencySynchronize();  // the leaf's moves (see programmatic_launch)
    const int count = moves[0];
    const int64_t j = int64_t(blockIdx.x) * kMoveWarps + warp;  // a warp owns a column
    if (j >= cols) return;
    float* const column = a + j * ld;
    constexpr int kPerLane = kLeafMovesInts / 2 / 32;
    float held[kPerLane];
#pragma unroll
    for (int h = 0; h < kPerLane; ++h) {
        const int i = lane + 32 * h;
        if (i < count) held[h] = column[moves[2 + 2 * i]];
    }
    __syncwarp();  // every source read before any destination is written
#pragma unroll
    for (int h = 0; h < kPerLane; ++h) {
        const int i = lane + 32 * h;
        if (i < count) column[moves[1 + 2 * i]] = held[h];
    }
}

constexpr int kCatchUpThreads = 256;  // a block: at least a thread for each move of a leaf
// Up to this many leaves a launch of catch_up_columns_kernel (about 2.9 KB of
// parameters, under the 4 KB every launch may pass); more go in several
// launches, in order.
constexpr int kCatchUpLeaves = 240;
struct CatchUpLeaves {
    int count;
    int first_row;  // of the rows held: those from the first leaf's first row on
    int leaf_row[kCatchUpLeaves];
    const int* moves[kCatchUpLeaves];
};
static_assert(sizeof(CatchUpLeaves) + 32 <= 4096, "catch_up_columns_kernel's parameters fit 4 KB");

// One block a column: rows [first_row, rows) of column blockIdx.x into shared
// memory, each leaf's moves applied there in order (every source read before
// any destination of the same leaf is written), the rows written back.
__global__ void __launch_bounds__(kCatchUpThreads)
    catch_up_columns_kernel(float* __restrict__ a, int64_t ld, int rows,
                            const __grid_constant__ CatchUpLeaves leaves) {
    extern __shared__ float held[];
    const int t = threadIdx.x;
    const int count = rows - leaves.first_row;
    float* const column = a + int64_t(blockIdx.x) * ld + leaves.first_row;
    for (int i = t; i < count; i += blockDim.x) held[i] = column[i];
    __syncthreads();
    for (int l = 0; l < leaves.count; ++l) {
        const int* const moves = leaves.moves[l];
        const int base = leaves.leaf_row[l] - leaves.first_row;
        const int moved = moves[0];
        float value = 0.0f;
        if (t < moved) value = held[base + moves[2 + 2 * t]];
        __syncthreads();
        if (t < moved) held[base + moves[1 + 2 * t]] = value;
        __syncthreads();
    }
    for (int i = t; i < count; i += blockDim.x) column[i] = held[i];
}

// The leaves and their moves are launched as programmatic dependent launches
// (Hopper): a kernel is launched while the one before it on the stream still
// runs, and waits in cudaGridDependencySynchronize() for its completion and
// memory, so each launch's latency overlaps the work before it. The recursive
// panel is a chain of some 4 short kernels a leaf.
cudaLaunchConfig_t programmatic_launch(dim3 block, cudaStream_t stream,
                                       cudaLaunchAttribute& overlap) {
    cudaLaunchConfig_t config = {};
    config.blockDim = block;
    config.gridDim = dim3(1);
    config.stream = stream;
    overlap = {};
    overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    overlap.val.programmaticStreamSerializationAllowed = 1;
    config.attrs = &overlap;
    config.numAttrs = 1;
    return config;
}

// The launch attribute of a 1-D cluster of `blocks` blocks.
cudaLaunchAttribute cluster_dimension(int blocks) {
    cudaLaunchAttribute cluster = {};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = static_cast<unsigned>(blocks);
    cluster.val.clusterDim.y = 1;
    cluster.val.clusterDim.z = 1;
    return cluster;
}

// Leaf shapes: W columns, S rows a thread, T = 256 threads a block; S * W
// registers of data a thread stay below the 255-register cap. One block holds
// 4 * 256 rows of 32 columns, 8 * 256 of 16 or 16 * 256 of 8; a cluster of
// blocks holds as many times that.
constexpr int kLeafThreads = 256;
constexpr int rows_per_block(int width) { return (width > 16 ? 4 : width > 8 ? 8 : 16) * kLeafThreads; }

// A cluster of more than 8 blocks is a non-portable size: the kernel must
// allow it (once a device, see max_cluster_blocks), and the device must have
// that many SMs free in one GPC.
template <typename Kernel>
void allow_large_clusters(Kernel kernel) {
    TANDEM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
}
// Every clustered leaf kernel launch_leaf may launch, in both layouts.
template <bool kBlockFirst>
void allow_large_leaf_clusters() {
    allow_large_clusters(factor_leaf_kernel<32, 4, kLeafThreads, true, true, kBlockFirst>);
    allow_large_clusters(factor_leaf_kernel<32, 4, kLeafThreads, false, true, kBlockFirst>);
    allow_large_clusters(factor_leaf_kernel<16, 8, kLeafThreads, true, true, kBlockFirst>);
    allow_large_clusters(factor_leaf_kernel<16, 8, kLeafThreads, false, true, kBlockFirst>);
    allow_large_clusters(factor_leaf_kernel<8, 16, kLeafThreads, true, true, kBlockFirst>);
    allow_large_clusters(factor_leaf_kernel<8, 16, kLeafThreads, false, true, kBlockFirst>);
}
void allow_large_leaf_clusters() {
    allow_large_leaf_clusters<false>();
    allow_large_leaf_clusters<true>();
}

// Clusters of more blocks than this pick each block's winner first. With
// 9-16 blocks the fewer remote stores win (16384 x 32: 2.17 against 2.68 us a
// column; 32768 x 16: 2.64 against 3.00); with 2-8, the extra block barrier
// costs more than they save (8192 x 16 on 4 blocks: 2.42 against 2.06;
// 16384 x 16 on 8: 2.33 against 2.24; H200, 2026-11-27).
constexpr int kBlockFirstAbove = 8;

template <int W, int S, bool kCluster>
void launch_leaf(int blocks, float* a, int64_t ld, bool column_major, int rows, int width, int* ipiv,
                 int pivot_base, int* info, int info_base, int* moves, cudaStream_t stream) {
    static_assert(W <= kLeafMaxWidth && W % 4 == 0, "leaf widths are multiples of 4 up to 32");
    const bool vector_rows = !column_major && width == W && ld % 4 == 0 &&
                             reinterpret_cast<uintptr_t>(a) % (4 * sizeof(float)) == 0;
    cudaLaunchAttribute attributes[2];
    cudaLaunchConfig_t config = programmatic_launch(dim3(kLeafThreads), stream, attributes[0]);
    auto pick = [&](auto layout) {
        constexpr bool kColumnMajor = decltype(layout)::value;
        if constexpr (kCluster)
            if (blocks > kBlockFirstAbove) return factor_leaf_kernel<W, S, kLeafThreads, kColumnMajor, true, true>;
        return factor_leaf_kernel<W, S, kLeafThreads, kColumnMajor, kCluster, false>;
    };
    auto kernel = column_major ? pick(std::true_type{}) : pick(std::false_type{});
    if constexpr (kCluster) {
        config.gridDim = dim3(static_cast<unsigned>(blocks));
        attributes[1] = cluster_dimension(blocks);
        config.attrs = attributes;
        config.numAttrs = 2;
    }
    TANDEM_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, a, ld, rows, width, ipiv, pivot_base, info,
                                         info_base, moves, vector_rows));
}

// The most blocks a leaf's cluster may have on the current device, asked once
// a device: 16 where one such cluster fits (the H100 and H200 do), else the
// largest of 8, 4 and 2 that does (a GPU partition may have fewer SMs a GPC),
// else 1 (no clusters: one-block leaves only). The first call on a device
// also lets every clustered leaf kernel take non-portable sizes there; every
// clustered launch comes after a call (factor_leaf asks first).
int max_cluster_blocks() {
    constexpr int kMaxDevices = 64;
    static std::atomic<int> known[kMaxDevices] = {};  // 0: not asked yet
    static std::atomic<unsigned> known_in[kMaxDevices] = {};  // ... generation
    int device = 0;
    TANDEM_CUDA_CHECK(cudaGetDevice(&device));
    const unsigned generation = kernel_settings_generation();
    if (device < kMaxDevices && known[device].load() != 0 && known_in[device].load() == generation)
        return known[device].load();
    allow_large_leaf_clusters();
    auto kernel = factor_leaf_kernel<32, 4, kLeafThreads, true, true, false>;
    int blocks = 1;
    for (int size = kMaxClusterBlocks; size >= 2 && blocks == 1; size /= 2) {
        cudaLaunchAttribute cluster = cluster_dimension(size);
        cudaLaunchConfig_t config = {};
        config.gridDim = dim3(static_cast<unsigned>(size));
        config.blockDim = dim3(kLeafThreads);
        config.attrs = &cluster;
        config.numAttrs = 1;
        int clusters = 0;
        TANDEM_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &config));
        if (clusters > 0) blocks = size;
    }
    if (device < kMaxDevices) {
        known[device].store(blocks);
        known_in[device].store(generation);
    }
    return blocks;
}

std::atomic<int> leaf_cluster_limit{kDefaultLeafClusterLimit};
thread_local int leaf_cluster_cap = kDefaultLeafClusterLimit;  // LeafClusterCap's, this thread's

// The widest leaf of one block for `rows` rows (0: none holds them).
int single_block_leaf_width(int64_t rows) {
    for (int w : {32, 16, 8})
        if (rows <= rows_per_block(w)) return w;
    return 0;
}

}  // namespace

void set_leaf_cluster_limit(int blocks) { leaf_cluster_limit.store(blocks); }


LeafClusterCap::LeafClusterCap(int blocks) : previous_(leaf_cluster_cap) {
    leaf_cluster_cap = std::min(previous_, blocks);
}

LeafClusterCap::~LeafClusterCap() { leaf_cluster_cap = previous_; }

// One block up to 2048 rows: 16 columns of 2048 rows cost 1.72 us a column
// there, 32 columns in a cluster of two blocks 1.92 (the H200, 2026-11-22,
// tandem-device-panel-parts; 1.62-1.68 against 1.69 with the split barrier,
// 2026-11-27, and whole panels from 1536^2 to 4096^2 within 3%, none faster
// with the two-block leaves). Beyond, 32-column
// leaves on clusters of up to the largest size (16 blocks: 16384 rows), then
// the narrower leaves. Up to 16384 rows the 32-column leaf was slower alone
// than the 16-column one on 8 blocks (2.97 against 2.54 us a column; 2.17
// against 2.24 since blocks of a cluster of more than 8 pick their winner
// first) but halves the leaves and recursion nodes of a panel; beside the
// trailing update, where each kernel of the panel waits for SMs, that won:
// the LU at n = 16384 ran 0.105-0.106 s against 0.107-0.109 s, and at 32768
// 0.561-0.572 against 0.567-0.605, in three alternating pairs of one call on
// an H200 (2026-11-22).
int leaf_width_for(int64_t rows) {
    const int limit = std::min(leaf_cluster_limit.load(), leaf_cluster_cap);
    if (rows <= rows_per_block(16) || limit <= 1) return single_block_leaf_width(rows);
    const int64_t most = std::min(max_cluster_blocks(), limit);
    if (most <= 1) return single_block_leaf_width(rows);
    if (rows <= most * rows_per_block(32)) return 32;
    for (int w : {16, 8})
        if (rows <= most * rows_per_block(w)) return w;
    return 0;
}

void factor_leaf(float* a, int64_t ld, bool column_major, int64_t rows, int width, int* ipiv,
                 int pivot_base, int* info, int info_base, int* moves, cudaStream_t stream) {
    const int single = single_block_leaf_width(rows);
    const int64_t most = width <= single ? 1 : max_cluster_blocks();  // asked only when needed
    const bool fits = width <= single ||
                      (width <= kLeafMaxWidth && most > 1 && rows <= most * rows_per_block(width));
    if (width <= 0 || width > rows || !fits)
        throw Error(TANDEM_ERROR_INTERNAL, "factor_leaf: a " + std::to_string(rows) + " x " +
                                               std::to_string(width) + " block is not a leaf");
    const int r = static_cast<int>(rows);
    auto launch = [&](auto leaf, int blocks) {
        leaf(blocks, a, ld, column_major, r, width, ipiv, pivot_base, info, info_base, moves, stream);
    };
    if (width <= single) {
        // As few row slots a thread as hold the rows: every slot costs its
        // column's worth of instructions whether it holds a row or not.
        if (single == 32) {
            if (rows <= 256) launch(launch_leaf<32, 1, false>, 1);
            else if (rows <= 512) launch(launch_leaf<32, 2, false>, 1);
            else launch(launch_leaf<32, 4, false>, 1);
        } else if (single == 16) {
            if (rows <= 6 * 256) launch(launch_leaf<16, 6, false>, 1);
            else launch(launch_leaf<16, 8, false>, 1);
        } else {
            if (rows <= 12 * 256) launch(launch_leaf<8, 12, false>, 1);
            else launch(launch_leaf<8, 16, false>, 1);
        }
        return;
    }
    // A cluster of blocks with full row slots, as narrow a leaf shape as the width allows.
    auto blocks_for = [&](int w) { return static_cast<int>((rows + rows_per_block(w) - 1) / rows_per_block(w)); };
    if (width <= 8) launch(launch_leaf<8, 16, true>, blocks_for(8));
    else if (width <= 16) launch(launch_leaf<16, 8, true>, blocks_for(16));
    else launch(launch_leaf<32, 4, true>, blocks_for(32));
}

void apply_leaf_moves(float* a, int64_t ld, bool column_major, int64_t cols, const int* moves,
                      cudaStream_t stream) {
    if (cols <= 0) return;
    cudaLaunchAttribute overlap;
    cudaLaunchConfig_t config = programmatic_launch(dim3(kMoveWarps * 32), stream, overlap);
    if (column_major) {
        config.gridDim = dim3(static_cast<unsigned>((cols + kMoveWarps - 1) / kMoveWarps));
        TANDEM_CUDA_CHECK(cudaLaunchKernelEx(&config, apply_leaf_moves_column_major_kernel, a, ld,
                                             cols, moves));
    } else {
        config.gridDim = dim3(static_cast<unsigned>((cols + kMoveColumns - 1) / kMoveColumns));
        TANDEM_CUDA_CHECK(cudaLaunchKernelEx(&config, apply_leaf_moves_kernel, a, ld, cols, moves));
    }
}

void catch_up_columns(float* a, int64_t ld, int64_t rows, int64_t cols,
                      const std::vector<PendingLeaf>& leaves, cudaStream_t stream) {
    static_assert(kCatchUpThreads >= kLeafMovesInts / 2, "a thread for each move of a leaf");
    if (cols <= 0 || leaves.empty()) return;
    for (size_t first = 0; first < leaves.size(); first += kCatchUpLeaves) {
        CatchUpLeaves batch = {};
        batch.count = static_cast<int>(std::min<size_t>(kCatchUpLeaves, leaves.size() - first));
        batch.first_row = leaves[first].first_row;
        const int64_t held = rows - batch.first_row;
        if (held <= 0 || held > kCatchUpMaxRows || cols > INT_MAX)
            throw Error(TANDEM_ERROR_INTERNAL, "catch_up_columns: " + std::to_string(held) +
                                                   " rows held of " + std::to_string(cols) +
                                                   " columns");
        for (int l = 0; l < batch.count; ++l) {
            batch.leaf_row[l] = leaves[first + l].first_row;
            batch.moves[l] = leaves[first + l].moves;
        }
        catch_up_columns_kernel<<<static_cast<unsigned>(cols), kCatchUpThreads,
                                  sizeof(float) * static_cast<size_t>(held), stream>>>(
            a, ld, static_cast<int>(rows), batch);
        TANDEM_CUDA_CHECK(cudaGetLastError());
    }
}

}  // namespace tandem::gpu
