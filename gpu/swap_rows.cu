#include "gpu/swap_rows.hpp"

#include <cuda_pipeline.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "gpu/cuda_check.hpp"
#include "gpu/kernel_shared_memory.hpp"

namespace tandem::gpu {
namespace {

// A sequence of row swaps, applied as its net permutation: the moves
// dst[i] <- src[i] of the rows whose content changes (a swap touches at most
// two rows, so kMaxSwaps swaps give at most 2 * kMaxSwaps moves). Passed by
// value as a __grid_constant__ kernel parameter, so a call needs no device
// buffer and the host may reuse ipiv at once. Parameters above 4 KiB need
// CUDA 12.1 and sm_70; we stay far below the 32764-byte limit.
constexpr int kMaxMoves = 1024;
constexpr int kMaxSwaps = kMaxMoves / 2;
struct RowMoves {
    int count;            // moves in use
    int dst[kMaxMoves];   // 0-based rows
    int src[kMaxMoves];
};
static_assert(sizeof(RowMoves) <= 16 * 1024, "RowMoves must stay under 16 KiB of parameters");
#if defined(CUDART_VERSION) && CUDART_VERSION < 12010
#error "swap_rows passes more than 4 KiB of kernel parameters: CUDA 12.1 or newer is needed"
#endif

constexpr int kChunk = 32;                                  // columns per block: 128 bytes a row
constexpr int kSegmentBytes = kChunk * int(sizeof(float));  // shared memory per move
constexpr int kMaxWarps = 16;

// Contract: a is row-major (element (i, j) at a[i * ld + j]), 4-byte aligned,
// any ld >= cols; the dst rows of `moves` are distinct, and its src rows are a
// permutation of them. Over columns 0 .. cols-1, row dst[i] receives the
// content that row src[i] had before the launch, for every i at once (cycles
// included); nothing else is read or written. Each block owns a chunk of 32
// columns (shifted by `misalign` so that the chunks fall on 128-byte segments
// of row 0, hence of every row when ld is a multiple of 32): it copies the src
// segments of its chunk into shared memory (count x 32 floats, dynamic), waits
// for the whole block, then writes them to the dst rows. Blocks own disjoint
// columns, so no hazard crosses blocks. A warp moves one 128-byte row segment
// per instruction (lane = column); the loads are cp.async, all in flight at
// once. The moves are read from the constant bank, uniform across each warp.
__global__ void __launch_bounds__(kMaxWarps * 32)
    permute_rows_kernel(float* __restrict__ a, int64_t ld, int64_t cols, int misalign,
                        const __grid_constant__ RowMoves moves) {
    extern __shared__ float segment[];  // [move][lane]
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    const int64_t chunks = (cols + misalign + kChunk - 1) / kChunk;
    for (int64_t b = blockIdx.x; b < chunks; b += gridDim.x) {
        if (b != blockIdx.x) __syncthreads();  // the previous chunk's stores have read `segment`
        const int64_t j = b * kChunk - misalign + lane;
        const bool active = j >= 0 && j < cols;
        if (active)
            for (int i = warp; i < moves.count; i += warps)
                __pipeline_memcpy_async(&segment[i * kChunk + lane], &a[moves.src[i] * ld + j],
                                        sizeof(float));
        __pipeline_commit();
        __pipeline_wait_prior(0);
        __syncthreads();  // every src segment of the chunk is read before any dst is written
        if (active)
            for (int i = warp; i < moves.count; i += warps)
                a[moves.dst[i] * ld + j] = segment[i * kChunk + lane];
    }
}

// How many moves one launch takes on the current device: the parameter
// capacity, or what the device's opt-in shared memory per block holds. The
// kernel's shared-memory limit is raised to match, once per device.
int move_capacity() {
    int device = 0;
    TANDEM_CUDA_CHECK(cudaGetDevice(&device));
    static std::mutex mutex;
    static std::map<int, int> capacity;  // by device
    static unsigned known_in = 0;        // ... in this generation (kernel_shared_memory.hpp)
    std::lock_guard<std::mutex> lock(mutex);
    if (known_in != kernel_settings_generation()) {
        capacity.clear();
        known_in = kernel_settings_generation();
    }
    const auto found = capacity.find(device);
    if (found != capacity.end()) return found->second;
    int optin = 0;
    TANDEM_CUDA_CHECK(
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    const int moves = std::min(kMaxMoves, optin / kSegmentBytes);
    TANDEM_CUDA_CHECK(cudaFuncSetAttribute(permute_rows_kernel,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           moves * kSegmentBytes));
    capacity.emplace(device, moves);
    return moves;
}

// The net effect of the swaps k = s .. e-1 (in order, rows k and ipiv[k]-1;
// e - s <= kMaxSwaps) as moves, in O(e - s): `slot_of` maps a row to its place
// among the touched rows, and is all -1 again on return.
void net_moves(int64_t s, int64_t e, const int* ipiv, RowMoves& out) {
    thread_local std::vector<int> slot_of;  // grows to the largest row seen
    int64_t last = e - 1;
    for (int64_t k = s; k < e; ++k) last = std::max<int64_t>(last, ipiv[k] - 1);
    if (last >= int64_t(slot_of.size()))
        slot_of.resize(std::max<size_t>(size_t(last) + 1, 2 * slot_of.size()), -1);
    std::array<int, kMaxMoves> row, content;  // touched row; the row whose data it now holds
    int touched = 0;
    auto slot = [&](int64_t r) {
        if (slot_of[r] < 0) {
            slot_of[r] = touched;
            row[touched] = content[touched] = static_cast<int>(r);
            ++touched;
        }
        return slot_of[r];
    };
    for (int64_t k = s; k < e; ++k) {
        const int x = slot(k), y = slot(ipiv[k] - 1);
        std::swap(content[x], content[y]);
    }
    out.count = 0;
    for (int t = 0; t < touched; ++t) {
        slot_of[row[t]] = -1;
        if (content[t] == row[t]) continue;
        out.dst[out.count] = row[t];
        out.src[out.count] = content[t];
        ++out.count;
    }
}

}  // namespace

void swap_rows(float* a, int64_t ld, int64_t cols, int64_t k1, int64_t k2, const int* ipiv,
               cudaStream_t stream) {
    if (cols <= 0 || k2 <= k1) return;
    // Swap sequences too long for one launch go in consecutive pieces, each
    // applied as its own permutation; the stream keeps them in order.
    const int64_t swaps_per_launch = std::max(1, std::min(kMaxSwaps, move_capacity() / 2));
    const int misalign = static_cast<int>((reinterpret_cast<uintptr_t>(a) / sizeof(float)) % kChunk);
    const int64_t chunks = (cols + misalign + kChunk - 1) / kChunk;
    const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(chunks, INT_MAX));
    RowMoves moves;
    for (int64_t s = k1; s < k2; s += swaps_per_launch) {
        net_moves(s, std::min(k2, s + swaps_per_launch), ipiv, moves);
        if (moves.count == 0) continue;  // the swaps cancel out
        const int threads = 32 * std::min(kMaxWarps, moves.count);
        permute_rows_kernel<<<blocks, threads, size_t(moves.count) * kSegmentBytes, stream>>>(
            a, ld, cols, misalign, moves);
        TANDEM_CHECK_LAUNCH("permute_rows_kernel");
    }
}

}  // namespace tandem::gpu
