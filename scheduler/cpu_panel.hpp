// What the scheduler needs of the CPU for a panel: factoring it and inverting
// its L11. The scheduler owns this interface; cpu/ implements it (panel.cpp).
#ifndef TANDEM_SCHEDULER_CPU_PANEL_HPP
#define TANDEM_SCHEDULER_CPU_PANEL_HPP

#include <cstdint>

#include "tandem/tandem.hpp"

namespace tandem {

// LU with partial pivoting of the rows x width column-major panel (LAPACK
// sgetrf). ipiv receives min(rows, width) 1-based pivots relative to the
// panel's first row. Returns LAPACK's info for the panel (0 or the first zero
// pivot's 1-based column within the panel).
// `method` picks LAPACK's sgetrf or tandem's recursive panel (automatic = recursive);
// both give LAPACK's pivots on matrices without ties.
int factor_panel(int64_t rows, int width, float* panel, int64_t ld, int* ipiv,
                 PanelMethod method = PanelMethod::lapack);

// inv = inv(L11), where L11 is the unit lower triangle of the width x width
// top of `panel` (column-major, ld). inv is width x width column-major (ldi),
// zero above the diagonal. Returns ||inv(L11)||_1. Runs on an OpenMP team
// with OpenBLAS held single-threaded (scheduler/blas_threads.hpp).
float invert_unit_lower(int width, const float* panel, int64_t ld, float* inv, int64_t ldi);

}  // namespace tandem

#endif
