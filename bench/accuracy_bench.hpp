// `tandem-bench accuracy`: how Options::update_precision changes the accuracy
// and the time of tandem's sgesv on a GPU, per matrix kind (matrix_kinds.hpp),
// order and seed: the factorization's scaled residual and the solve's scaled
// backward error of each precision, their ratios, and the speed-up.
#ifndef TANDEM_BENCH_ACCURACY_BENCH_HPP
#define TANDEM_BENCH_ACCURACY_BENCH_HPP

#include <string>
#include <vector>

namespace tandem_bench {

// Runs the mode with the arguments after the mode word; returns the exit status
// (0 every run completed, or no usable GPU for backend gpu; 1 a call failed,
// info != 0 included; 2 bad arguments or a CSV file that cannot be written).
int run_accuracy_mode(const std::vector<std::string>& args, const std::string& command_line);

}  // namespace tandem_bench

#endif
