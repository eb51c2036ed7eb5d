// The leaves of the GPU's recursive panel factorization: a narrow
// block (up to 32 columns) factored with partial pivoting by ONE thread block,
// or one thread block cluster, that holds the whole block in registers, so
// that each column costs one barrier instead of the kernel launches or grid-wide
// synchronizations of a panel spread over the GPU. Rows are not moved while
// the columns are factored: each row carries its logical position, and the
// leaf reports the net row permutation as a short list of moves, which
// apply_leaf_moves() then applies to the columns that need it at once, and
// catch_up_columns() to others later, many leaves' lists in one pass.
#ifndef TANDEM_GPU_PANEL_LEAF_HPP
#define TANDEM_GPU_PANEL_LEAF_HPP

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

namespace tandem::gpu {

// Ints of the moves list: a count, then (destination, source) pairs; a leaf
// of w columns moves at most 2w rows.
constexpr int kLeafMaxWidth = 32;
constexpr int kLeafMovesInts = 1 + 2 * 2 * kLeafMaxWidth;

// The leaf width the recursive panel uses for a block of `rows` rows (0: too
// tall for any leaf). One thread block holds 32 columns of up to 1024 rows,
// 16 of 2048 or 8 of 4096; taller leaves are held by a thread block cluster
// of up to 16 blocks (where the device can schedule that many: Hopper) of
// 32 columns (up to 16384 rows), then of 16 or 8 columns (up to 32768 and
// 65536 rows). Where the device schedules smaller clusters, or none, or under
// a smaller limit (set_leaf_cluster_limit), the leaves reach less far (one
// block: 4096 rows).
int leaf_width_for(int64_t rows);

// The most blocks leaf_width_for may give a leaf's cluster (default 16; 1:
// one-block leaves only); for probes and tests that compare them.
void set_leaf_cluster_limit(int blocks);
constexpr int kDefaultLeafClusterLimit = 16;

// While one lives, leaf_width_for on the calling thread gives leaves of at
// most `blocks` blocks (or the limit above, if lower; a cap never widens
// another), so that a panel factored beside a product that holds most SMs
// until it ends finds room for its leaves: a cluster's blocks must start
// together on the SMs of one GPC (CudaDevice::factor_panel_beside_update).
// Panels taller than such leaves reach then go to cuSOLVER's getrf.
class LeafClusterCap {
public:
    explicit LeafClusterCap(int blocks);
    ~LeafClusterCap();
    LeafClusterCap(const LeafClusterCap&) = delete;
    LeafClusterCap& operator=(const LeafClusterCap&) = delete;

private:
    int previous_;
};

// LU with partial pivoting (LAPACK's rule: the largest magnitude, the first
// row on ties; zero pivots continue) of the rows x width block at `a` (device,
// leading dimension ld, row-major or column-major), width <= rows, with
// width <= 32 and a cluster that holds the rows, or a width one block holds
// (one block is used then). In place, with the rows left where they were (NOT
// interchanged); then:
//   ipiv[j] = pivot_base + 1 + (the 0-based pivot row of column j), j < width;
//   *info = info_base + j + 1 for the first exactly zero pivot j, if *info was 0;
//   moves = the net permutation: row dst must receive row src's content.
// All device pointers; issued on `stream`.
void factor_leaf(float* a, int64_t ld, bool column_major, int64_t rows, int width, int* ipiv,
                 int pivot_base, int* info, int info_base, int* moves, cudaStream_t stream);

// Applies a leaf's moves to columns [0, cols) of the block at `a` (row indices
// of the moves count from a's first row). Issued on `stream`.
void apply_leaf_moves(float* a, int64_t ld, bool column_major, int64_t cols, const int* moves,
                      cudaStream_t stream);

// A leaf of a panel whose moves a column has not received yet: its first row
// (which is its first column) and where its moves list lies.
struct PendingLeaf {
    int first_row;
    const int* moves;
};

// The tallest column catch_up_columns holds (in 48 KB of shared memory, what
// a kernel may take without asking for more).
constexpr int64_t kCatchUpMaxRows = 12288;
static_assert(kCatchUpMaxRows * 4 <= 48 * 1024, "a caught-up column fits the default shared memory");

// Applies the leaves' moves, in order, to columns [0, cols) of the
// column-major panel at `a` (rows x cols, leading dimension ld; rows counted
// from the panel's first row, rows - leaves[0].first_row <= kCatchUpMaxRows,
// first rows increasing). Each column is read once into shared memory, moved
// there and written back: one pass where applying each leaf's moves alone
// would touch each column once a leaf, 4 bytes out of every 32-byte sector.
// Issued on `stream`.
void catch_up_columns(float* a, int64_t ld, int64_t rows, int64_t cols,
                      const std::vector<PendingLeaf>& leaves, cudaStream_t stream);

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_PANEL_LEAF_HPP
