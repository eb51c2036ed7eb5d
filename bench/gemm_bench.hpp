// `tandem-bench gemm`: tandem's SGEMM kernels (every variant of the menu, and
// the dispatcher's choice) against cuBLAS on the LU's shapes, square products
// and tall-skinny products, side by side: TFLOP/s, GB/s for the tall-skinny
// shapes (A once, B, C read and written), and each result's max relative
// difference from cuBLAS's. With --tune it runs the SGEMM autotuner instead,
// prints the table and stores it in the cache directory.
#ifndef TANDEM_BENCH_GEMM_BENCH_HPP
#define TANDEM_BENCH_GEMM_BENCH_HPP

#include <ostream>
#include <string>
#include <vector>

namespace tandem_bench {

// Options:
//   --shapes lu|square|skinny|all   which shapes (default all)
//   --repeats N                     timed runs per variant, median reported (default 5)
//   --variants A,B,...              only these variants (default: all)
//   --csv FILE                      one row per shape and variant
//   --cache-dir DIR                 tuning cache (default ~/.cache/tandem; "" for none)
//   --tune                          run the autotuner, print and store its table
//   --tune-max-size N               with --tune: only buckets with max(m, n) <= N
// Returns the process exit code (0 on success); errors are printed to stderr.
int run_gemm_mode(const std::vector<std::string>& args, const std::string& command_line);

// The same from main()-style arguments; argv[0] (the program or mode name) is skipped.
int run_gemm_bench(int argc, char** argv);

void print_gemm_usage(std::ostream& os);

}  // namespace tandem_bench

#endif  // TANDEM_BENCH_GEMM_BENCH_HPP
