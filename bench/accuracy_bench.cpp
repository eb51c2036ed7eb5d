#include "bench/accuracy_bench.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <limits>
#include <new>
#include <ostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench/matrix_data.hpp"
#include "bench/matrix_kinds.hpp"
#include "bench/option_parsing.hpp"
#include "bench/results.hpp"
#include "bench/text_table.hpp"
#include "bench/timing.hpp"
#include "tandem/tandem.hpp"

namespace tandem_bench {
namespace {

using tandem::UpdatePrecision;

// ---------------------------------------------------------------- arguments

struct AccuracyArgs {
    std::vector<int> sizes = {1024, 4096};
    std::vector<TestMatrixKind> kinds;  // empty: every kind
    int seeds = 5;
    std::uint64_t first_seed = default_seed;
    std::vector<UpdatePrecision> precisions = {UpdatePrecision::fp32, UpdatePrecision::tf32x3};
    tandem::Backend backend = tandem::Backend::gpu;
    // Panel width: fixed, so that the trailing updates (where the precision
    // applies) do the work at every order; 0 = the automatic plan, which below
    // n of about 4096 factors the whole matrix as one device panel in FP32.
    int block_size = 256;
    std::string csv_path;
    bool help = false;
};

std::string all_kind_names() {
    std::string names;
    for (const TestMatrixKindInfo& info : test_matrix_kinds()) {
        names += (names.empty() ? "" : ",") + std::string(info.name);
    }
    return names;
}

void print_accuracy_usage(std::ostream& os) {
    os << "usage: tandem-bench accuracy [options]\n"
          "\n"
          "Measures how the precision of the GPU's trailing updates (tandem::Options::\n"
          "update_precision: fp32, or tf32x3's split TF32 tensor-core products) changes the\n"
          "accuracy and the time of tandem::sgesv. For each matrix kind, order n and seed it\n"
          "solves A x = b, b = A x_true (x_true uniform in [-1,1), b formed in double and rounded\n"
          "to float), once per precision on copies of the same A and b, and reports the\n"
          "factorization's scaled residual ||P A - L U||_1 / (n ||A||_1 eps) (estimated in O(n^2),\n"
          "as the lu mode does), the solve's scaled backward error ||b - A x||_inf /\n"
          "(||A||_inf ||x||_inf n eps), eps = 2^-24, both in double, and the host wall-clock\n"
          "time of the call (A and b in host memory: the copies to the GPU and back included).\n"
          "The table has one row per (kind, n): the medians over the seeds, their ratios\n"
          "tf32x3/fp32 and the speed-up fp32 time / tf32x3 time; the CSV one line per run.\n"
          "\n"
          "matrix kinds (n x n, repeatable from kind, n and seed):\n"
          "  uniform              entries uniform in [-1,1) (the lu mode's matrix at the seed)\n"
          "  gaussian             standard normal entries (the solve mode's gaussian matrix)\n"
          "  randsvd3, randsvd5, randsvd7\n"
          "                       singular values spaced geometrically from 1 to 1/kappa,\n"
          "                       kappa = 1e3, 1e5, 1e7: U diag(s) V^T with U and V products of\n"
          "                       three random Householder reflectors and a permutation (exact\n"
          "                       singular values, less random singular vectors than LAPACK's\n"
          "                       dlatms)\n"
          "  scaled               uniform, row i scaled by 2^r_i and column j by 2^c_j, r and c\n"
          "                       integers uniform in [-20,20]\n"
          "  growth               Wilkinson's matrix of order min(n,60) spread over the matrix,\n"
          "                       identity elsewhere, noise 1e-6: partial pivoting's growth\n"
          "                       max|U|/max|A| = 2^59 (n >= 60) happens in the trailing updates;\n"
          "                       its residuals are far above 30 on every precision\n"
          "\n"
          "options:\n"
          "  --sizes N1,N2,...    orders n (default 1024,4096)\n"
          "  --kinds K1,K2,...    matrix kinds (default all:\n"
          "                       "
       << all_kind_names()
       << ")\n"
          "  --seeds N            seeds per kind and order: S, S+1, ..., S+N-1 (default 5)\n"
          "  --seed S             the first seed (default "
       << default_seed
       << ", the lu and solve modes')\n"
          "  --nb W               panel width (default 256, so that the trailing updates do\n"
          "                       the work at every order; 0 = the automatic plan, which\n"
          "                       below n of about 4096 is one device panel in FP32)\n"
          "  --precisions P1,...  update precisions to compare: fp32 and/or tf32x3\n"
          "                       (default fp32,tf32x3)\n"
          "  --backend B          gpu, or host: the hybrid algorithm on emulated devices in host\n"
          "                       memory, where every precision computes in FP32 (a check of the\n"
          "                       mode itself) (default gpu)\n"
          "  --csv FILE           write one line per run (kind, n, seed, precision) as CSV; the\n"
          "                       file is checked before the runs and grows as they go\n"
          "  -h, --help           this text\n"
          "\n"
          "Before the first case of each order, one untimed call per precision sets up the\n"
          "GPU's buffers for that order. Options take their value as the next argument or after\n"
          "'=' (--sizes=1024). With backend gpu and no usable GPU (tandem::gpu_available() is\n"
          "false) the mode says so and measures nothing.\n"
          "Exit status: 0 every run completed (or no usable GPU), 1 a call failed (an exception,\n"
          "or info != 0), 2 bad arguments or a CSV file that cannot be written.\n";
}

// A comma-separated list of names, each parsed by `parse_one`; a name listed
// twice is an error, since each would be measured twice under one heading.
template <class Item, class ParseOne>
bool parse_name_list(const std::string& option, const std::string& text, ParseOne&& parse_one,
                     std::vector<Item>& items, std::string& error) {
    items.clear();
    std::size_t begin = 0;
    while (begin <= text.size()) {
        const std::size_t comma = std::min(text.find(',', begin), text.size());
        const std::string name = text.substr(begin, comma - begin);
        Item item{};
        if (!parse_one(name, item, error)) return false;
        if (std::find(items.begin(), items.end(), item) != items.end()) {
            error = option + ": '" + name + "' is listed twice";
            return false;
        }
        items.push_back(item);
        begin = comma + 1;
    }
    return true;
}

bool parse_accuracy_args(const std::vector<std::string>& args, AccuracyArgs& out, std::string& error) {
    out = AccuracyArgs{};
    static const std::vector<std::string> flags = {"-h", "--help"};
    static const std::vector<std::string> valued = {"--sizes", "--kinds",   "--seeds", "--seed",
                                                    "--precisions", "--backend", "--csv", "--nb"};
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string name, value;
        if (!next_option(args, i, flags, valued, name, value, error)) return false;
        bool ok = true;
        if (name == "-h" || name == "--help") {
            out.help = true;
        } else if (name == "--sizes") {
            ok = parse_sizes(value, out.sizes, error);
        } else if (name == "--kinds") {
            ok = parse_name_list(
                name, value,
                [&](const std::string& word, TestMatrixKind& kind, std::string& why) {
                    if (test_matrix_kind_from_name(word, kind)) return true;
                    why = "--kinds: '" + word + "' is not one of " + all_kind_names();
                    return false;
                },
                out.kinds, error);
        } else if (name == "--seeds") {
            ok = parse_int_option(name, value, 1, 1000, "a count in 1..1000", out.seeds, error);
        } else if (name == "--seed") {
            ok = parse_int_option(name, value, 0, std::numeric_limits<long long>::max(),
                                  "a non-negative integer", out.first_seed, error);
        } else if (name == "--precisions") {
            ok = parse_name_list(
                name, value,
                [&](const std::string& word, UpdatePrecision& precision, std::string& why) {
                    return parse_update_precision(name, word, precision, why);
                },
                out.precisions, error);
        } else if (name == "--nb") {
            ok = parse_int_option(name, value, 0, 4096, "a width in 0..4096", out.block_size, error);
        } else if (name == "--backend") {
            ok = parse_choice(name, value,
                              {{"gpu", tandem::Backend::gpu}, {"host", tandem::Backend::host}},
                              out.backend, error);
        } else if (value.empty()) {  // --csv
            error = name + " needs a file name";
            ok = false;
        } else {
            out.csv_path = value;
        }
        if (!ok) return false;
    }
    if (out.kinds.empty()) {
        for (const TestMatrixKindInfo& info : test_matrix_kinds()) out.kinds.push_back(info.kind);
    }
    return true;
}

// ------------------------------------------------------------------ one run

// One precision on one (kind, n, seed).
struct AccuracyRun {
    RunStatus status = RunStatus::unavailable;
    std::string note;               // the failure, or what tandem's Report said
    double seconds = not_measured;  // host wall clock around tandem::sgesv
    double residual = not_measured;        // ||P A - L U||_1 / (n ||A||_1 eps), estimated
    double backward_error = not_measured;  // ||b - A x||_inf / (||A||_inf ||x||_inf n eps)
    double forward_error = not_measured;   // ||x - x_true||_inf / ||x_true||_inf
    double growth = not_measured;          // max|U| / max|A|
    std::string backend;
    std::string device;
};

// A x_true in double, by blocks of rows (each thread reads contiguous pieces
// of the columns and owns its part of the result), rounded to float.
std::vector<float> times_vector(int n, const std::vector<float>& a, const std::vector<float>& x) {
    constexpr int row_block = 256;
    std::vector<float> b(static_cast<std::size_t>(n));
    const int blocks = (n + row_block - 1) / row_block;
#pragma omp parallel for schedule(dynamic)
    for (int blk = 0; blk < blocks; ++blk) {
        const int r0 = blk * row_block, r1 = std::min(n, r0 + row_block);
        double sums[row_block] = {};
        for (int j = 0; j < n; ++j) {
            const float* column = a.data() + static_cast<std::size_t>(j) * n;
            const double xj = x[j];
            for (int i = r0; i < r1; ++i) sums[i - r0] += static_cast<double>(column[i]) * xj;
        }
        for (int i = r0; i < r1; ++i) b[i] = static_cast<float>(sums[i - r0]);
    }
    return b;
}

double max_abs(const float* values, std::size_t count) {
    double largest = 0.0;
    for (std::size_t k = 0; k < count; ++k) {
        largest = std::max(largest, std::fabs(static_cast<double>(values[k])));
    }
    return largest;
}

// max|U| / max|A|: how far the factorization's entries grew (NaN if U is not finite).
double growth_factor(int n, const std::vector<float>& a, const std::vector<float>& factors) {
    double u_max = 0.0;
    for (int j = 0; j < n; ++j) {
        const float* column = factors.data() + static_cast<std::size_t>(j) * n;
        for (int i = 0; i <= j; ++i) {
            const double value = std::fabs(static_cast<double>(column[i]));
            if (!std::isfinite(value)) return std::numeric_limits<double>::quiet_NaN();
            u_max = std::max(u_max, value);
        }
    }
    const double a_max = max_abs(a.data(), a.size());
    return a_max > 0.0 ? u_max / a_max : std::numeric_limits<double>::quiet_NaN();
}

double forward_error(const std::vector<float>& x, const std::vector<float>& x_true) {
    double difference = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double d = std::fabs(static_cast<double>(x[i]) - static_cast<double>(x_true[i]));
        if (!std::isfinite(d)) return std::numeric_limits<double>::quiet_NaN();
        difference = std::max(difference, d);
    }
    const double scale = max_abs(x_true.data(), x_true.size());
    return scale > 0.0 ? difference / scale : std::numeric_limits<double>::quiet_NaN();
}

