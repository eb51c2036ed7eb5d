// The end-of-sweep table on the terminal and the same results as CSV.
#ifndef TANDEM_BENCH_REPORT_TABLE_HPP
#define TANDEM_BENCH_REPORT_TABLE_HPP

#include <ostream>
#include <string>
#include <vector>

#include "bench/results.hpp"
#include "tandem/tandem.hpp"

namespace tandem_bench {

// The cuSOLVER columns appear only when cuSOLVER could run; otherwise
// `cusolver_note` says why below the table. matrix_on_gpu: tandem was timed
// through sgetrf_gpu (tandem-bench lu --matrix gpu). update_precision: the
// arithmetic tandem's GPU updates were asked for, named below the table.
void print_table(std::ostream& os, const std::vector<SizeResult>& results, bool show_cusolver,
                 const std::string& cusolver_note, bool matrix_on_gpu,
                 tandem::UpdatePrecision update_precision);

// One row per size, every measured number; empty fields where nothing was
// measured. update_precision fills the column tandem_update_precision.
bool write_csv(const std::string& path, const std::vector<SizeResult>& results,
               tandem::UpdatePrecision update_precision, std::string& error);

}  // namespace tandem_bench

#endif
