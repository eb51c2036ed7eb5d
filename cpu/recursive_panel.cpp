#include "cpu/recursive_panel.hpp"

#include <cblas.h>
#include <lapacke.h>
#include <omp.h>

#include <algorithm>
#include <climits>
#include <string>

#include "cpu/panel_base_case.hpp"
#include "tandem/tandem.hpp"

// Recursive LU of columns [first, first + count) of the panel, rows first .. rows-1
// (Toledo; Gustavson), with n1 + n2 = count:
//
//   [ A11 A12 ]      1. factor [A11; A21] (n1 columns), recursively
//   [ A21 A22 ]      2. apply its row interchanges to [A12; A22]
//                    3. A12 = inv(L11) * A12                      (TRSM)
//                    4. A22 -= A21 * A12                          (GEMM)
//                    5. factor A22 (n2 columns), recursively
//                    6. apply its row interchanges to [A11; A21] below A12
//
// Steps 2-4 and 6 run on the BLAS library's threads, outside any OpenMP region
// (BLAS called from inside one would oversubscribe the cores); the leaves, at
// most base_width columns, are the OpenMP base case. The GEMMs carry most of the
// flops; the base case keeps the narrow, bandwidth-bound columns in cache.

namespace tandem {
namespace {

struct Panel {
    int64_t rows;
    float* a;
    int64_t ld;
    int* ipiv;
    int threads;
    int base_width;
    BaseCaseWorkspace* workspace;

    float* at(int64_t row, int col) const { return a + row + col * ld; }
};

// Past kMinRowsPerThread rows each, threads no longer pay for their barriers.
int base_case_threads(const Panel& p, int64_t rows) {
    return static_cast<int>(std::clamp<int64_t>(rows / kMinRowsPerThread, 1, p.threads));
}

// Largest power of two in 16 .. 128 whose block of one thread's rows fits
// kBaseCaseCacheBytes (half a typical L2), or `width` if it is narrower.
int automatic_base_width(int64_t rows, int width, int threads) {
    constexpr int64_t kBaseCaseCacheBytes = 512 * 1024;
    const int64_t rows_per_thread = (rows + threads - 1) / threads;
    int base = 128;
    while (base > 16 && rows_per_thread * base * static_cast<int64_t>(sizeof(float)) >
                            kBaseCaseCacheBytes)
        base /= 2;
    return std::min(base, width);
}

// Rows k of columns [first_col, first_col + cols) swapped with rows ipiv[k] - 1,
// for k = first_pivot .. first_pivot + count - 1 in order (pivots are 1-based
// panel rows, as LAPACK's slaswp takes them).
void apply_swaps(const Panel& p, int first_col, int cols, int first_pivot, int count) {
    if (cols == 0 || count == 0) return;
    const lapack_int info = LAPACKE_slaswp_work(LAPACK_COL_MAJOR, cols, p.at(0, first_col),
                                                static_cast<lapack_int>(p.ld), first_pivot + 1,
                                                first_pivot + count, p.ipiv, 1);
    if (info != 0)
        throw Error(TANDEM_ERROR_INTERNAL,
                    "LAPACKE_slaswp_work (panel) failed with info " + std::to_string(info));
}

// A12 = inv(L11) * A12, L11 the unit lower n1 x n1 block at (first, first).
void solve_top_right(const Panel& p, int first, int n1, int n2) {
    cblas_strsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, n1, n2, 1.0f,
                p.at(first, first), static_cast<int>(p.ld), p.at(first, first + n1),
                static_cast<int>(p.ld));
}

// A22 -= A21 * A12 below the n1 x n2 block A12 at (first, first + n1).
void update_bottom_right(const Panel& p, int first, int n1, int n2) {
    const int64_t below = p.rows - first - n1;
    if (below == 0) return;
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(below), n2, n1,
                -1.0f, p.at(first + n1, first), static_cast<int>(p.ld), p.at(first, first + n1),
                static_cast<int>(p.ld), 1.0f, p.at(first + n1, first + n1),
                static_cast<int>(p.ld));
}

int factor_leaf(const Panel& p, int first, int count) {
    const int64_t rows = p.rows - first;
    const int info = factor_base_case(rows, count, p.at(first, first), p.ld, p.ipiv + first,
                                      base_case_threads(p, rows), *p.workspace);
    for (int k = first; k < first + count; ++k) p.ipiv[k] += first;  // block rows -> panel rows
    return info;
}

// The split keeps n1 a multiple of 8 where possible, so that every leaf starts on
// a group boundary of the base case and the GEMMs see aligned k.
int left_width(int count) {
    const int half = count / 2;
    return half >= 16 ? half / 8 * 8 : half;
}

int factor_columns(const Panel& p, int first, int count) {
    if (count <= p.base_width) return factor_leaf(p, first, count);
    const int n1 = left_width(count);
    const int n2 = count - n1;
    const int left_info = factor_columns(p, first, n1);
    apply_swaps(p, first + n1, n2, first, n1);
    solve_top_right(p, first, n1, n2);
    update_bottom_right(p, first, n1, n2);
    const int right_info = factor_columns(p, first + n1, n2);
    apply_swaps(p, first, n1, first + n1, n2);
    if (left_info != 0) return left_info;
    return right_info != 0 ? right_info + n1 : 0;
}

}  // namespace

int factor_panel_recursive(int64_t rows, int width, float* panel, int64_t ld, int* ipiv,
                           const PanelOptions& options) {
    if (width < 1 || rows < width || rows > INT_MAX || ld < rows || ld > INT_MAX ||
        panel == nullptr || ipiv == nullptr || options.threads < 0 || options.base_width < 0)
        throw Error(TANDEM_ERROR_INTERNAL,
                    "factor_panel_recursive: bad panel " + std::to_string(rows) + " x " +
                        std::to_string(width) + " (ld " + std::to_string(ld) + ", threads " +
                        std::to_string(options.threads) + ", base width " +
                        std::to_string(options.base_width) + ")");
    const int threads = options.threads > 0 ? options.threads : std::max(1, omp_get_max_threads());
    const int base_width = options.base_width > 0
                               ? std::min(options.base_width, width)
                               : automatic_base_width(rows, width, threads);
    // The recursion halves until a part is at most base_width wide, so leaves are
    // never wider than base_width.
    BaseCaseWorkspace workspace(threads, base_width);
    const Panel p{rows, panel, ld, ipiv, threads, base_width, &workspace};
    return factor_columns(p, 0, width);
}

}  // namespace tandem
