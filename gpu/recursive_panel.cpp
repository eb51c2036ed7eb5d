#include "gpu/recursive_panel.hpp"

#include <string>

#include "gpu/panel_leaf.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {
namespace {

// Columns [c, c + n) of the panel, rows [c, rows): the node of the recursion
// whose diagonal block starts at (c, c).
void factor_node(const DevicePanel& p, const BlasQueue& queue, const SubtractProduct& subtract,
                 int c, int n) {
    const int64_t rows = p.rows - c;
    // Element (i, j) of the panel.
    auto at = [&p](int64_t i, int64_t j) { return p.column_major ? p.a + i + j * p.ld : p.a + i * p.ld + j; };
    float* const corner = at(c, c);
    const int leaf = leaf_width_for(rows);
    if (n <= leaf) {
        factor_leaf(corner, p.ld, p.column_major, rows, n, p.ipiv + c, c, p.info, c, p.moves,
                    queue.stream);
        // The leaf's interchanges apply to whole rows of the panel: the columns
        // already factored (as LAPACK does) and those not reached yet.
        apply_leaf_moves(at(c, 0), p.ld, p.column_major, p.width, p.moves, queue.stream);
        return;
    }
    // Split at a multiple of the leaf width, near the middle: the left half
    // then divides into whole leaves.
    const int half = (n + 1) / 2;
    const int left = leaf > 0 ? (half + leaf - 1) / leaf * leaf : half;
    const int right = n - left;
    factor_node(p, queue, subtract, c, left);
    // U12 = inv(L11) A12, then A22 -= L21 U12.
    float* const a12 = at(c, c + left);
    trsm_unit_lower_left(queue, left, right, corner, p.ld, a12, p.ld, p.column_major);
    subtract(rows - left, right, left, at(c + left, c), a12, at(c + left, c + left));
    factor_node(p, queue, subtract, c + left, right);
}

}  // namespace

bool recursive_panel_fits(int64_t rows) { return leaf_width_for(rows) > 0; }

void factor_panel_recursive(const DevicePanel& panel, const BlasQueue& queue,
                            const SubtractProduct& subtract_product) {
    if (panel.width <= 0 || panel.rows <= 0) return;
    if (panel.width > panel.rows || !recursive_panel_fits(panel.rows))
        throw Error(TANDEM_ERROR_INTERNAL, "factor_panel_recursive: a " +
                                               std::to_string(panel.rows) + " x " +
                                               std::to_string(panel.width) +
                                               " panel does not fit the leaves");
    factor_node(panel, queue, subtract_product, 0, panel.width);
}

}  // namespace tandem::gpu
