// Probe: a device panel factorization held in the shared memory of one
// thread-block cluster, against cuSOLVER's getrf. As a library panel it was
// 1.3-1.8x slower than cuSOLVER in the LU's calibration. The library's leaves
// held by clusters (gpu/panel_leaf.cu) differ: up to 32
// columns held in registers, and each block pushes its candidates into every
// block's shared memory instead of pulling them with remote loads.
//
// The design. cuSOLVER's getrf spends 2-3.5 us per column of a panel. Here one
// cluster of 8 or 16 CTAs keeps a block of up to 64 columns in shared memory,
// each CTA a contiguous slab of rows, for all of the block's columns: per column
// one cluster barrier, the pivot chosen through distributed shared memory
// (LAPACK's choice: largest magnitude, first row on ties), and no global memory
// traffic. Rows are not moved while the block is factored; each row's logical
// position is tracked instead (LAPACK's sequence of interchanges), and at the
// end every row is written where LAPACK's swaps would have put it, across the
// whole panel width. The library drove factor_cluster_block right-looking:
// block, TRSM of the block row, GEMM of the rest of the panel.
//
// This probe times factor_cluster_block on rows x 64 against cusolverDnSgetrf on
// a rows x 64 column-major panel, and shows where a column's time goes: clock
// cycles of CTA 0's thread 0 in each phase, summed over the columns, per column:
//   0 pass (scale and update with the last pivot, local candidates)
//   1 warp reduction and block barrier     2 CTA candidate published
//   3 cluster barrier                      4 candidates gathered (DSMEM) and reduced
//   5 pivot row read (DSMEM), positions updated, block barrier
//
// Build:
//   nvcc -O3 -std=c++17 -arch=sm_90 tools/probes/cluster_panel.cu -o build/cluster_panel -lcusolver
// Run:
//   build/cluster_panel 1024 4096 12288
#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "probe_check.cuh"
#include "probe_data.cuh"

namespace cg = cooperative_groups;

namespace tandem::gpu {
inline constexpr int kClusterBlockColumns = 64;
inline constexpr int kClusterPanelMaxWidth = 1024;
int64_t cluster_panel_max_rows();
void factor_cluster_block(float* a, int64_t ld, int64_t rows, int col0, int cols, int panel_width, int* pivots, int* info, cudaStream_t stream);
namespace {

constexpr int kThreads = 512;
constexpr int kWarps = kThreads / 32;
constexpr int W = kClusterBlockColumns;
constexpr int kStride = W + 1;    // slab row stride: a column read across rows hits distinct banks
constexpr int kMaxMoved = 2 * W;  // each column moves at most two rows
constexpr int kLargeCluster = 16, kSmallCluster = 8;
constexpr int64_t kSmallClusterRows = 4096;  // up to here 8 CTAs (cheaper barriers), beyond 16

// A CTA's best row for the current column, as the other CTAs read it.
struct Candidate {
    float value;   // |a(row, j)|, -1 when the CTA has no active row
    int logical;   // the row's logical position (its row index in LAPACK's order at this point)
    int local;     // its index in the owner's slab
    int holds_j;   // index in this slab of the row now at logical position j, or -1
    float row[W];  // its values
};

struct Best {
    float value;
    int logical;
    int where;  // slab index, or rank << 16 | slab index once gathered across the cluster
};

// LAPACK's isamax: the larger magnitude wins, ties go to the first row.
__device__ __forceinline__ Best better(Best x, Best y) {
    return (y.value > x.value || (y.value == x.value && y.logical < x.logical)) ? y : x;
}

__device__ __forceinline__ Best warp_best(Best b) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        const Best other{__shfl_xor_sync(0xffffffffu, b.value, offset),
                         __shfl_xor_sync(0xffffffffu, b.logical, offset),
                         __shfl_xor_sync(0xffffffffu, b.where, offset)};
        b = better(b, other);
    }
    return b;  // every lane holds the result
}

// Where a column's time goes: clock cycles of CTA 0's thread 0, per phase.
__device__ long long cluster_panel_phase_cycles[8];
#define TANDEM_PHASE(k)                                              \
    if (rank == 0 && tid == 0) {                                     \
        const long long now = clock64();                             \
        cluster_panel_phase_cycles[k] += now - phase_start;          \
        phase_start = now;                                           \
    }

