// tandem's own CPU panel factorization: recursive LU with partial pivoting of a
// tall, narrow panel, with BLAS 3 (OpenBLAS's threads) for the updates of the
// recursion and a cache-resident OpenMP base case (panel_base_case.hpp) for its
// narrow leaves.
#ifndef TANDEM_CPU_RECURSIVE_PANEL_HPP
#define TANDEM_CPU_RECURSIVE_PANEL_HPP

#include <cstdint>

namespace tandem {

struct PanelOptions {
    // OpenMP threads of the base case; 0 = omp_get_max_threads(). The BLAS 3
    // updates run on the BLAS library's own threads (openblas_set_num_threads).
    int threads = 0;
    // Width of the base case's column blocks (1 .. 1024); 0 = automatic: as wide
    // as keeps one thread's rows of a block within about 512 KiB of cache, from
    // 16 to 128 columns.
    int base_width = 0;
};

// LU with partial pivoting of the rows x width column-major panel (ld >= rows,
// rows >= width >= 1), with the results of LAPACK's sgetrf: the unit lower L
// below the diagonal, U on and above it, `width` 1-based pivots relative to the
// panel's first row in ipiv. Pivots follow LAPACK's rule (largest |value|, the
// first row on ties), so on matrices without ties they equal LAPACK's up to
// rounding differences. Returns LAPACK's info: 0, or the 1-based column of the
// first exactly zero pivot (the factorization goes on past it, as sgetrf does:
// such a column is not scaled and its pivot stays on the diagonal).
// Throws tandem::Error (TANDEM_ERROR_INTERNAL) on invalid arguments.
int factor_panel_recursive(int64_t rows, int width, float* panel, int64_t ld, int* ipiv,
                           const PanelOptions& options = {});

}  // namespace tandem

#endif
