#include "bench/option_parsing.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>

namespace tandem_bench {
namespace {

const std::vector<std::string> sweep_option_names = {"--sizes", "--repeats", "--cpu-max-n", "--seed",
                                                     "--csv"};

}  // namespace

std::vector<std::string> with_sweep_options(const std::vector<std::string>& mode_options) {
    std::vector<std::string> names = sweep_option_names;
    names.insert(names.end(), mode_options.begin(), mode_options.end());
    return names;
}

bool is_sweep_option(const std::string& name) {
    return std::find(sweep_option_names.begin(), sweep_option_names.end(), name) !=
           sweep_option_names.end();
}

bool parse_sweep_option(const std::string& name, const std::string& value, SweepOptions& out,
                        std::string& error) {
    if (name == "--sizes") return parse_sizes(value, out.sizes, error);
    if (name == "--repeats") {
        return parse_int_option(name, value, 1, 1000, "a count in 1..1000", out.repeats, error);
    }
    if (name == "--cpu-max-n") {
        return parse_int_option(name, value, 0, std::numeric_limits<int>::max(), "a size >= 0",
                                out.cpu_max_n, error);
    }
    if (name == "--seed") {
        return parse_int_option(name, value, 0, std::numeric_limits<long long>::max(),
                                "a non-negative integer", out.seed, error);
    }
    if (value.empty()) {
        error = name + " needs a file name";
        return false;
    }
    out.csv_path = value;  // --csv
    return true;
}

bool next_option(const std::vector<std::string>& args, std::size_t& i,
                 const std::vector<std::string>& flags, const std::vector<std::string>& valued,
                 std::string& name, std::string& value, std::string& error) {
    name = args[i];
    value.clear();
    bool has_value = false;
    const std::size_t equals = name.find('=');
    if (name.rfind("--", 0) == 0 && equals != std::string::npos) {
        value = name.substr(equals + 1);
        name = name.substr(0, equals);
        has_value = true;
    }
    const auto named_in = [&](const std::vector<std::string>& list) {
        return std::find(list.begin(), list.end(), name) != list.end();
    };
    if (named_in(flags)) return true;
    if (!named_in(valued)) {
        error = "unknown argument '" + args[i] + "'";
        return false;
    }
    if (!has_value) {
        if (i + 1 >= args.size()) {
            error = name + " needs a value";
            return false;
        }
        value = args[++i];
    }
    return true;
}

bool parse_int(const std::string& text, long long low, long long high, long long& value) {
    if (text.empty()) return false;
    errno = 0;
    char* end = nullptr;
    const long long parsed = std::strtoll(text.c_str(), &end, 10);
    if (errno != 0 || end != text.c_str() + text.size()) return false;
    if (parsed < low || parsed > high) return false;
    value = parsed;
    return true;
}

bool parse_int_list(const std::string& option, const std::string& text, long long low,
                    long long high, const std::string& expected, const std::string& example,
                    std::vector<int>& values, std::string& error) {
    values.clear();
    std::size_t begin = 0;
    while (begin <= text.size()) {
        const std::size_t comma = text.find(',', begin);
        const std::string item =
            text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
        long long number = 0;
        if (!parse_int(item, low, high, number)) {
            error = option + ": '" + item + "' is not " + expected + " (expected e.g. " + example + ")";
            return false;
        }
        values.push_back(static_cast<int>(number));
        if (comma == std::string::npos) break;
        begin = comma + 1;
    }
    return true;
}

const char* update_precision_note(tandem::UpdatePrecision precision) {
    switch (precision) {
    case tandem::UpdatePrecision::tf32x3:
        return " (split TF32 tensor-core products; the cpu backend computes in FP32).";
    case tandem::UpdatePrecision::tf32:
    case tandem::UpdatePrecision::bf16:
        return " (one tensor-core product: rough factors, for sgesv_refined).";
    default: return " (SGEMM).";
    }
}

bool parse_update_precision(const std::string& option, const std::string& value,
                            tandem::UpdatePrecision& out, std::string& error) {
    using tandem::UpdatePrecision;
    return parse_choice(option, value,
                        {{update_precision_name(UpdatePrecision::fp32), UpdatePrecision::fp32},
                         {update_precision_name(UpdatePrecision::tf32x3), UpdatePrecision::tf32x3},
                         {update_precision_name(UpdatePrecision::tf32), UpdatePrecision::tf32},
                         {update_precision_name(UpdatePrecision::bf16), UpdatePrecision::bf16}},
                        out, error);
}

bool parse_sizes(const std::string& text, std::vector<int>& sizes, std::string& error) {
    return parse_int_list("--sizes", text, 1, 65536, "a size in 1..65536", "1024,2048", sizes, error);
}

bool output_writable(const std::string& option, const std::string& path, std::string& error) {
    if (path.empty()) return true;
    const bool existed = std::ifstream(path).good();
    std::ofstream probe(path, std::ios::app);
    if (!probe) {
        error = option + ": cannot open " + path + " for writing (" + std::strerror(errno) + ")";
        return false;
    }
    probe.close();
    if (!existed) std::remove(path.c_str());
    return true;
}

bool open_csv(const std::string& path, std::ofstream& csv, void (*write_header)(std::ostream&),
              std::string& error) {
    if (path.empty()) return true;
    csv.open(path);
    if (!csv) {
        error = "--csv: cannot open " + path + " for writing (" + std::strerror(errno) + ")";
        return false;
    }
    write_header(csv);
    return true;
}

bool close_csv(std::ofstream& csv, const std::string& path, const char* mode) {
    if (!csv.is_open()) return true;
    csv.close();
    if (!csv) {
        std::cerr << "tandem-bench " << mode << ": error writing " << path << "\n";
        return false;
    }
    std::cout << "CSV:   " << path << "\n";
    return true;
}

}  // namespace tandem_bench
