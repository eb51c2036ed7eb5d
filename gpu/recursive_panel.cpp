#include "gpu/recursive_panel.hpp"

#include <string>
#include <vector>

#include "gpu/panel_leaf.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {
namespace {

void factor_node(const DevicePanel& p, const BlasQueue& queue, const SubtractProduct& subtract,
                 const RowsFinal& rows_final, int c, int n);

// Element (i, j) of the panel.
float* element(const DevicePanel& p, int64_t i, int64_t j) {
    return p.column_major ? p.a + i + j * p.ld : p.a + i * p.ld + j;
}

// Columns [c, c + left) of the node at (c, c) hold their factors, and their
// interchanges have reached the columns right of them: U12 = inv(L11) A12,
// A22 -= L21 U12, then the right part [c + left, c + left + right).
void finish_node(const DevicePanel& p, const BlasQueue& queue, const SubtractProduct& subtract,
                 const RowsFinal& rows_final, int c, int left, int right) {
    const int64_t rows = p.rows - c;
    float* const corner = element(p, c, c);
    float* const a12 = element(p, c, c + left);
    trsm_unit_lower_left(queue, left, right, corner, p.ld, a12, p.ld, p.column_major);
    // A node on the panel's right edge: nothing right of it is left for an
    // ancestor's solve, and later interchanges move only rows below c + left.
    if (rows_final && c + left + right == p.width) rows_final(c + left);
    subtract(rows - left, right, left, element(p, c + left, c), a12, element(p, c + left, c + left));
    factor_node(p, queue, subtract, rows_final, c + left, right);
}

// Columns [c, c + n) of the panel, rows [c, rows): the node of the recursion
// whose diagonal block starts at (c, c).
void factor_node(const DevicePanel& p, const BlasQueue& queue, const SubtractProduct& subtract,
                 const RowsFinal& rows_final, int c, int n) {
    const int64_t rows = p.rows - c;
    const int leaf = leaf_width_for(rows);
    if (n <= leaf) {
        factor_leaf(element(p, c, c), p.ld, p.column_major, rows, n, p.ipiv + c, c, p.info, c,
                    p.moves, queue.stream);
        // The leaf's interchanges apply to whole rows of the panel: the columns
        // already factored (as LAPACK does) and those not reached yet.
        apply_leaf_moves(element(p, c, 0), p.ld, p.column_major, p.width, p.moves, queue.stream);
        return;
    }
    // Split at a multiple of the leaf width, near the middle: the left half
    // then divides into whole leaves.
    const int half = (n + 1) / 2;
    const int left = leaf > 0 ? (half + leaf - 1) / leaf * leaf : half;
    factor_node(p, queue, subtract, rows_final, c, left);
    finish_node(p, queue, subtract, rows_final, c, left, n - left);
}

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

void factor_panel_recursive(const DevicePanel& panel, const BlasQueue& queue,
                            const SubtractProduct& subtract_product, const RowsFinal& rows_final) {
    if (panel.width <= 0 || panel.rows <= 0) return;
    check_fits(panel, "factor_panel_recursive");
    factor_node(panel, queue, subtract_product, rows_final, 0, panel.width);
}

void finish_panel_recursive(const DevicePanel& panel, int factored, const BlasQueue& queue,
                            const SubtractProduct& subtract_product, const RowsFinal& rows_final) {
    if (panel.width <= 0 || panel.rows <= 0) return;
    check_fits(panel, "finish_panel_recursive");
    if (factored <= 0 || factored >= panel.width)
        throw Error(TANDEM_ERROR_INTERNAL, "finish_panel_recursive: " + std::to_string(factored) +
                                               " factored columns of " +
                                               std::to_string(panel.width));
    finish_node(panel, queue, subtract_product, rows_final, 0, factored, panel.width - factored);
}

}  // namespace tandem::gpu
