#include "bench/text_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace tandem_bench {

std::string format_number(const char* pattern, double value) {
    if (!std::isfinite(value)) return std::isnan(value) ? "nan" : "inf";
    char text[64];
    std::snprintf(text, sizeof text, pattern, value);
    return text;
}

std::string csv_number(double value, const char* pattern) {
    return std::isnan(value) ? "" : format_number(pattern, value);
}

std::string csv_text(const std::string& text) {
    std::string quoted = "\"";
    for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
}

namespace {

void print_row(std::ostream& os, const std::vector<std::string>& cells,
               const std::vector<std::size_t>& widths) {
    for (std::size_t c = 0; c < cells.size(); ++c) {
        os << (c ? "  " : "") << std::string(widths[c] - cells[c].size(), ' ') << cells[c];
    }
    os << "\n";
}

}  // namespace

void print_aligned_table(std::ostream& os, const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows) {
    std::vector<std::size_t> widths(header.size());
    for (std::size_t c = 0; c < header.size(); ++c) {
        widths[c] = header[c].size();
        for (const auto& row : rows) widths[c] = std::max(widths[c], row[c].size());
    }
    print_row(os, header, widths);
    std::size_t total = 0;
    for (const std::size_t w : widths) total += w + 2;
    os << std::string(total - 2, '-') << "\n";
    for (const auto& row : rows) print_row(os, row, widths);
}

std::string local_time_text() {
    const std::time_t now = std::time(nullptr);
    char text[64];
    std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", std::localtime(&now));
    return text;
}

}  // namespace tandem_bench
