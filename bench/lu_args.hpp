// Command-line options of `tandem-bench lu`, parsed without side effects so that
// a bad argument is reported before anything is allocated or timed.
#ifndef TANDEM_BENCH_LU_ARGS_HPP
#define TANDEM_BENCH_LU_ARGS_HPP

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "bench/option_parsing.hpp"
#include "tandem/tandem.hpp"

namespace tandem_bench {

// sizes, repeats, cpu_max_n, seed and csv_path are the sweep's common options.
struct LuArgs : SweepOptions {
    tandem::Options options;      // backend, block size, look-ahead, devices
    std::string backend_text = "auto";
    std::string plot_path;
    std::string trace_path;
    bool matrix_on_gpu = false;   // time tandem::sgetrf_gpu on a copy in GPU memory
    bool show_plan = false;       // print tandem's plan (widths, sites) of each size
    bool baselines = true;        // time LAPACK, cuSOLVER and cusolverMg beside tandem
    bool help = false;
};

// Fills `out` from the arguments after the mode word. On a bad argument returns
// false and says why in `error`.
bool parse_lu_args(const std::vector<std::string>& args, LuArgs& out, std::string& error);

void print_lu_usage(std::ostream& os);

// Defaults that depend on whether a GPU can be used.
std::vector<int> default_sizes(bool gpu);
int default_cpu_max_n(bool gpu);

}  // namespace tandem_bench

#endif