// The system of one (kind, n, seed) and the arrays each run overwrites.
struct System {
    int n;
    const std::vector<float>& a;
    const std::vector<float>& b;
    const std::vector<float>& x_true;
    std::vector<float> factors;
    std::vector<float> x;
    std::vector<int> ipiv;

    System(int order, const std::vector<float>& a_original, const std::vector<float>& b_original,
           const std::vector<float>& solution)
        : n(order), a(a_original), b(b_original), x_true(solution), factors(a_original.size()),
          x(b_original.size()), ipiv(static_cast<std::size_t>(order)) {}
};

tandem::Options options_for(const AccuracyArgs& args, UpdatePrecision precision) {
    tandem::Options options;
    options.backend = args.backend;
    options.update_precision = precision;
    options.block_size = args.block_size;
    return options;
}

// tandem::sgesv on fresh copies of A and b; returns the seconds of the call.
// Throws on failure, info != 0 included.
double solve_once(System& s, const tandem::Options& options, tandem::Report& report) {
    std::copy(s.a.begin(), s.a.end(), s.factors.begin());
    std::copy(s.b.begin(), s.b.end(), s.x.begin());
    const double start = wall_seconds();
    const int info =
        tandem::sgesv(s.n, 1, s.factors.data(), s.n, s.ipiv.data(), s.x.data(), s.n, options, &report);
    const double seconds = wall_seconds() - start;
    if (info != 0) {
        throw std::runtime_error("tandem::sgesv returned info = " + std::to_string(info) +
                                 (report.message.empty() ? "" : " (" + report.message + ")"));
    }
    return seconds;
}

