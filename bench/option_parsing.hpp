// Command-line pieces shared by the modes of tandem-bench that take
// `--name value` / `--name=value` options (lu, plan, solve). Each parser checks
// the whole text and says what it expected, so that a bad argument is reported
// before anything is allocated or timed.
#ifndef TANDEM_BENCH_OPTION_PARSING_HPP
#define TANDEM_BENCH_OPTION_PARSING_HPP

#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "tandem/tandem.hpp"

namespace tandem_bench {

// The seed of the random matrices when none is given: the same in every mode,
// so that `lu` and `solve` at one size factor the same matrix.
constexpr std::uint64_t default_seed = 20261121;

// The options every sweep mode (lu, solve) takes in the same way.
struct SweepOptions {
    std::vector<int> sizes;  // empty: the mode's default list for the machine
    int repeats = 3;
    int cpu_max_n = -1;      // -1: the machine's default
    std::uint64_t seed = default_seed;
    std::string csv_path;
};

// The names of SweepOptions' options (each takes a value), and `mode_options` after them.
std::vector<std::string> with_sweep_options(const std::vector<std::string>& mode_options);
bool is_sweep_option(const std::string& name);

// Parses the value of one of SweepOptions' options into `out`; false with
// `error` set when the value is bad.
bool parse_sweep_option(const std::string& name, const std::string& value, SweepOptions& out,
                        std::string& error);

// Reads the option at args[i]: its name, and for an option named in `valued`
// its value, given after '=' (--sizes=1024) or as the next argument (then i
// moves past it). Options named in `flags` take no value. Returns false with
// `error` set for an unknown option or a missing value.
bool next_option(const std::vector<std::string>& args, std::size_t& i,
                 const std::vector<std::string>& flags, const std::vector<std::string>& valued,
                 std::string& name, std::string& value, std::string& error);

// Whole-string integer in [low, high]; rejects "12abc", "", and overflow.
bool parse_int(const std::string& text, long long low, long long high, long long& value);

// Whether the file an output option names (`option`, for the message) can be
// written, checked before a sweep so that a bad path fails at once rather
// than after minutes of measurements. Leaves no file behind that was not there.
bool output_writable(const std::string& option, const std::string& path, std::string& error);

// Opens the CSV file of `--csv` (nothing when `path` is empty) before the
// runs, so that its lines are written as the runs complete; `write_header`
// writes its first line.
bool open_csv(const std::string& path, std::ofstream& csv, void (*write_header)(std::ostream&),
              std::string& error);
// Closes a CSV file open_csv opened and says where it went, or that writing
// it failed (`mode` names the mode in the message). False on a failed write.
bool close_csv(std::ofstream& csv, const std::string& path, const char* mode);

// `option`'s value as an integer in [low, high] stored into `out`; otherwise
// error = "<option>: '<value>' is not <expected>".
template <class Int>
bool parse_int_option(const std::string& option, const std::string& value, long long low,
                      long long high, const std::string& expected, Int& out, std::string& error) {
    long long number = 0;
    if (!parse_int(value, low, high, number)) {
        error = option + ": '" + value + "' is not " + expected;
        return false;
    }
    out = static_cast<Int>(number);
    return true;
}

// A comma-separated list of integers in [low, high] ("1024,2048"); otherwise
// error = "<option>: '<item>' is not <expected> (expected e.g. <example>)".
bool parse_int_list(const std::string& option, const std::string& text, long long low,
                    long long high, const std::string& expected, const std::string& example,
                    std::vector<int>& values, std::string& error);

// An option that names one of a few choices ("--gemm", "cublas"): the choice
// stored into `out`; otherwise error = "<option>: '<value>' is not one of <names>".
template <class Choice>
bool parse_choice(const std::string& option, const std::string& value,
                  std::initializer_list<std::pair<const char*, Choice>> choices, Choice& out,
                  std::string& error) {
    std::string names;
    for (const auto& [word, choice] : choices) {
        if (value == word) {
            out = choice;
            return true;
        }
        names += (names.empty() ? "" : ", ") + std::string(word);
    }
    error = option + ": '" + value + "' is not one of " + names;
    return false;
}

// The word the options, tables and CSVs use for an update precision: the library's.
using tandem::update_precision_name;

// What an update precision computes, for the tables' notes, e.g. " (SGEMM).".
const char* update_precision_note(tandem::UpdatePrecision precision);

// --update-precision: fp32, tf32x3, tf32 or bf16 (Options::update_precision).
bool parse_update_precision(const std::string& option, const std::string& value,
                            tandem::UpdatePrecision& out, std::string& error);

// --sizes: matrix orders in 1..65536 (65536^2 floats is 16 GiB per copy:
// beyond that a sweep cannot be meant).
bool parse_sizes(const std::string& text, std::vector<int>& sizes, std::string& error);

}  // namespace tandem_bench

#endif