struct MovedRow {
    int physical, logical;  // rows of the block
};

// Static shared memory; the dynamic part is the slab (slab_rows x kStride
// floats, later the staging of moved rows) followed by the slab rows' logical
// positions.
struct Shared {
    Candidate candidates[2];  // by column parity: the other CTAs read one while this one fills the other
    float pivot_row[W];
    Best warps_best[kWarps];
    MovedRow moved[kMaxMoved], all_moved[kMaxMoved];
    int moved_count, all_moved_count;
};

__global__ void __launch_bounds__(kThreads)
    factor_cluster_block_kernel(float* a, int64_t ld, int rows, int col0, int cols, int panel_width, int slab_rows,
                                int staging_floats, int* pivots, int* info) {
    extern __shared__ float dynamic[];
    __shared__ Shared sh;
    cg::cluster_group cluster = cg::this_cluster();
    const int ctas = int(cluster.num_blocks()), rank = int(cluster.block_rank());
    const int tid = int(threadIdx.x), lane = tid % 32;
    const int first = rank * slab_rows;
    const int my_rows = max(0, min(rows - first, slab_rows));
    float* const slab = dynamic;
    int* const logical = reinterpret_cast<int*>(dynamic + staging_floats);
    const int pivots_count = min(rows, cols);

    for (int e = tid; e < my_rows * W; e += kThreads) {
        const int i = e / W, c = e % W;
        slab[i * kStride + c] = c < cols ? a[int64_t(first + i) * ld + col0 + c] : 0.0f;
    }
    for (int i = tid; i < my_rows; i += kThreads) logical[i] = first + i;
    if (tid == 0) sh.candidates[0].holds_j = -1, sh.moved_count = 0;
    __syncthreads();

    // Pass j scales and updates the active rows with pivot j - 1 (j > 0), then
    // (j < pivots_count) finds each thread's candidate for pivot j.
    float pivot = 1.0f;
    long long phase_start = clock64();
    for (int j = 0;; ++j) {
        const bool scale = pivot != 0.0f, reciprocal = fabsf(pivot) >= FLT_MIN;
        const float inverse = 1.0f / pivot;
        Best mine{-1.0f, INT_MAX, -1};
        for (int i = tid; i < my_rows; i += kThreads) {
            const int position = logical[i];
            float* const row = slab + i * kStride;
            if (j > 0 && position > j - 1) {
                float l = row[j - 1];
                if (scale) l = reciprocal ? l * inverse : l / pivot;  // as LAPACK's sgetf2
                row[j - 1] = l;
                for (int c = j; c < cols; ++c) row[c] = fmaf(-l, sh.pivot_row[c], row[c]);
            }
            if (j < pivots_count) {
                if (position >= j) mine = better(mine, Best{fabsf(row[j]), position, i});
                if (position == j) sh.candidates[j & 1].holds_j = i;
            }
        }
        TANDEM_PHASE(0)
        if (j == pivots_count) break;
        mine = warp_best(mine);
        if (lane == 0) sh.warps_best[tid / 32] = mine;
        __syncthreads();
        TANDEM_PHASE(1)
        Candidate& mine_published = sh.candidates[j & 1];
        const Best cta = warp_best(lane < kWarps ? sh.warps_best[lane] : Best{-1.0f, INT_MAX, -1});
        if (tid == 0) mine_published.value = cta.value, mine_published.logical = cta.logical, mine_published.local = cta.where;
        if (tid < W && cta.where >= 0) mine_published.row[tid] = slab[cta.where * kStride + tid];
        TANDEM_PHASE(2)
        cluster.sync();  // every CTA's candidate is published
        TANDEM_PHASE(3)

        // Every warp reads the CTAs' candidates and agrees on the pivot.
        Best gathered{-1.0f, INT_MAX, -1};
        int holds = -1;
        if (lane < ctas) {
            const Candidate* remote = cluster.map_shared_rank(&mine_published, lane);
            gathered = Best{remote->value, remote->logical, lane << 16 | (remote->local & 0xffff)};
            holds = remote->holds_j;
        }
        const Best winner = warp_best(gathered);
        const unsigned holders = __ballot_sync(0xffffffffu, holds >= 0);
        const int holder_rank = __ffs(int(holders)) - 1;  // exactly one row is at position j
        const int holder_local = __shfl_sync(0xffffffffu, holds, max(holder_rank, 0));
        const int winner_rank = winner.where >> 16, winner_local = winner.where & 0xffff;
        TANDEM_PHASE(4)
        if (tid < W)
            sh.pivot_row[tid] = cluster.map_shared_rank(&sh.candidates[j & 1], winner_rank)->row[tid];
        if (tid == 0) {
            // LAPACK swaps rows j and q: the pivot row takes position j, the row there takes q.
            const int q = winner.logical;
            if (rank == holder_rank && !(holder_rank == winner_rank && holder_local == winner_local))
                logical[holder_local] = q;
            if (rank == winner_rank) logical[winner_local] = j;
            if (rank == 0) pivots[col0 + j] = col0 + q + 1;
            sh.candidates[(j + 1) & 1].holds_j = -1;  // its readers passed the barrier above
        }
        __syncthreads();
        TANDEM_PHASE(5)
        pivot = sh.pivot_row[j];
        if (pivot == 0.0f && rank == 0 && tid == 0 && *info == 0) *info = col0 + j + 1;
    }
    __syncthreads();

    // The factored columns, each row at its final position.
    for (int e = tid; e < my_rows * cols; e += kThreads) {
        const int i = e / cols, c = e % cols;
        a[int64_t(logical[i]) * ld + col0 + c] = slab[i * kStride + c];
    }
    // The rows that moved, listed for the whole cluster.
    for (int i = tid; i < my_rows; i += kThreads)
        if (logical[i] != first + i) sh.moved[atomicAdd(&sh.moved_count, 1)] = MovedRow{first + i, logical[i]};
    if (tid == 0) sh.all_moved_count = 0;
    cluster.sync();  // lists complete; the slab is no longer needed
    for (int r = 0; r < ctas; ++r) {
        const Shared* remote = cluster.map_shared_rank(&sh, r);
        const int count = remote->moved_count;
        const int base = sh.all_moved_count;  // read by all before anyone adds (barrier below)
        for (int m = tid; m < count; m += kThreads) sh.all_moved[base + m] = remote->moved[m];
        __syncthreads();
        if (tid == 0) sh.all_moved_count = base + count;
        __syncthreads();
    }
    // The panel's other columns of the moved rows: this CTA's share of them,
    // read whole into shared memory before any is written.
    const int others = panel_width - cols, moved_rows = sh.all_moved_count;
    const int share = (others + ctas - 1) / ctas;
    const int begin = rank * share, end = min(others, begin + share), width = max(0, end - begin);
    float* const staging = dynamic;
    auto column = [&](int o) { return o < col0 ? o : o + cols; };
    for (int e = tid; e < moved_rows * width; e += kThreads) {
        const int m = e / width, o = begin + e % width;
        staging[e] = a[int64_t(sh.all_moved[m].physical) * ld + column(o)];
    }
    __syncthreads();
    for (int e = tid; e < moved_rows * width; e += kThreads) {
        const int m = e / width, o = begin + e % width;
        a[int64_t(sh.all_moved[m].logical) * ld + column(o)] = staging[e];
    }
    cluster.sync();  // no CTA exits while another may still read its shared memory
}