AccuracyRun measure(System& s, const tandem::Options& options, const LuResidualEstimator& residual,
                    const SolveBackwardError& backward) {
    AccuracyRun run;
    tandem::Report report;
    try {
        run.seconds = solve_once(s, options, report);
    } catch (const std::exception& error) {
        run.status = RunStatus::failed;
        run.note = error.what();
        return run;
    }
    run.status = RunStatus::ran;
    run.note = report.message;
    run.backend = tandem::backend_name(report.backend);
    run.device = report.device;
    run.residual = residual.estimate(s.factors.data(), s.ipiv.data());
    run.backward_error = backward.of(1, s.b.data(), s.x.data());
    run.forward_error = forward_error(s.x, s.x_true);
    run.growth = growth_factor(s.n, s.a, s.factors);
    return run;
}

// x_true of one (kind, n, seed): its own stream, derived from the matrix's.
std::vector<float> true_solution(TestMatrixKind kind, int n, std::uint64_t seed) {
    const std::uint64_t solution_tag = 0x5854525545000000ull;  // "XTRUE"
    const std::uint64_t stream = splitmix64(test_matrix_stream(kind, n, seed) ^ splitmix64(solution_tag));
    return random_entries(static_cast<std::size_t>(n), stream, EntryDistribution::uniform);
}

