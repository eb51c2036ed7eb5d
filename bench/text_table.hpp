// Text output shared by the modes' reports: numbers formatted for a table or a
// CSV field, a right-aligned table, and the time a report was made.
#ifndef TANDEM_BENCH_TEXT_TABLE_HPP
#define TANDEM_BENCH_TEXT_TABLE_HPP

#include <ostream>
#include <string>
#include <vector>

namespace tandem_bench {

// printf of one number; "nan" or "inf" for the values printf would spell
// differently from platform to platform.
std::string format_number(const char* pattern, double value);

// A CSV field: the number, or empty when nothing was measured (NaN).
std::string csv_number(double value, const char* pattern = "%.6g");

// A CSV field holding text, quoted (quotes inside doubled).
std::string csv_text(const std::string& text);

// The header, a rule, and the rows, each column right-aligned to its widest cell.
void print_aligned_table(std::ostream& os, const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows);

// "YYYY-MM-DD hh:mm:ss" in local time, for a report's first line.
std::string local_time_text();

}  // namespace tandem_bench

#endif