// Dynamic shared memory of a launch: the slab or the staging, whichever is
// larger, and the logical positions.
size_t dynamic_bytes(int slab_rows, int staging_floats) {
    return sizeof(float) * size_t(staging_floats) + sizeof(int) * size_t(slab_rows);
}

int staging_floats_for(int slab_rows, int ctas) {
    const int share = (kClusterPanelMaxWidth + ctas - 1) / ctas;
    return std::max(slab_rows * kStride, kMaxMoved * share);
}

// The largest dynamic shared memory a CTA may have, and whether a cluster of
// `ctas` CTAs with that much can run on the current device (asked once per
// device and size).
struct ClusterLimits {
    size_t max_dynamic_bytes = 0;
    bool small_ok = false, large_ok = false;
};

const ClusterLimits& cluster_limits() {
    static std::mutex mutex;
    static std::vector<std::pair<int, ClusterLimits>> known;
    int device = 0;
    CHECK(cudaGetDevice(&device));
    std::lock_guard<std::mutex> lock(mutex);
    for (const auto& [d, limits] : known)
        if (d == device) return limits;
    ClusterLimits limits;
    cudaDeviceProp properties{};
    CHECK(cudaGetDeviceProperties(&properties, device));
    cudaFuncAttributes attributes{};
    CHECK(cudaFuncGetAttributes(&attributes, factor_cluster_block_kernel));
    if (properties.major >= 9) {
        limits.max_dynamic_bytes = properties.sharedMemPerBlockOptin - attributes.sharedSizeBytes;
        CHECK(cudaFuncSetAttribute(factor_cluster_block_kernel,
                                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               int(limits.max_dynamic_bytes)));
        CHECK(cudaFuncSetAttribute(factor_cluster_block_kernel,
                                               cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
        for (int ctas : {kSmallCluster, kLargeCluster}) {
            cudaLaunchConfig_t config{};
            cudaLaunchAttribute attribute{};
            attribute.id = cudaLaunchAttributeClusterDimension;
            attribute.val.clusterDim.x = unsigned(ctas), attribute.val.clusterDim.y = 1,
            attribute.val.clusterDim.z = 1;
            config.gridDim = dim3(unsigned(ctas));
            config.blockDim = dim3(kThreads);
            config.dynamicSmemBytes = limits.max_dynamic_bytes;
            config.attrs = &attribute;
            config.numAttrs = 1;
            int active = 0;
            const bool ok = cudaOccupancyMaxActiveClusters(&active, factor_cluster_block_kernel, &config) ==
                                cudaSuccess &&
                            active > 0;
            if (!ok) (void)cudaGetLastError();  // a refused size is an answer, not an error
            (ctas == kSmallCluster ? limits.small_ok : limits.large_ok) = ok;
        }
    }
    known.emplace_back(device, limits);
    return known.back().second;
}

// The most slab rows `ctas` CTAs can hold each.
int64_t max_slab_rows(const ClusterLimits& limits, int ctas) {
    const int share = (kClusterPanelMaxWidth + ctas - 1) / ctas;
    if (limits.max_dynamic_bytes < sizeof(float) * size_t(kMaxMoved * share)) return 0;
    return int64_t(limits.max_dynamic_bytes / (sizeof(float) * kStride + sizeof(int)));
}

int cluster_size_for(const ClusterLimits& limits, int64_t rows) {
    const bool small_fits = limits.small_ok && rows <= kSmallCluster * max_slab_rows(limits, kSmallCluster);
    if (small_fits && rows <= kSmallClusterRows) return kSmallCluster;
    if (limits.large_ok && rows <= kLargeCluster * max_slab_rows(limits, kLargeCluster)) return kLargeCluster;
    return small_fits ? kSmallCluster : 0;
}

}  // namespace

int64_t cluster_panel_max_rows() {
    const ClusterLimits& limits = cluster_limits();
    int64_t rows = 0;
    if (limits.small_ok) rows = kSmallCluster * max_slab_rows(limits, kSmallCluster);
    if (limits.large_ok) rows = std::max(rows, kLargeCluster * max_slab_rows(limits, kLargeCluster));
    return std::min<int64_t>(rows, 0xffff);  // slab indices travel in 16 bits
}

void factor_cluster_block(float* a, int64_t ld, int64_t rows, int col0, int cols, int panel_width, int* pivots,
                          int* info, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;
    const ClusterLimits& limits = cluster_limits();
    const int ctas = cluster_size_for(limits, rows);
    if (ctas == 0 || rows > cluster_panel_max_rows() || cols > W || col0 < 0 || col0 + cols > panel_width ||
        panel_width > kClusterPanelMaxWidth)
        throw std::runtime_error("factor_cluster_block: a " + std::to_string(rows) + " x " +
                                               std::to_string(cols) + " block of a " +
                                               std::to_string(panel_width) + "-wide panel does not fit");
    const int slab_rows = int((rows + ctas - 1) / ctas);
    const int staging_floats = staging_floats_for(slab_rows, ctas);
    cudaLaunchConfig_t config{};
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = unsigned(ctas), attribute.val.clusterDim.y = 1, attribute.val.clusterDim.z = 1;
    config.gridDim = dim3(unsigned(ctas));
    config.blockDim = dim3(kThreads);
    config.dynamicSmemBytes = dynamic_bytes(slab_rows, staging_floats);
    config.stream = stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
    CHECK(cudaLaunchKernelEx(&config, factor_cluster_block_kernel, a, ld, int(rows), col0, cols,
                                         panel_width, slab_rows, staging_floats, pivots, info));
}

}  // namespace tandem::gpu

