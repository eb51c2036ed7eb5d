#include "gpu/recursive_panel.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "gpu/panel_leaf.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {
namespace {

// Nodes of the recursion up to this many columns apply each leaf's
// interchanges to all their columns at once; wider ones leave them to
// catch_up_columns for the columns away from the leaf.
constexpr int kEagerNodeColumns = 256;
static_assert(kLeafMaxWidth <= kEagerNodeColumns, "every leaf lies in a node that applies its moves");

// Whether a panel's leaves leave their interchanges for later (see
// PanelRecursion): only where one pass per column fits in shared memory, and
// from the size where the passes paid: at 2048 x 2048 (2^22 floats) they made
// the whole panel 2% slower, at 4096 x 4096 2% faster, at 8192 x 8192 12%
// (H100, docs/PERFORMANCE.md).
bool defers_interchanges(int64_t rows, int width) {
    constexpr int64_t kLeastFloats = int64_t(1) << 22;  // 16 MB: a 2048 x 2048 panel
    return rows <= kCatchUpMaxRows && width > kEagerNodeColumns && rows * width > kLeastFloats;
}

// Element (i, j) of the panel.
float* element(const DevicePanel& p, int64_t i, int64_t j) {
    return p.column_major ? p.a + i + j * p.ld : p.a + i * p.ld + j;
}

// The recursive LU of one panel. Each leaf's row interchanges must reach
// every column of the panel, and before a column is next read: applied to
// every column at every leaf, a leaf of an 8192 x 8192 panel moves some 64
// rows of 8192 columns, 4 bytes a 32-byte sector in column-major storage,
// and those moves took 3.8 ms of the 35 ms panel (H100, docs/ALGORITHM.md). So
// in a tall enough, column-major panel a leaf applies its interchanges only
// to the columns of its node of at most kEagerNodeColumns columns, and the
// other columns catch up when they are next needed: the right part of a
// node before its U12 is solved (the left part's leaves), the left part at
// the node's end (the right part's leaves), every column before rows are
// reported final. Invariant: on entering a node at column c, all its columns
// hold every interchange of the leaves left of c.
class PanelRecursion {
public:
    PanelRecursion(const DevicePanel& p, const BlasQueue& queue, const SubtractProduct& subtract,
                   const RowsFinal& rows_final, int caught_up_through)
        : p_(p),
          queue_(queue),
          subtract_(subtract),
          rows_final_(rows_final),
          deferred_(p.column_major && p.move_lists >= p.width && defers_interchanges(p.rows, p.width)),
          through_(deferred_ ? static_cast<size_t>(p.width) : 0, caught_up_through) {}

    // Columns [c, c + n), rows [c, rows): the node whose diagonal block starts
    // at (c, c). Its leaves apply their interchanges to columns [s0, s1) at
    // once: the outermost node of at most kEagerNodeColumns columns around
    // them (s1 = 0 above it), or every column where nothing is deferred.
    void factor_node(int c, int n, int s0, int s1) {
        if (!deferred_) s0 = 0, s1 = p_.width;
        else if (s1 == 0 && n <= kEagerNodeColumns) s0 = c, s1 = c + n;
        const int64_t rows = p_.rows - c;
        const int leaf = leaf_width_for(rows);
        if (n <= leaf) {
            int* const moves = p_.moves + (deferred_ ? leaves_.size() * kLeafMovesInts : 0);
            factor_leaf(element(p_, c, c), p_.ld, p_.column_major, rows, n, p_.ipiv + c, c, p_.info,
                        c, moves, queue_.stream);
            // Its own columns among them: the leaf leaves its rows where they were.
            apply_leaf_moves(element(p_, c, s0), p_.ld, p_.column_major, s1 - s0, moves,
                             queue_.stream);
            if (deferred_) {
                leaves_.push_back({c, moves});
                std::fill(through_.begin() + s0, through_.begin() + s1, c + n);
            }
            return;
        }
        // Split at a multiple of the leaf width, near the middle: the left half
        // then divides into whole leaves.
        const int half = (n + 1) / 2;
        const int left = leaf > 0 ? (half + leaf - 1) / leaf * leaf : half;
        factor_node(c, left, s0, s1);
        finish_node(c, left, n - left, s0, s1);
    }

