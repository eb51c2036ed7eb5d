// `tandem-bench lu`: the sweep over n of tandem's sgetrf against the baselines.
#ifndef TANDEM_BENCH_LU_SWEEP_HPP
#define TANDEM_BENCH_LU_SWEEP_HPP

#include <string>
#include <vector>

namespace tandem_bench {

// Runs the mode with the arguments after the mode word; returns the exit status
// (0 fine, 1 a run failed or a residual exceeded 30, 2 bad arguments).
int run_lu_mode(const std::vector<std::string>& args, const std::string& command_line);

}  // namespace tandem_bench

#endif
