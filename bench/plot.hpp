// GFLOP/s against n as a PNG, drawn by whichever plotting tool this machine has.
#ifndef TANDEM_BENCH_PLOT_HPP
#define TANDEM_BENCH_PLOT_HPP

#include <string>
#include <vector>

#include "bench/results.hpp"

namespace tandem_bench {

enum class PlotOutcome { written, skipped, failed };

// Writes the data next to the PNG (<name>.dat) and the script that draws it
// (<name>.gp for gnuplot, else <name>.py for python3 + matplotlib, checked at run
// time), then runs the script. `message` says what was written or why not;
// `skipped` means no plotting tool was found, which is not an error.
PlotOutcome write_plot(const std::string& png_path, const std::vector<SizeResult>& results,
                       const std::string& title, std::string& message);

}  // namespace tandem_bench

#endif