    // Columns [c, c + left) of the node at (c, c) hold their factors: U12 =
    // inv(L11) A12, A22 -= L21 U12, then the right part [c + left, c + left +
    // right), and the right part's interchanges back to the left part.
    void finish_node(int c, int left, int right, int s0, int s1) {
        const int64_t rows = p_.rows - c;
        catch_up(c + left, c + left + right, c + left);
        float* const corner = element(p_, c, c);
        float* const a12 = element(p_, c, c + left);
        trsm_unit_lower_left(queue_, left, right, corner, p_.ld, a12, p_.ld, p_.column_major);
        // A node on the panel's right edge: nothing right of it is left for an
        // ancestor's solve, and later interchanges move only rows below c + left.
        if (rows_final_ && c + left + right == p_.width) {
            catch_up(0, c + left, c + left);
            rows_final_(c + left);
        }
        subtract_(rows - left, right, left, element(p_, c + left, c), a12,
                  element(p_, c + left, c + left));
        factor_node(c + left, right, s0, s1);
        catch_up(c, c + left, c + left + right);
    }

private:
    // Columns [j0, j1) take the interchanges of the leaves left of column r
    // that they have not taken yet, a run of columns that lack the same ones
    // in one pass.
    void catch_up(int j0, int j1, int r) {
        if (!deferred_) return;
        for (int j = j0; j < j1;) {
            const int through = through_[j];
            int end = j;
            while (end < j1 && through_[end] == through) ++end;
            if (through < r) {
                auto from_leaf = [](const PendingLeaf& leaf, int row) { return leaf.first_row < row; };
                const auto first = std::lower_bound(leaves_.begin(), leaves_.end(), through, from_leaf);
                const auto last = std::lower_bound(first, leaves_.end(), r, from_leaf);
                if (first == last || first->first_row != through)
                    throw Error(TANDEM_ERROR_INTERNAL, "the recursive panel: columns " +
                                                           std::to_string(j) + ".." +
                                                           std::to_string(end) +
                                                           " lack leaves it did not record");
                catch_up_columns(element(p_, 0, j), p_.ld, p_.rows, end - j,
                                 std::vector<PendingLeaf>(first, last), queue_.stream);
                std::fill(through_.begin() + j, through_.begin() + end, r);
            }
            j = end;
        }
    }

    const DevicePanel& p_;
    const BlasQueue& queue_;
    const SubtractProduct& subtract_;
    const RowsFinal& rows_final_;
    const bool deferred_;  // leaves' interchanges left for catch_up (else all applied at once)
    std::vector<int> through_;  // per column: it holds the leaves' interchanges left of this column
    std::vector<PendingLeaf> leaves_;  // the leaves so far, left to right
};

void check_fits(const DevicePanel& panel, const char* who) {
    if (panel.width > panel.rows || !recursive_panel_fits(panel.rows))
        throw Error(TANDEM_ERROR_INTERNAL, std::string(who) + ": a " + std::to_string(panel.rows) +
                                               " x " + std::to_string(panel.width) +
                                               " panel does not fit the leaves");
}

}  // namespace

bool recursive_panel_fits(int64_t rows) { return leaf_width_for(rows) > 0; }

std::vector<int64_t> overlapped_parts(int64_t m, int64_t n) {
    std::vector<int64_t> bounds;
    if (m * n < kOverlappedCopyLeastFloats) return bounds;
    for (int64_t columns = n / 3; columns >= 128; columns /= 3) {
        const int64_t bound = (columns + 127) / 128 * 128;
        if (bound < n && (bounds.empty() || bound < bounds.front()))
            bounds.insert(bounds.begin(), bound);
    }
    return bounds;
}

int panel_move_lists(int64_t rows, int width) {
    return defers_interchanges(rows, width) ? width : 1;
}

int64_t panel_scratch_ints(int64_t rows, int width) {
    return 1 + int64_t(panel_move_lists(rows, width)) * kLeafMovesInts;
}

void factor_panel_recursive(const DevicePanel& panel, const BlasQueue& queue,
                            const SubtractProduct& subtract_product, const RowsFinal& rows_final) {
    if (panel.width <= 0 || panel.rows <= 0) return;
    check_fits(panel, "factor_panel_recursive");
    PanelRecursion(panel, queue, subtract_product, rows_final, 0).factor_node(0, panel.width, 0, 0);
}

void finish_panel_recursive(const DevicePanel& panel, int factored, const BlasQueue& queue,
                            const SubtractProduct& subtract_product, const RowsFinal& rows_final) {
    if (panel.width <= 0 || panel.rows <= 0) return;
    check_fits(panel, "finish_panel_recursive");
    if (factored <= 0 || factored >= panel.width)
        throw Error(TANDEM_ERROR_INTERNAL, "finish_panel_recursive: " + std::to_string(factored) +
                                               " factored columns of " +
                                               std::to_string(panel.width));
    // Every column holds the interchanges of the factored ones (the contract).
    PanelRecursion(panel, queue, subtract_product, rows_final, factored)
        .finish_node(0, factored, panel.width - factored, 0, 0);
}

}  // namespace tandem::gpu
