// The GPU's own panel factorization, on row-major or column-major storage
// (tandem's row-major copy, a panel of it transposed, or the caller's
// column-major matrix of sgetrf_gpu): recursive LU (split the columns, factor
// the left half, solve for its block row and update the right half with BLAS
// 3, factor the right half), with leaves held by one thread block or one
// thread block cluster each (panel_leaf). cuSOLVER's getrf spends a few
// kernels and microseconds on every column; here a column costs one barrier,
// and the rest is TRSM and GEMM.
#ifndef TANDEM_GPU_RECURSIVE_PANEL_HPP
#define TANDEM_GPU_RECURSIVE_PANEL_HPP

#include <cstdint>
#include <functional>
#include <vector>

#include "gpu/gemm.hpp"

namespace tandem::gpu {

// Whether a panel of `rows` rows fits the leaves (its first leaf has them all).
bool recursive_panel_fits(int64_t rows);

// The panel: rows x width at `a` (device, leading dimension ld), width <= rows.
// Device scratch: ipiv (width ints), info (one int, which the caller zeroes),
// moves (move_lists lists of kLeafMovesInts ints: one serves, and one a leaf
// lets the columns far from a leaf take its interchanges later, several
// leaves' at once; panel_scratch_ints gives room for both).
struct DevicePanel {
    float* a;
    int64_t ld;
    bool column_major;
    int64_t rows;
    int width;
    int* ipiv;
    int* info;
    int* moves;
    int move_lists = 1;
};

// The ints of device scratch after ipiv that a panel of rows x width needs:
// the info, then the moves lists (a list a column where its leaves may keep
// their own, which column-major panels of these sizes do).
int64_t panel_scratch_ints(int64_t rows, int width);
// How many moves lists those ints hold (DevicePanel::move_lists).
int panel_move_lists(int64_t rows, int width);

// c -= a * b (m x k times k x n), all three in the panel's layout and with its
// leading dimension (CudaDevice: cuBLAS, or tandem's kernels when forced).
using SubtractProduct = std::function<void(int64_t m, int64_t n, int64_t k, const float* a,
                                           const float* b, float* c)>;

// Called at issue time with r when rows [0, r) of the panel hold their final
// values in every column once the work issued so far has run.
using RowsFinal = std::function<void(int64_t r)>;

// LU with partial pivoting of the panel in place, LAPACK's getrf semantics:
// ipiv[j] the 1-based pivot row of column j, *info the 1-based first zero
// pivot (0 if none; zero pivots continue). Issued on queue.stream, TRSMs on
// queue.handle, products through subtract_product on the same stream.
// rows_final, if set, reports the rows as they become final.
void factor_panel_recursive(const DevicePanel& panel, const BlasQueue& queue,
                            const SubtractProduct& subtract_product,
                            const RowsFinal& rows_final = nullptr);

// The same factorization when its first `factored` columns are already
// factored as a panel of their own (ipiv[0 .. factored) and *info set as
// factor_panel_recursive sets them) and their interchanges already applied to
// the columns right of them: the rest of it, U12, A22 and the right part's
// recursion, whose interchanges apply to every column. Lets the right part's
// columns arrive while the left part is factored.
void finish_panel_recursive(const DevicePanel& panel, int factored, const BlasQueue& queue,
                            const SubtractProduct& subtract_product,
                            const RowsFinal& rows_final = nullptr);

// From this many floats of A on (with n <= m), a host matrix factored by the
// recursive panel in one call goes up in parts beside its factorization
// (CudaDevice::factor_host_column_major).
constexpr int64_t kOverlappedCopyLeastFloats = int64_t(1) << 20;

// Where the columns of such a matrix split so that each part is factored
// while the next arrives: n / 3, n / 9, ... down to 128 columns, in whole
// 128s (a multiple of every leaf width), increasing; empty below
// kOverlappedCopyLeastFloats. Only the first part's upload is not hidden. A
// part's upload must be done when the factorization reaches it: on an H100 a
// column of 8192 rows goes up in about 0.9 us and is factored in about 2.5-3,
// so at 8192 the last part may be at most some 2.8 times as wide as all
// before it. Split at n / 4, n / 16, ... the LU at 8192 took 36.7 ms against
// 36.0 (4096: 11.8 either way; three processes each, alternating,
// tandem-bench lu --nb 8192, docs/PERFORMANCE.md).
std::vector<int64_t> overlapped_parts(int64_t m, int64_t n);

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_RECURSIVE_PANEL_HPP
