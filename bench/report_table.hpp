// The end-of-sweep table on the terminal and the same results as CSV.
#ifndef TANDEM_BENCH_REPORT_TABLE_HPP
#define TANDEM_BENCH_REPORT_TABLE_HPP

#include <ostream>
#include <string>
#include <vector>

#include "bench/results.hpp"

namespace tandem_bench {

// The cuSOLVER columns appear only when cuSOLVER could run; otherwise
// `cusolver_note` says why below the table. matrix_on_gpu: tandem was timed
// through sgetrf_gpu (tandem-bench lu --matrix gpu).
void print_table(std::ostream& os, const std::vector<SizeResult>& results, bool show_cusolver,
                 const std::string& cusolver_note, bool matrix_on_gpu);

// One row per size, every measured number; empty fields where nothing was measured.
bool write_csv(const std::string& path, const std::vector<SizeResult>& results, std::string& error);

}  // namespace tandem_bench

#endif