// ------------------------------------------------------------------- output

// Every run of one (kind, n), per precision (in the order of --precisions).
struct CaseRuns {
    TestMatrixKind kind = TestMatrixKind::uniform;
    int n = 0;
    std::vector<std::vector<AccuracyRun>> by_precision;
};

struct Failure {
    std::string where;
    std::string why;
};

std::string case_label(TestMatrixKind kind, int n, std::uint64_t seed) {
    return std::string(test_matrix_kind_name(kind)) + " n=" + std::to_string(n) + " seed " +
           std::to_string(seed);
}

std::string progress_text(const AccuracyRun& run) {
    if (run.status != RunStatus::ran) return "failed: " + run.note;
    return format_number("%.4g ms", 1e3 * run.seconds) + ", resid " + format_number("%.3g", run.residual) +
           ", bwd " + format_number("%.3g", run.backward_error);
}

void write_csv_header(std::ostream& csv) {
    csv << "kind,n,seed,precision,status,seconds,residual_est,backward_error,forward_error,"
           "growth_factor,backend,device,note\n";
}

void write_csv_row(std::ostream& csv, TestMatrixKind kind, int n, std::uint64_t seed,
                   UpdatePrecision precision, const AccuracyRun& run) {
    csv << csv_text(test_matrix_kind_name(kind)) << ',' << n << ',' << seed << ','
        << csv_text(update_precision_name(precision)) << ','
        << csv_text(run.status == RunStatus::ran ? "ran" : "failed") << ','
        << csv_number(run.seconds, "%.6g") << ',' << csv_number(run.residual) << ','
        << csv_number(run.backward_error) << ',' << csv_number(run.forward_error) << ','
        << csv_number(run.growth) << ',' << csv_text(run.backend) << ',' << csv_text(run.device)
        << ',' << csv_text(run.note) << '\n';
    csv.flush();  // a sweep cut short keeps what it measured
}

