// tandem's own CPU panel factorization: recursive LU with partial pivoting of a
// tall, narrow panel by one OpenMP team whose threads each own a block of rows:
// BLAS 3 on each thread's share for the updates of the recursion, and a
// cache-resident base case (panel_base_case.hpp) for its narrow leaves.
#ifndef TANDEM_CPU_RECURSIVE_PANEL_HPP
#define TANDEM_CPU_RECURSIVE_PANEL_HPP

#include <cstdint>

#include "scheduler/cpu_panel.hpp"

namespace tandem {

struct PanelOptions {
    // Threads of the team that factors the panel (one OpenMP team, calling the
    // BLAS single-threaded); 0 = automatic: OpenMP's maximum, fewer on short
    // panels (at least 512 rows a thread). An explicit count is used as given,
    // down to 32 rows a thread.
    int threads = 0;
    // With threads = 0: the automatic team is at most this large (0 = no cap).
    int max_threads = 0;
    // Width of the column blocks the recursion stops at (1 .. 1024); 0 =
    // automatic (32).
    int base_width = 0;
    // When given, receives how the team spent the panel (a thread's clock and
    // its usage read twice a thread).
    PanelTeamUsage* usage = nullptr;
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

// The size of the team factor_panel_recursive uses for a panel of `rows` rows
// (OpenMP may still start fewer threads).
int panel_threads(int64_t rows, const PanelOptions& options = {});

}  // namespace tandem

#endif
