// tandem-bench panel: tandem's recursive CPU panel (cpu/recursive_panel.hpp)
// against LAPACK's sgetrf (LAPACKE_sgetrf_work, the BLAS/LAPACK tandem links) on
// the same tall, narrow panels, in one run.
#ifndef TANDEM_BENCH_PANEL_BENCH_HPP
#define TANDEM_BENCH_PANEL_BENCH_HPP

namespace tandem_bench {

// argv[0] names the mode (it is skipped); the options follow:
//   --shapes RxW,...   panels rows x width (default 4096x128,8192x256,16384x256,
//                      32768x256,32768x512,65536x256)
//   --threads N        threads of both tandem's base case and OpenBLAS (default:
//                      OpenMP's and OpenBLAS's own defaults)
//   --base-width N     tandem's base-case width (default 0 = automatic)
//   --repeats N        timed runs of each code per panel (default 7); the median is
//                      reported
//   --seed S           seed of the random panels (default 1)
// Prints one line per panel as it is measured and a table at the end. Returns 0,
// 1 when a check failed (pivots apart from LAPACK's beyond a near tie, or a large
// residual), 2 on bad options.
int run_panel_bench(int argc, char** argv);

}  // namespace tandem_bench

#endif