// The median over the runs that ran of one quantity.
template <class Field>
double median_of(const std::vector<AccuracyRun>& runs, Field field) {
    std::vector<double> values;
    for (const AccuracyRun& run : runs) {
        if (run.status == RunStatus::ran) values.push_back(run.*field);
    }
    return median(values);
}

// `suffix` after the number only: "-" when either median is missing.
std::string ratio_text(double numerator, double denominator, const char* suffix = "") {
    if (std::isnan(numerator) || std::isnan(denominator)) return "-";
    return format_number("%.2f", numerator / denominator) + suffix;
}

std::string median_text(double value, const char* pattern) {
    return std::isnan(value) ? "-" : format_number(pattern, value);
}

void print_table(std::ostream& os, const std::vector<CaseRuns>& cases,
                 const std::vector<UpdatePrecision>& precisions, bool has_growth_kind) {
    const auto index_of = [&](UpdatePrecision p) {
        const auto it = std::find(precisions.begin(), precisions.end(), p);
        return it == precisions.end() ? -1 : static_cast<int>(it - precisions.begin());
    };
    const int fp32 = index_of(UpdatePrecision::fp32), tf32x3 = index_of(UpdatePrecision::tf32x3);
    const bool compare = fp32 >= 0 && tf32x3 >= 0;

    std::vector<std::string> header = {"kind", "n"};
    const auto add_group = [&](const std::string& quantity, const std::string& ratio_heading) {
        for (const UpdatePrecision p : precisions) header.push_back(quantity + " " + update_precision_name(p));
        if (compare) header.push_back(ratio_heading);
    };
    add_group("resid", "resid tf32x3/fp32");
    add_group("bwd", "bwd tf32x3/fp32");
    add_group("ms", "speed fp32/tf32x3");
    header.push_back("runs ok");

    std::vector<std::vector<std::string>> rows;
    for (const CaseRuns& c : cases) {
        std::vector<double> resid, bwd, ms;
        int ran_count = 0, total = 0;
        for (const std::vector<AccuracyRun>& runs : c.by_precision) {
            resid.push_back(median_of(runs, &AccuracyRun::residual));
            bwd.push_back(median_of(runs, &AccuracyRun::backward_error));
            ms.push_back(1e3 * median_of(runs, &AccuracyRun::seconds));
            for (const AccuracyRun& run : runs) ran_count += run.status == RunStatus::ran;
            total += static_cast<int>(runs.size());
        }
        std::vector<std::string> row = {test_matrix_kind_name(c.kind), std::to_string(c.n)};
        for (const double value : resid) row.push_back(median_text(value, "%.3g"));
        if (compare) row.push_back(ratio_text(resid[tf32x3], resid[fp32]));
        for (const double value : bwd) row.push_back(median_text(value, "%.3g"));
        if (compare) row.push_back(ratio_text(bwd[tf32x3], bwd[fp32]));
        for (const double value : ms) row.push_back(median_text(value, "%.4g"));
        if (compare) row.push_back(ratio_text(ms[fp32], ms[tf32x3], "x"));
        row.push_back(std::to_string(ran_count) + "/" + std::to_string(total));
        rows.push_back(std::move(row));
    }
    print_aligned_table(os, header, rows);

    os << "\nEach cell: the median over the seeds of the runs that completed.\n"
          "resid = ||P A - L U||_1 / (n ||A||_1 eps), eps = 2^-24, ||P A - L U||_1 estimated in O(n^2)\n"
          "by Hager/Higham's method (a lower bound, usually within 3x); bwd = ||b - A x||_inf /\n"
          "(||A||_inf ||x||_inf n eps); both in double. ms: host wall clock around tandem::sgesv (A and b\n"
          "in host memory).";
    if (compare) {
        os << "\nresid tf32x3/fp32, bwd tf32x3/fp32: the ratios of the medians (> 1: tf32x3 less accurate);\n"
              "speed fp32/tf32x3: fp32's median time over tf32x3's (> 1: tf32x3 faster).";
    }
    if (has_growth_kind) {
        os << "\ngrowth: partial pivoting's growth (2^59 from n = 60 on) makes resid and bwd large on every\n"
              "precision; the ratios show what the updates' arithmetic adds to them.";
    }
    os << "\nThe CSV has every run, with the forward error ||x - x_true||_inf / ||x_true||_inf and the\n"
          "growth factor max|U| / max|A|.\n\n";
}


