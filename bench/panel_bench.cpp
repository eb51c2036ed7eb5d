#include "bench/panel_bench.hpp"

#include <cblas.h>
#include <lapacke.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench/panel_check.hpp"
#include "bench/timing.hpp"
#include "cpu/recursive_panel.hpp"

namespace tandem_bench {
namespace {

struct PanelShape {
    int rows;
    int width;
};

struct PanelArgs {
    std::vector<PanelShape> shapes = {{4096, 128},  {8192, 256},  {16384, 256},
                                      {32768, 256}, {32768, 512}, {65536, 256}};
    int threads = 0;
    int base_width = 0;
    int repeats = 7;
    std::uint64_t seed = 1;
};

struct PanelResult {
    PanelShape shape;
    int threads;  // tandem's team
    double tandem_seconds;
    double lapack_seconds;
    PivotComparison pivots;
    double tandem_residual;
    double lapack_residual;
};

void print_usage(std::ostream& os) {
    os << "usage: tandem-bench panel [--shapes RxW,...] [--threads N] [--base-width N]\n"
          "                          [--repeats N] [--seed S]\n"
          "  tandem's recursive CPU panel vs LAPACKE_sgetrf_work on the same panels\n"
          "  (default shapes 4096x128,8192x256,16384x256,32768x256,32768x512,65536x256;\n"
          "  threads: both tandem's base case and OpenBLAS; default their own defaults)\n";
}

bool parse_number(const std::string& text, long long low, long long high, long long& value) {
    char* end = nullptr;
    const long long parsed = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || end != text.c_str() + text.size() || parsed < low || parsed > high)
        return false;
    value = parsed;
    return true;
}

template <class Int>
bool parse_into(const std::string& text, long long low, long long high, Int& out) {
    long long value = 0;
    if (!parse_number(text, low, high, value)) return false;
    out = static_cast<Int>(value);
    return true;
}

bool parse_shapes(const std::string& text, std::vector<PanelShape>& shapes) {
    shapes.clear();
    std::size_t begin = 0;
    while (begin <= text.size()) {
        const std::size_t comma = std::min(text.find(',', begin), text.size());
        const std::string item = text.substr(begin, comma - begin);
        const std::size_t x = item.find('x');
        long long rows = 0, width = 0;
        if (x == std::string::npos || !parse_number(item.substr(0, x), 1, 1 << 20, rows) ||
            !parse_number(item.substr(x + 1), 1, 4096, width) || rows < width)
            return false;
        shapes.push_back({static_cast<int>(rows), static_cast<int>(width)});
        begin = comma + 1;
    }
    return !shapes.empty();
}

// 0 = parsed, 1 = --help, 2 = error (already reported).
int parse_args(int argc, char** argv, PanelArgs& args) {
    for (int i = 1; i < argc; ++i) {
        const std::string option = argv[i];
        if (option == "--help" || option == "-h") return 1;
        if (i + 1 >= argc) {
            std::cerr << "tandem-bench panel: " << option << " needs a value (see --help)\n";
            return 2;
        }
        const std::string value = argv[++i];
        bool ok = false;
        if (option == "--shapes") {
            ok = parse_shapes(value, args.shapes);
        } else if (option == "--threads") {
            ok = parse_into(value, 1, 4096, args.threads);
        } else if (option == "--base-width") {
            ok = parse_into(value, 0, 1024, args.base_width);
        } else if (option == "--repeats") {
            ok = parse_into(value, 1, 1000, args.repeats);
        } else if (option == "--seed") {
            ok = parse_into(value, 0, INT64_MAX, args.seed);
        }
        if (!ok) {
            std::cerr << "tandem-bench panel: bad option or value '" << option << " " << value
                      << "' (see --help)\n";
            return 2;
        }
    }
    return 0;
}

// LU flops of an m x n panel (m >= n): m n^2 - n^3 / 3.
double panel_gflops(PanelShape s, double seconds) {
    const double m = s.rows, n = s.width;
    return (m * n * n - n * n * n / 3.0) / seconds * 1e-9;
}

std::string format(const char* pattern, double value) {
    char text[64];
    std::snprintf(text, sizeof text, pattern, value);
    return text;
}

// Seconds of each of `repeats` timed runs after one warm-up; `restore` (not timed)
// runs before each.
template <class Restore, class Factor>
std::vector<double> time_runs(int repeats, Restore restore, Factor factor) {
    std::vector<double> seconds;
    for (int run = 0; run <= repeats; ++run) {  // run 0 warms up caches, pages, threads
        restore();
        const double start = wall_seconds();
        factor();
        const double stop = wall_seconds();
        if (run > 0) seconds.push_back(stop - start);
    }
    return seconds;
}

// Idle threads of one pool keep spinning for a while (OpenMP's for milliseconds,
// OpenBLAS's for about 0.1 s): each code's runs start once the other's are asleep.
void let_threads_settle() { std::this_thread::sleep_for(std::chrono::milliseconds(300)); }

PanelResult measure(const PanelArgs& args, PanelShape s) {
    const std::size_t count = static_cast<std::size_t>(s.rows) * s.width;
    const std::vector<float> original = random_panel(s.rows, s.width, args.seed);
    std::vector<float> ours(count), theirs(count);
    std::vector<int> ours_ipiv(static_cast<std::size_t>(s.width));
    std::vector<int> lapack_ipiv(static_cast<std::size_t>(s.width));
    tandem::PanelOptions options;
    options.threads = args.threads;
    options.base_width = args.base_width;

    let_threads_settle();
    const std::vector<double> lapack_seconds = time_runs(
        args.repeats, [&] { std::memcpy(theirs.data(), original.data(), count * sizeof(float)); },
        [&] {
            const lapack_int info = LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, s.rows, s.width,
                                                        theirs.data(), s.rows, lapack_ipiv.data());
            if (info < 0)
                throw std::runtime_error("LAPACKE_sgetrf_work rejected argument " +
                                         std::to_string(-info));
        });
    let_threads_settle();
    const std::vector<double> ours_seconds = time_runs(
        args.repeats, [&] { std::memcpy(ours.data(), original.data(), count * sizeof(float)); },
        [&] {
            tandem::factor_panel_recursive(s.rows, s.width, ours.data(), s.rows, ours_ipiv.data(),
                                           options);
        });
    const PanelResidual residual(s.rows, s.width, original.data(), args.seed + 1);
    return {s,
            tandem::panel_threads(s.rows, options),
            median(ours_seconds),
            median(lapack_seconds),
            compare_pivots(s.width, ours.data(), ours_ipiv.data(), theirs.data(),
                           lapack_ipiv.data(), s.rows),
            residual.estimate(ours.data(), ours_ipiv.data()),
            residual.estimate(theirs.data(), lapack_ipiv.data())};
}

