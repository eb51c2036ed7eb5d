// `tandem-bench first-call`: what the first tandem call of a process costs
// beyond the CUDA context, which any GPU program pays.
#ifndef TANDEM_BENCH_FIRST_CALL_HPP
#define TANDEM_BENCH_FIRST_CALL_HPP

#include <string>
#include <vector>

namespace tandem_bench {

int run_first_call_mode(const std::vector<std::string>& args, const std::string& command_line);

}  // namespace tandem_bench

#endif