// One untimed call per precision at order n, on the first seed's uniform
// matrix: the GPU's buffers for n are set up outside the timed calls. Returns
// Report::device of the first call that completed; failures go to `failures`.
std::string warm_up(const AccuracyArgs& args, int n, std::vector<Failure>& failures) {
    std::string device;
    try {
        const std::vector<float> a = make_test_matrix(TestMatrixKind::uniform, n, args.first_seed);
        const std::vector<float> x_true = true_solution(TestMatrixKind::uniform, n, args.first_seed);
        const std::vector<float> b = times_vector(n, a, x_true);
        System s(n, a, b, x_true);
        for (const UpdatePrecision precision : args.precisions) {
            tandem::Report report;
            try {
                solve_once(s, options_for(args, precision), report);
                if (device.empty()) device = report.device;
            } catch (const std::exception& error) {
                failures.push_back({std::string("warm-up ") + update_precision_name(precision) +
                                        " at n=" + std::to_string(n),
                                    error.what()});
            }
        }
    } catch (const std::bad_alloc&) {
        failures.push_back({"warm-up at n=" + std::to_string(n), "out of host memory for A"});
    }
    return device;
}

}  // namespace

int run_accuracy_mode(const std::vector<std::string>& raw_args, const std::string& command_line) {
    AccuracyArgs args;
    std::string error;
    if (!parse_accuracy_args(raw_args, args, error)) {
        std::cerr << "tandem-bench accuracy: " << error << " (see tandem-bench accuracy --help)\n";
        return 2;
    }
    if (args.help) {
        print_accuracy_usage(std::cout);
        return 0;
    }
    if (!output_writable("--csv", args.csv_path, error)) {
        std::cerr << "tandem-bench accuracy: " << error << "\n";
        return 2;
    }
    if (args.backend == tandem::Backend::gpu && !tandem::gpu_available()) {
        std::cout << "tandem-bench accuracy: needs a GPU: tandem::gpu_available() is false (no usable "
                     "CUDA device, or a build without the CUDA backend); nothing measured\n";
        return 0;
    }
    std::ofstream csv;
    if (!open_csv(args.csv_path, csv, write_csv_header, error)) {
        std::cerr << "tandem-bench accuracy: " << error << "\n";
        return 2;
    }

    std::string kinds, sizes, precisions;
    const auto append = [](std::string& list, const std::string& item) {
        list += (list.empty() ? "" : ", ") + item;
    };
    for (const TestMatrixKind kind : args.kinds) append(kinds, test_matrix_kind_name(kind));
    for (const int n : args.sizes) append(sizes, std::to_string(n));
    for (const UpdatePrecision p : args.precisions) append(precisions, update_precision_name(p));
    const std::uint64_t last_seed = args.first_seed + static_cast<std::uint64_t>(args.seeds - 1);
    std::cout << "tandem-bench accuracy   " << local_time_text() << "\n"
              << "command:   " << command_line << "\n"
              << "tandem:    sgesv, 1 right-hand side, backend " << tandem::backend_name(args.backend)
              << ", GPU updates " << precisions << "\n"
              << "machine:   " << std::thread::hardware_concurrency() << " hardware threads, "
              << tandem::gpu_count() << " usable GPU(s)\n"
              << "cases:     kinds " << kinds << "; n = " << sizes << "; seeds " << args.first_seed
              << (args.seeds > 1 ? ".." + std::to_string(last_seed) : std::string()) << "\n";
    if (args.backend == tandem::Backend::host) {
        std::cout << "note:      backend host: every update precision computes in FP32\n";
    }
    std::cout << std::flush;

    // cases[kind][size]: the table's rows, kind by kind.
    std::vector<std::vector<CaseRuns>> cases(args.kinds.size(),
                                             std::vector<CaseRuns>(args.sizes.size()));
    std::vector<Failure> failures;
    bool device_printed = false;
    for (std::size_t size_index = 0; size_index < args.sizes.size(); ++size_index) {
        const int n = args.sizes[size_index];
        const std::string device = warm_up(args, n, failures);
        if (!device_printed) {
            std::cout << "device:    " << (device.empty() ? "unknown: the warm-up calls failed" : device)
                      << "\n\n"
                      << std::flush;
            device_printed = true;
        }
        for (std::size_t kind_index = 0; kind_index < args.kinds.size(); ++kind_index) {
            const TestMatrixKind kind = args.kinds[kind_index];
            CaseRuns& c = cases[kind_index][size_index];
            c.kind = kind;
            c.n = n;
            c.by_precision.assign(args.precisions.size(), {});
            for (int s = 0; s < args.seeds; ++s) {
                const std::uint64_t seed = args.first_seed + static_cast<std::uint64_t>(s);
                const std::string label = case_label(kind, n, seed);
                std::vector<AccuracyRun> runs(args.precisions.size());
                try {
                    const std::vector<float> a = make_test_matrix(kind, n, seed);
                    const std::vector<float> x_true = true_solution(kind, n, seed);
                    const std::vector<float> b = times_vector(n, a, x_true);
                    const LuResidualEstimator residual(n, a.data());
                    const SolveBackwardError backward(n, a.data());
                    System system(n, a, b, x_true);
                    for (std::size_t p = 0; p < args.precisions.size(); ++p) {
                        runs[p] = measure(system, options_for(args, args.precisions[p]), residual,
                                          backward);
                    }
                } catch (const std::bad_alloc&) {
                    // The host copies did not fit: every run of the case fails, the others go on.
                    for (AccuracyRun& run : runs) {
                        run = AccuracyRun{};
                        run.status = RunStatus::failed;
                        run.note = "out of host memory for A, b and their copies";
                    }
                }
                std::cout << label << ":";
                for (std::size_t p = 0; p < args.precisions.size(); ++p) {
                    const AccuracyRun& run = runs[p];
                    std::cout << (p ? " | " : " ") << update_precision_name(args.precisions[p]) << " "
                              << progress_text(run);
                    if (csv.is_open()) write_csv_row(csv, kind, n, seed, args.precisions[p], run);
                    if (run.status != RunStatus::ran) {
                        failures.push_back(
                            {std::string(update_precision_name(args.precisions[p])) + " at " + label, run.note});
                    }
                    c.by_precision[p].push_back(std::move(runs[p]));
                }
                std::cout << std::endl;  // flushed: the sweep can take minutes
            }
        }
    }

    std::vector<CaseRuns> rows;
    for (const std::vector<CaseRuns>& of_kind : cases) {
        rows.insert(rows.end(), of_kind.begin(), of_kind.end());
    }
    std::cout << "\n";
    const bool has_growth_kind =
        std::find(args.kinds.begin(), args.kinds.end(), TestMatrixKind::growth) != args.kinds.end();
    print_table(std::cout, rows, args.precisions, has_growth_kind);

    int status = close_csv(csv, args.csv_path, "accuracy") ? 0 : 1;
    for (const Failure& failure : failures) {
        std::cout << "FAILED: " << failure.where << ": " << failure.why << "\n";
        status = 1;
    }
    if (failures.empty()) {
        const std::size_t total = args.kinds.size() * args.sizes.size() *
                                  static_cast<std::size_t>(args.seeds) * args.precisions.size();
        std::cout << "all " << total << " runs completed\n";
    }
    return status;
}

}  // namespace tandem_bench