bool passed(const PanelResult& r) {
    return r.pivots.acceptable() && r.tandem_residual < kResidualLimit;
}

std::vector<std::string> table_row(const PanelResult& r) {
    return {std::to_string(r.shape.rows) + "x" + std::to_string(r.shape.width),
            std::to_string(r.threads),
            format("%.3f", r.tandem_seconds * 1e3),
            format("%.3f", r.lapack_seconds * 1e3),
            format("%.1f", panel_gflops(r.shape, r.tandem_seconds)),
            format("%.1f", panel_gflops(r.shape, r.lapack_seconds)),
            format("%.2fx", r.lapack_seconds / r.tandem_seconds),
            r.pivots.describe(),
            format("%.3g", r.tandem_residual),
            format("%.3g", r.lapack_residual),
            passed(r) ? "ok" : "FAILED"};
}

void print_table(std::ostream& os, const std::vector<PanelResult>& results) {
    std::vector<std::vector<std::string>> rows = {
        {"panel", "threads", "tandem ms", "LAPACK ms", "tandem GF/s", "LAPACK GF/s", "speedup",
         "pivots", "tandem resid", "LAPACK resid", "check"}};
    for (const PanelResult& r : results) rows.push_back(table_row(r));
    std::vector<std::size_t> widths(rows[0].size(), 0);
    for (const auto& row : rows)
        for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
    for (const auto& row : rows) {
        for (std::size_t c = 0; c < row.size(); ++c)
            os << (c ? "  " : "") << std::string(widths[c] - row[c].size(), ' ') << row[c];
        os << "\n";
    }
}

}  // namespace

int run_panel_bench(int argc, char** argv) {
    PanelArgs args;
    const int parsed = parse_args(argc, argv, args);
    if (parsed == 1) print_usage(std::cout);
    if (parsed != 0) return parsed == 1 ? 0 : 2;
    if (args.threads > 0) {
        omp_set_num_threads(args.threads);
        openblas_set_num_threads(args.threads);
    }
    std::cout << "panel: tandem threads "
              << (args.threads > 0 ? std::to_string(args.threads) : "auto") << ", base width "
              << (args.base_width > 0 ? std::to_string(args.base_width) : "auto") << ", OpenBLAS "
              << openblas_get_config() << " (" << openblas_get_corename() << ", "
              << openblas_get_num_threads() << " threads), median of " << args.repeats
              << " runs, residual ||P A x - L U x||_1 / (m ||A||_1 ||x||_1 eps)\n";
    std::vector<PanelResult> results;
    for (const PanelShape& s : args.shapes) {
        results.push_back(measure(args, s));
        const std::vector<std::string> row = table_row(results.back());
        std::cout << row[0] << ": tandem " << row[2] << " ms (" << row[1] << " threads), LAPACK "
                  << row[3] << " ms (" << row[6] << "), pivots " << row[7] << ", residuals "
                  << row[8] << " / " << row[9] << std::endl;
    }
    std::cout << "\n";
    print_table(std::cout, results);
    return std::all_of(results.begin(), results.end(), passed) ? 0 : 1;
}

}  // namespace tandem_bench
