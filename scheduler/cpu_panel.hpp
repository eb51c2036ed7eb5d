// What the scheduler needs of the CPU for a panel: factoring it and inverting
// its L11. The scheduler owns this interface; cpu/ implements it (panel.cpp).
#ifndef TANDEM_SCHEDULER_CPU_PANEL_HPP
#define TANDEM_SCHEDULER_CPU_PANEL_HPP

#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "tandem/tandem.hpp"

namespace tandem {

// How the team of tandem's recursive panel spent one panel: the evidence of
// why a panel inside a factorization runs slower than alone. A thread that
// loses its core has less CPU time than the panel's wall time and counts
// involuntary context switches; a team that keeps its cores and still runs
// slow shares the memory or waits at its flags for a slow thread.
struct PanelTeamUsage {
    int threads = 0;                        // the team that ran (0: LAPACK's panel)
    double seconds = 0.0;                   // the factorization's wall time
    double least_thread_cpu_seconds = 0.0;  // the least CPU time of one of its threads
    long involuntary_switches = 0;          // summed over the team (0 where not counted)
};

// LU with partial pivoting of the rows x width column-major panel (LAPACK
// sgetrf). ipiv receives min(rows, width) 1-based pivots relative to the
// panel's first row. Returns LAPACK's info for the panel (0 or the first zero
// pivot's 1-based column within the panel).
// `method` picks LAPACK's sgetrf or tandem's recursive panel (automatic = recursive);
// both give LAPACK's pivots on matrices without ties.
// `threads`: at most this many in the team of tandem's recursive panel (0 =
// OpenMP's maximum; fewer on short panels either way). `usage`, when given,
// receives the team's usage (the recursive panel's; zeros for LAPACK's).
int factor_panel(int64_t rows, int width, float* panel, int64_t ld, int* ipiv,
                 PanelMethod method = PanelMethod::lapack, int threads = 0,
                 PanelTeamUsage* usage = nullptr);

// inv = inv(L11), where L11 is the unit lower triangle of the width x width
// top of `panel` (column-major, ld). inv is width x width column-major (ldi),
// zero above the diagonal. Returns ||inv(L11)||_1. Runs on an OpenMP team
// with OpenBLAS held single-threaded (scheduler/blas_threads.hpp).
// `threads`: at most this many (0 = OpenMP's maximum).
float invert_unit_lower(int width, const float* panel, int64_t ld, float* inv, int64_t ldi,
                        int threads = 0);

// The team a CPU panel gets inside a factorization, beside the devices' work,
// and in the calibration that times it for the plan: half of OpenMP's
// threads. With all of them, the panels of n = 16384 (--placement cpu, the
// matrix moved before the steps) took 9-14 ms each early on against about
// 1.6 ms with half (H100 machine, 16 hardware threads; the whole LU 0.49
// against 0.32 s, 12 threads in between): a team with a barrier a column
// waits for its slowest thread, and with every hardware thread in the team
// one that loses its core stalls the rest.
inline int cpu_panel_team_size() { return std::max(1, omp_get_max_threads() / 2); }

}  // namespace tandem

#endif