int main(int argc, char** argv) {
    using namespace tandem::gpu;
    cusolverDnHandle_t solver;
    CHECK_STATUS(cusolverDnCreate(&solver));
    int clock_khz = 0;
    CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
    std::printf("cluster_panel_max_rows %lld, SM clock %d MHz\n", (long long)cluster_panel_max_rows(), clock_khz / 1000);
    constexpr int W = kClusterBlockColumns;
    for (int i = 1; i < argc; ++i) {
        const int rows = std::atoi(argv[i]);
        float *pristine, *panel, *work;
        int *pivots, work_floats = 0;
        const size_t n = size_t(rows) * W;
        CHECK(cudaMalloc(&pristine, n * 4));
        CHECK(cudaMalloc(&panel, n * 4));
        CHECK(cudaMalloc(&pivots, sizeof(int) * (W + 1)));
        fill_random(pristine, n, 5);
        CHECK_STATUS(cusolverDnSgetrf_bufferSize(solver, rows, W, panel, rows, &work_floats));
        CHECK(cudaMalloc(&work, sizeof(float) * std::max(work_floats, 1)));
        cudaEvent_t start, stop;
        CHECK(cudaEventCreate(&start));
        CHECK(cudaEventCreate(&stop));
        std::vector<double> cluster_ms, solver_ms;
        long long cycles[8] = {};
        for (int r = 0; r < 8; ++r) {
            for (int method = 0; method < 2; ++method) {
                CHECK(cudaMemcpy(panel, pristine, n * 4, cudaMemcpyDeviceToDevice));
                CHECK(cudaMemset(pivots + W, 0, sizeof(int)));
                if (method == 0 && r == 7) CHECK(cudaMemcpyToSymbol(cluster_panel_phase_cycles, cycles, sizeof cycles));
                CHECK(cudaEventRecord(start));
                if (method == 0)
                    factor_cluster_block(panel, W, rows, 0, W, W, pivots, pivots + W, 0);
                else  // the same data read as column-major W x rows... timed on the transposed shape
                    CHECK_STATUS(cusolverDnSgetrf(solver, rows, W, panel, rows, work, pivots, pivots + W));
                CHECK(cudaEventRecord(stop));
                CHECK(cudaEventSynchronize(stop));
                float ms = 0;
                CHECK(cudaEventElapsedTime(&ms, start, stop));
                if (r > 0) (method == 0 ? cluster_ms : solver_ms).push_back(ms);
            }
        }
        CHECK(cudaMemcpyFromSymbol(cycles, cluster_panel_phase_cycles, sizeof cycles));
        const double cluster = median(cluster_ms), cusolver = median(solver_ms);
        std::printf("%d x %d: cluster block %.1f us (%.2f us a column), cuSOLVER getrf %.1f us (%.2f us a column)\n",
                    rows, W, 1e3 * cluster, 1e3 * cluster / W, 1e3 * cusolver, 1e3 * cusolver / W);
        std::printf("  ns a column by phase (last run):");
        for (int k = 0; k < 6; ++k) std::printf(" %d: %.0f", k, cycles[k] / double(W) / (clock_khz * 1e-6));
        std::printf("\n");
        CHECK(cudaFree(pristine));
        CHECK(cudaFree(panel));
        CHECK(cudaFree(pivots));
        CHECK(cudaFree(work));
    }
    return 0;
}
