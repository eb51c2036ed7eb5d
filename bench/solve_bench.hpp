// `tandem-bench solve`: the sweep over n and nrhs of the solve A X = B: tandem's
// sgesv (host arrays) and sgesv_gpu (arrays in GPU memory) beside cuSOLVER's
// getrf + getrs and its iterative-refinement solvers and LAPACK's sgesv, each
// with its time and the scaled backward error of its solution.
#ifndef TANDEM_BENCH_SOLVE_BENCH_HPP
#define TANDEM_BENCH_SOLVE_BENCH_HPP

#include <string>
#include <vector>

namespace tandem_bench {

// Runs the mode with the arguments after the mode word; returns the exit status
// (0 all ran, 1 a run failed or a backward error other than an IRS solver's
// exceeded 30, 2 bad arguments or a CSV file that cannot be written).
int run_solve_mode(const std::vector<std::string>& args, const std::string& command_line);

}  // namespace tandem_bench

#endif
