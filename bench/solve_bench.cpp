#include "bench/solve_bench.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <exception>
#include <fstream>
#include <initializer_list>
#include <iostream>
#include <new>
#include <ostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench/baselines.hpp"
#include "bench/device_matrix.hpp"
#include "bench/lu_args.hpp"
#include "bench/matrix_data.hpp"
#include "bench/matrix_kinds.hpp"
#include "bench/option_parsing.hpp"
#include "bench/results.hpp"
#include "bench/text_table.hpp"
#include "bench/timing.hpp"
#include "tandem/tandem.hpp"

namespace tandem_bench {
namespace {

// ---------------------------------------------------------------- arguments

// A (make_test_matrix: the accuracy mode's kinds) and the distribution of B's entries.
struct MatrixKind {
    const char* name;
    TestMatrixKind kind;
    EntryDistribution distribution;
};

const MatrixKind matrix_kinds[] = {
    {"uniform", TestMatrixKind::uniform, EntryDistribution::uniform},
    {"gaussian", TestMatrixKind::gaussian, EntryDistribution::gaussian},
    {"randsvd3", TestMatrixKind::randsvd3, EntryDistribution::uniform},
    {"randsvd5", TestMatrixKind::randsvd5, EntryDistribution::uniform},
    {"randsvd7", TestMatrixKind::randsvd7, EntryDistribution::uniform},
    {"scaled", TestMatrixKind::scaled, EntryDistribution::uniform},
    {"growth", TestMatrixKind::growth, EntryDistribution::uniform}};

// 16384 right-hand sides of order 65536 are 4 GiB per copy: more cannot be meant.
constexpr int max_nrhs = 16384;

// sizes, repeats, cpu_max_n, seed and csv_path are the sweep's common options.
struct SolveArgs : SweepOptions {
    std::vector<int> nrhs = {1, 16};
    std::vector<MatrixKind> kinds = {matrix_kinds[0]};
    tandem::UpdatePrecision update_precision = tandem::UpdatePrecision::fp32;
    bool help = false;
};

// Smaller than the lu mode's: each size is solved for every nrhs by eleven
// implementations, and a solve's time is its factorization's.
std::vector<int> default_solve_sizes(bool gpu) {
    if (gpu) return {1024, 2048, 4096, 8192};
    return {256, 512, 1024};
}

void print_solve_usage(std::ostream& os) {
    os << "usage: tandem-bench solve [options]\n"
          "\n"
          "Times the solve A X = B (single precision, LU with partial pivoting) over a sweep of\n"
          "orders n and right-hand side counts nrhs: tandem::sgesv on host arrays, tandem::sgesv_gpu\n"
          "on arrays already in GPU memory, tandem::sgesv_refined and sgesv_refined_gpu (a TF32\n"
          "factorization refined to FP32 quality; iter as LAPACK's DSGESV, negative when FP32's\n"
          "sgesv answered), cuSOLVER's getrf + getrs (resident, and with the copies\n"
          "from and to pageable host memory), cuSOLVER's iterative-refinement solvers SSgesv,\n"
          "SXgesv, SBgesv and SHgesv, and LAPACK's sgesv on the CPU. Reports the median of the\n"
          "repeats after a warm-up (at least one run and 0.2 s), the fastest and slowest run, and\n"
          "the scaled backward error max_j ||b_j - A x_j||_inf / (||A||_inf ||x_j||_inf n eps),\n"
          "eps = 2^-24, computed in double. Without a GPU only tandem and LAPACK run.\n"
          "\n"
          "options:\n"
          "  --sizes N1,N2,...    orders to sweep (default: 1024,2048,4096,8192 with a GPU,\n"
          "                       256,512,1024 without)\n"
          "  --nrhs R1,R2,...     right-hand side counts to sweep at each order (default 1,16)\n"
          "  --kinds K1,...       matrix kinds, as the accuracy mode's: uniform (entries uniform in\n"
          "                       [-1,1], the lu mode's matrices), gaussian (standard normal),\n"
          "                       randsvd3, randsvd5, randsvd7 (condition 1e3, 1e5, 1e7), scaled\n"
          "                       (rows and columns by 2^-20..2^20), growth (default uniform)\n"
          "  --update-precision U\n"
          "                       arithmetic of the GPU's trailing updates in tandem's runs:\n"
          "                       fp32 (SGEMM) or tf32x3 (each operand split into two TF32 parts,\n"
          "                       three tensor-core products: close to FP32's accuracy, faster);\n"
          "                       no effect where tandem runs on the CPU (default fp32); the\n"
          "                       refined solves factor in tf32x3 unless U is tf32 or bf16\n"
          "  --repeats R          timed repeats per case and implementation (default 3)\n"
          "  --cpu-max-n N        skip LAPACK on the CPU for n > N (default 8192 with a GPU,\n"
          "                       2048 without)\n"
          "  --seed S             seed of the random matrices and right-hand sides\n"
          "  --csv FILE           write one row per (n, nrhs, implementation) as CSV; the file is\n"
          "                       opened before the sweep starts and grows as it runs\n"
          "  -h, --help           this text\n"
          "\n"
          "Options take their value as the next argument or after '=' (--nrhs=1,16).\n"
          "Exit status: 0 all ran and every backward error <= 30 (the IRS solvers' are reported,\n"
          "never failed on), 1 a run failed or a backward error exceeded 30, 2 bad arguments or\n"
          "a CSV file that cannot be opened.\n";
}

bool parse_kinds(const std::string& text, std::vector<MatrixKind>& kinds, std::string& error) {
    kinds.clear();
    std::size_t begin = 0;
    while (begin <= text.size()) {
        const std::size_t comma = std::min(text.find(',', begin), text.size());
        const std::string item = text.substr(begin, comma - begin);
        const auto kind = std::find_if(std::begin(matrix_kinds), std::end(matrix_kinds),
                                       [&](const MatrixKind& k) { return item == k.name; });
        if (kind == std::end(matrix_kinds)) {
            error = "--kinds: '" + item +
                    "' is not one of uniform, gaussian, randsvd3, randsvd5, randsvd7, scaled, growth";
            return false;
        }
        kinds.push_back(*kind);
        begin = comma + 1;
    }
    return true;
}

bool parse_solve_args(const std::vector<std::string>& args, SolveArgs& out, std::string& error) {
    out = SolveArgs{};
    static const std::vector<std::string> flags = {"-h", "--help"};
    static const std::vector<std::string> valued =
        with_sweep_options({"--nrhs", "--kinds", "--update-precision"});
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string name, value;
        if (!next_option(args, i, flags, valued, name, value, error)) return false;
        bool ok = true;
        if (name == "-h" || name == "--help") {
            out.help = true;
        } else if (is_sweep_option(name)) {
            ok = parse_sweep_option(name, value, out, error);
        } else if (name == "--nrhs") {
            ok = parse_int_list(name, value, 1, max_nrhs, "a count in 1..16384", "1,16", out.nrhs, error);
        } else if (name == "--update-precision") {
            ok = parse_update_precision(name, value, out.update_precision, error);
        } else {
            ok = parse_kinds(value, out.kinds, error);  // --kinds
        }
        if (!ok) return false;
    }
    return true;
}

// ---------------------------------------------------------- implementations

// In the order of the progress lines, the table and the CSV.
enum Implementation : int {
    tandem_host,
    tandem_gpu_memory,
    tandem_refined_host,
    tandem_refined_gpu_memory,
    cusolver_resident,
    cusolver_with_copies,
    irs_ss,
    irs_sx,
    irs_sb,
    irs_sh,
    lapack_cpu,
    implementation_count
};

struct ImplementationInfo {
    const char* name;     // the CSV's `implementation` and the progress line's
    const char* heading;  // the table's column
    bool needs_gpu;
    bool irs;             // iter is reported; its backward error is never failed on
    bool iter = irs;      // iter is reported
};

const ImplementationInfo implementations[implementation_count] = {
    {"tandem host", "tandem host", false, false},
    {"tandem gpu memory", "tandem gpu mem", true, false},
    {"tandem sgesv_refined", "refined host", false, false, true},
    {"tandem sgesv_refined_gpu", "refined gpu mem", true, false, true},
    {"cuSOLVER getrf+getrs", "cuSOLVER", true, false},
    {"cuSOLVER getrf+getrs with copies", "cuSOLVER+copies", true, false},
    {"cuSOLVER SSgesv", "SSgesv", true, true},
    {"cuSOLVER SXgesv", "SXgesv", true, true},
    {"cuSOLVER SBgesv", "SBgesv", true, true},
    {"cuSOLVER SHgesv", "SHgesv", true, true},
    {"LAPACK sgesv", "LAPACK", false, false},
};

constexpr std::array<std::pair<Implementation, IrsPrecision>, 4> irs_solvers = {{
    {irs_ss, IrsPrecision::single},
    {irs_sx, IrsPrecision::tf32},
    {irs_sb, IrsPrecision::bfloat16},
    {irs_sh, IrsPrecision::half},
}};

// One implementation on one case.
struct SolveRun {
    RunStatus status = RunStatus::unavailable;
    std::string note;  // why it did not run; empty when it ran
    RepeatSummary seconds;
    double backward_error = not_measured;
    int iter = 0;          // IRS solvers and sgesv_refined: the last run's iteration count
    std::string backend;   // tandem: the backend its Report names
};

bool ran(const SolveRun& run) { return run.status == RunStatus::ran; }

// One (matrix kind, n, nrhs) of the sweep.
struct SolveCase {
    const char* kind = "";
    int n = 0;
    int nrhs = 0;
    std::array<SolveRun, implementation_count> runs;
    std::vector<std::string> tandem_messages;  // what tandem's Reports said (e.g. a fallback)
};

// The inputs of one case, and the outputs each implementation overwrites in turn.
struct Problem {
    int n;
    int nrhs;
    int repeats;
    tandem::Options tandem_options;  // of tandem's runs: the update precision
    const std::vector<float>& a;  // n x n, column-major
    const std::vector<float>& b;  // n x nrhs
    const SolveBackwardError& check;
    std::vector<float> factors;   // n x n
    std::vector<float> x;         // n x nrhs
    std::vector<int> ipiv;

    Problem(int order, int rhs, int repeat_count, const tandem::Options& options,
            const std::vector<float>& a_original, const std::vector<float>& b_original,
            const SolveBackwardError& backward_error)
        : n(order), nrhs(rhs), repeats(repeat_count), tandem_options(options), a(a_original),
          b(b_original), check(backward_error), factors(a_original.size()), x(b_original.size()),
          ipiv(static_cast<std::size_t>(order)) {}

    double backward_error_of_x() const { return check.of(nrhs, b.data(), x.data()); }
};

void record(SolveRun& run, const std::vector<double>& seconds, double backward_error) {
    run.status = RunStatus::ran;
    run.note.clear();
    run.seconds = summarize(seconds);
    run.backward_error = backward_error;
}

// Runs `measure`, which records into `runs` when it succeeds. A baseline the
// library or the GPU does not offer for these arguments leaves them
// unavailable; any other exception marks them failed with its text.
template <class Measure>
void measure_guarded(std::initializer_list<SolveRun*> runs, Measure&& measure) {
    std::string note;
    RunStatus status = RunStatus::failed;
    try {
        measure();
        return;
    } catch (const BaselineUnsupported& error) {
        status = RunStatus::unavailable;
        note = std::string("unavailable: ") + error.what();
    } catch (const std::exception& error) {
        note = std::string("failed: ") + error.what();
    }
    for (SolveRun* run : runs) {
        run->status = status;
        run->note = note;
    }
}

// A timed tandem call's outcome: info 0 keeps its report in `last`; any
// other info fails the run, with the report's message.
void keep_report(const char* call, int info, tandem::Report& report, tandem::Report& last) {
    if (info != 0)
        throw std::runtime_error(std::string(call) + " returned info = " + std::to_string(info) +
                                 (report.message.empty() ? "" : " (" + report.message + ")"));
    last = std::move(report);
}

void note_tandem_report(SolveCase& c, SolveRun& run, const tandem::Report& report) {
    run.backend = tandem::backend_name(report.backend);
    if (!report.message.empty()) c.tandem_messages.push_back(report.message);
}

// tandem::sgesv on host arrays, automatic backend and the requested update
// precision; host wall clock around the call, which returns once X is in
// `b`'s place.
void measure_tandem_host(Problem& p, SolveCase& c) {
    SolveRun& run = c.runs[tandem_host];
    measure_guarded({&run}, [&] {
        tandem::Report last_report;
        const std::vector<double> seconds = time_restored_runs(
            p.repeats,
            [&] {
                std::copy(p.a.begin(), p.a.end(), p.factors.begin());
                std::copy(p.b.begin(), p.b.end(), p.x.begin());
            },
            [&] {
                tandem::Report report;
                keep_report("tandem::sgesv",
                            tandem::sgesv(p.n, p.nrhs, p.factors.data(), p.n, p.ipiv.data(),
                                          p.x.data(), p.n, p.tandem_options, &report),
                            report, last_report);
            });
        record(run, seconds, p.backward_error_of_x());
        note_tandem_report(c, run, last_report);
    });
}

// tandem::sgesv_gpu with A and B already in GPU memory (put back with
// cudaMemcpy before each run, untimed); host wall clock around the call, which
// is synchronous.
void measure_tandem_gpu_memory(Problem& p, SolveCase& c) {
    SolveRun& run = c.runs[tandem_gpu_memory];
    measure_guarded({&run}, [&] {
        DeviceMatrix d_a(p.a.size()), d_b(p.b.size());
        tandem::Report last_report;
        const std::vector<double> seconds = time_restored_runs(
            p.repeats,
            [&] {
                d_a.copy_from_host(p.a.data());
                d_b.copy_from_host(p.b.data());
            },
            [&] {
                tandem::Report report;
                keep_report("tandem::sgesv_gpu",
                            tandem::sgesv_gpu(p.n, p.nrhs, d_a.data(), p.n, p.ipiv.data(),
                                              d_b.data(), p.n, p.tandem_options, &report),
                            report, last_report);
            });
        d_b.copy_to_host(p.x.data());
        record(run, seconds, p.backward_error_of_x());
        note_tandem_report(c, run, last_report);
    });
}

// tandem::sgesv_refined on host arrays (A is copied back before each run: a
// fallback leaves the factors in it), and sgesv_refined_gpu on arrays in GPU
// memory; host wall clock around the call.
void measure_tandem_refined(Problem& p, SolveCase& c, bool gpu_memory) {
    SolveRun& run = c.runs[gpu_memory ? tandem_refined_gpu_memory : tandem_refined_host];
    measure_guarded({&run}, [&] {
        tandem::Report last_report;
        int iter = 0;
        std::vector<double> seconds;
        if (gpu_memory) {
            DeviceMatrix d_a(p.a.size()), d_b(p.b.size()), d_x(p.b.size());
            d_b.copy_from_host(p.b.data());  // never written: only A is put back (a fallback factors it)
            seconds = time_restored_runs(
                p.repeats, [&] { d_a.copy_from_host(p.a.data()); },
                [&] {
                    tandem::Report report;
                    keep_report("tandem::sgesv_refined_gpu",
                                tandem::sgesv_refined_gpu(p.n, p.nrhs, d_a.data(), p.n,
                                                          p.ipiv.data(), d_b.data(), p.n,
                                                          d_x.data(), p.n, &iter,
                                                          p.tandem_options, &report),
                                report, last_report);
                });
            d_x.copy_to_host(p.x.data());
        } else {
            seconds = time_restored_runs(
                p.repeats, [&] { std::copy(p.a.begin(), p.a.end(), p.factors.begin()); },
                [&] {
                    tandem::Report report;
                    keep_report("tandem::sgesv_refined",
                                tandem::sgesv_refined(p.n, p.nrhs, p.factors.data(), p.n,
                                                      p.ipiv.data(), p.b.data(), p.n, p.x.data(),
                                                      p.n, &iter, p.tandem_options, &report),
                                report, last_report);
                });
        }
        record(run, seconds, p.backward_error_of_x());
        run.iter = iter;
        note_tandem_report(c, run, last_report);
    });
}

// One run of getrf + getrs gives both rows: resident (CUDA events) and with copies.
void measure_cusolver(Problem& p, SolveCase& c) {
    SolveRun& resident = c.runs[cusolver_resident];
    SolveRun& with_copies = c.runs[cusolver_with_copies];
    measure_guarded({&resident, &with_copies}, [&] {
        const CusolverSolveTimes times =
            time_cusolver_sgesv(p.n, p.nrhs, p.a.data(), p.b.data(), p.x.data(), p.repeats);
        const double backward_error = p.backward_error_of_x();
        record(resident, times.solve_seconds, backward_error);
        record(with_copies, times.with_transfer_seconds, backward_error);
    });
}

void measure_irs(Problem& p, SolveCase& c) {
    for (const auto& solver : irs_solvers) {
        SolveRun& run = c.runs[solver.first];
        const IrsPrecision precision = solver.second;
        measure_guarded({&run}, [&] {
            const IrsTimes times = time_cusolver_irs_sgesv(precision, p.n, p.nrhs, p.a.data(),
                                                           p.b.data(), p.x.data(), p.repeats);
            record(run, times.seconds, p.backward_error_of_x());
            run.iter = times.iter;
        });
    }
}

void measure_lapack(Problem& p, SolveCase& c, int cpu_max_n) {
    SolveRun& run = c.runs[lapack_cpu];
    if (p.n > cpu_max_n) {
        run.status = RunStatus::skipped;
        run.note = "skipped: n > cpu-max-n";
        return;
    }
    measure_guarded({&run}, [&] {
        const std::vector<double> seconds = time_lapack_sgesv(
            p.n, p.nrhs, p.a.data(), p.b.data(), p.factors.data(), p.x.data(), p.ipiv.data(), p.repeats);
        record(run, seconds, p.backward_error_of_x());
    });
}

// ------------------------------------------------------------------- output

// Which implementations this sweep shows: the GPU's only when a GPU can run them.
bool shown(int implementation, bool gpu_rows) {
    return gpu_rows || !implementations[implementation].needs_gpu;
}

std::string iter_suffix(int implementation, const SolveRun& run) {
    return implementations[implementation].iter ? ", iter " + std::to_string(run.iter) : "";
}

std::string progress_text(int implementation, const SolveRun& run) {
    if (run.status != RunStatus::ran) return run.note;
    const RepeatSummary& s = run.seconds;
    return format_number("%.3g ms", 1e3 * s.median) + " (runs " + format_number("%.3g", 1e3 * s.fastest) +
           "-" + format_number("%.3g ms", 1e3 * s.slowest) + ", bwd err " +
           format_number("%.2g", run.backward_error) + iter_suffix(implementation, run) + ")";
}

std::string case_label(const SolveCase& c, bool show_kind) {
    return "n=" + std::to_string(c.n) + " nrhs=" + std::to_string(c.nrhs) +
           (show_kind ? " " + std::string(c.kind) : "");
}

// The backend is named only when it changes (it is the same on most lines).
void print_progress(const SolveCase& c, bool gpu_rows, bool show_kind, std::string& last_backend) {
    std::cout << case_label(c, show_kind) << ":";
    const char* separator = " ";
    for (int i = 0; i < implementation_count; ++i) {
        if (!shown(i, gpu_rows)) continue;
        const SolveRun& run = c.runs[i];
        std::cout << separator << implementations[i].name << " " << progress_text(i, run);
        if (i == tandem_host && ran(run) && run.backend != last_backend) {
            std::cout << " [" << run.backend << "]";
            last_backend = run.backend;
        }
        separator = " | ";
    }
    std::cout << std::endl;  // flushed: the sweep can take minutes
}

std::string table_cell(int implementation, const SolveRun& run) {
    switch (run.status) {
        case RunStatus::ran:
            return format_number("%.3g", 1e3 * run.seconds.median) + " (" +
                   format_number("%.2g", run.backward_error) + iter_suffix(implementation, run) + ")";
        case RunStatus::skipped: return run.note;
        case RunStatus::failed: return "failed";
        case RunStatus::unavailable: return "-";
    }
    return "-";
}

// cuSOLVER's time over tandem's, so that > 1 means tandem is faster (as the lu
// mode's GF/s ratios read).
std::string speed_ratio_cell(const SolveRun& tandem_run, const SolveRun& cusolver_run) {
    if (!ran(tandem_run) || !ran(cusolver_run)) return "-";
    return format_number("%.2fx", cusolver_run.seconds.median / tandem_run.seconds.median);
}

void print_table(std::ostream& os, const std::vector<SolveCase>& cases, bool gpu_rows, bool show_kind,
                 const std::string& gpu_note, tandem::UpdatePrecision update_precision) {
    std::vector<std::string> header = {"n", "nrhs"};
    if (show_kind) header.push_back("kind");
    for (int i = 0; i < implementation_count; ++i) {
        if (shown(i, gpu_rows)) header.push_back(implementations[i].heading);
    }
    if (gpu_rows) header.insert(header.end(), {"host/cuSOLVER", "gpu mem/cuSOLVER"});

    std::vector<std::vector<std::string>> rows;
    for (const SolveCase& c : cases) {
        std::vector<std::string> row = {std::to_string(c.n), std::to_string(c.nrhs)};
        if (show_kind) row.push_back(c.kind);
        for (int i = 0; i < implementation_count; ++i) {
            if (shown(i, gpu_rows)) row.push_back(table_cell(i, c.runs[i]));
        }
        if (gpu_rows) {
            row.push_back(speed_ratio_cell(c.runs[tandem_host], c.runs[cusolver_resident]));
            row.push_back(speed_ratio_cell(c.runs[tandem_gpu_memory], c.runs[cusolver_resident]));
        }
        rows.push_back(std::move(row));
    }
    print_aligned_table(os, header, rows);

    os << "\nEach cell: the median of the timed runs in ms (the backward error max_j ||b_j - A x_j||_inf /\n"
          "(||A||_inf ||x_j||_inf n eps), eps = 2^-24, in double; above "
       << residual_threshold << " fails the run, except an IRS solver's).\n"
          "tandem host: host wall clock around tandem::sgesv on host arrays (automatic backend).\n"
          "refined host, refined gpu mem: around tandem::sgesv_refined on host arrays and\n"
          "sgesv_refined_gpu on arrays in GPU memory; iter: the last run's corrections, negative\n"
          "when tandem's FP32 sgesv answered (see tandem.hpp).\n"
          "tandem's trailing updates on a GPU: "
       << update_precision_name(update_precision)
       << update_precision_note(update_precision) << "\n";
    if (gpu_rows) {
        os << "tandem gpu mem: around tandem::sgesv_gpu, A and B already in GPU memory.\n"
              "cuSOLVER: cusolverDnSgetrf + cusolverDnSgetrs on device-resident arrays (CUDA events);\n"
              "cuSOLVER+copies: the same runs from the host, with A and B copied from pageable memory\n"
              "and X back (host wall clock).\n"
              "SSgesv, SXgesv, SBgesv, SHgesv: cuSOLVER's IRS solvers (factorization in FP32, TF32, BF16,\n"
              "FP16, refined to FP32) on device-resident arrays (CUDA events); iter: the last run's\n"
              "refinement iterations, negative when it fell back to a single-precision factorization.\n"
              "host/cuSOLVER, gpu mem/cuSOLVER: cuSOLVER's resident time over tandem's (> 1: tandem faster).\n";
    } else {
        os << gpu_note << "\n";
    }
    os << "LAPACK: LAPACKE_sgesv_work (column-major) on the CPU, host wall clock.\n";

    // tandem's own remarks (e.g. why it fell back to the CPU), each once with its cases.
    struct Remark {
        std::string message;
        std::vector<std::string> cases;
    };
    std::vector<Remark> remarks;
    for (const SolveCase& c : cases) {
        for (const std::string& message : c.tandem_messages) {
            auto same = std::find_if(remarks.begin(), remarks.end(),
                                     [&](const Remark& remark) { return remark.message == message; });
            if (same == remarks.end()) same = remarks.insert(remarks.end(), Remark{message, {}});
            const std::string label = case_label(c, show_kind);
            if (same->cases.empty() || same->cases.back() != label) same->cases.push_back(label);
        }
    }
    for (const Remark& remark : remarks) {
        std::string where;
        if (remark.cases.size() == cases.size()) {
            where = "every case";
        } else {
            for (const std::string& label : remark.cases) where += (where.empty() ? "" : ", ") + label;
        }
        os << "tandem says (" << where << "): " << remark.message << "\n";
    }
    for (const SolveCase& c : cases) {
        for (int i = 0; i < implementation_count; ++i) {
            const SolveRun& run = c.runs[i];
            const bool said = run.status == RunStatus::failed || run.status == RunStatus::unavailable;
            if (shown(i, gpu_rows) && said) {
                os << case_label(c, show_kind) << ": " << implementations[i].name << " " << run.note << "\n";
            }
        }
    }
    os << "\n";
}

void write_csv_header(std::ostream& csv) {
    csv << "n,nrhs,implementation,median_s,min_s,max_s,backward_error,iter,backend,kind,status,"
           "update_precision\n";
}

bool is_tandem(int implementation) {
    return implementation == tandem_host || implementation == tandem_gpu_memory ||
           implementation == tandem_refined_host || implementation == tandem_refined_gpu_memory;
}

// One row per implementation shown; empty fields where nothing was measured.
// update_precision is named on tandem's rows, the only ones it applies to.
void write_csv_rows(std::ostream& csv, const SolveCase& c, bool gpu_rows,
                    tandem::UpdatePrecision update_precision) {
    for (int i = 0; i < implementation_count; ++i) {
        if (!shown(i, gpu_rows)) continue;
        const SolveRun& run = c.runs[i];
        const bool has_iter = ran(run) && implementations[i].iter;
        csv << c.n << ',' << c.nrhs << ',' << csv_text(implementations[i].name) << ','
            << csv_number(run.seconds.median) << ',' << csv_number(run.seconds.fastest) << ','
            << csv_number(run.seconds.slowest) << ',' << csv_number(run.backward_error) << ','
            << (has_iter ? std::to_string(run.iter) : std::string()) << ',' << csv_text(run.backend)
            << ',' << csv_text(c.kind) << ',' << csv_text(ran(run) ? "ran" : run.note) << ','
            << (is_tandem(i) ? csv_text(update_precision_name(update_precision)) : std::string())
            << '\n';
    }
    csv.flush();  // a sweep cut short keeps what it measured
}

// The verdict: every failure and every backward error above the threshold
// (NaN included) by name, except the IRS solvers' errors, which are reported only.
int print_verdict(const std::vector<SolveCase>& cases, bool show_kind) {
    int status = 0;
    for (const SolveCase& c : cases) {
        for (int i = 0; i < implementation_count; ++i) {
            const SolveRun& run = c.runs[i];
            const std::string where = std::string(implementations[i].name) + " at " + case_label(c, show_kind);
            if (run.status == RunStatus::failed) {
                std::cout << "FAILED: " << where << ": " << run.note.substr(std::strlen("failed: ")) << "\n";
                status = 1;
            } else if (ran(run) && !implementations[i].irs && !(run.backward_error <= residual_threshold)) {
                std::cout << "FAILED: " << where << ": backward error " << run.backward_error << " > "
                          << residual_threshold << "\n";
                status = 1;
            }
        }
    }
    if (status == 0) {
        std::cout << "all runs passed (backward errors <= " << residual_threshold
                  << ", the IRS solvers' reported only)\n";
    }
    return status;
}

// B of one (kind, n, nrhs), from a stream of its own derived from A's (A is
// the lu mode's matrix at n for kind uniform); the tag keeps B's stream apart
// from A's.
std::vector<float> right_hand_sides(const MatrixKind& kind, int n, int nrhs, std::uint64_t seed) {
    const std::uint64_t rhs_tag = 0x5248530000000000ull;  // "RHS"
    const std::uint64_t stream =
        splitmix64(matrix_stream(seed, n) ^ splitmix64(rhs_tag + static_cast<std::uint64_t>(nrhs)));
    return random_entries(static_cast<std::size_t>(n) * nrhs, stream, kind.distribution);
}


}  // namespace

int run_solve_mode(const std::vector<std::string>& raw_args, const std::string& command_line) {
    SolveArgs args;
    std::string error;
    const bool parsed = parse_solve_args(raw_args, args, error);
    if (parsed && args.help) {
        print_solve_usage(std::cout);
        return 0;
    }
    std::ofstream csv;
    if (!parsed || !open_csv(args.csv_path, csv, write_csv_header, error)) {
        std::cerr << "tandem-bench solve: " << error << (parsed ? "" : " (see tandem-bench solve --help)")
                  << "\n";
        return 2;
    }

    const bool gpu = tandem::gpu_available();
    std::string gpu_note;  // empty: the GPU rows run
    if (!cusolver_compiled()) gpu_note = "GPU rows skipped: no GPU backend in this build";
    else if (!gpu) gpu_note = "GPU rows skipped: no usable GPU (tandem::gpu_available() is false)";
    const bool gpu_rows = gpu_note.empty();
    if (args.sizes.empty()) args.sizes = default_solve_sizes(gpu);
    if (args.cpu_max_n < 0) args.cpu_max_n = default_cpu_max_n(gpu);
    const bool show_kind = args.kinds.size() > 1;

    std::string resolved = "?";
    try {
        resolved = tandem::backend_name(tandem::resolve_backend(tandem::Options{}));
    } catch (const std::exception& e) {
        resolved = std::string("? (") + e.what() + ")";
    }
    std::string kinds;
    for (const MatrixKind& kind : args.kinds) kinds += (kinds.empty() ? "" : ", ") + std::string(kind.name);
    std::cout << "tandem-bench solve   " << local_time_text() << "\n"
              << "command:   " << command_line << "\n"
              << "tandem:    sgesv, backend auto -> " << resolved << ", GPU updates "
              << update_precision_name(args.update_precision) << "\n"
              << "machine:   " << std::thread::hardware_concurrency() << " hardware threads, "
              << tandem::gpu_count() << " usable GPU(s)\n"
              << "timing:    median of " << args.repeats << " after a warm-up (>= 1 run, >= "
              << min_warmup_seconds << " s); LAPACK up to n = " << args.cpu_max_n << "; seed "
              << args.seed << "; matrices " << kinds << "\n";
    if (!gpu_rows) std::cout << gpu_note << "\n";
    std::cout << std::endl;

    tandem::Options tandem_options;
    tandem_options.update_precision = args.update_precision;
    std::vector<SolveCase> cases;
    std::string last_backend;
    for (const MatrixKind& kind : args.kinds) {
        for (const int n : args.sizes) {
            std::vector<float> a;
            try {
                a = make_test_matrix(kind.kind, n, args.seed);
            } catch (const std::bad_alloc&) {
                // Left empty: each of this size's cases records the failure below.
            }
            for (const int nrhs : args.nrhs) {
                SolveCase c;
                c.kind = kind.name;
                c.n = n;
                c.nrhs = nrhs;
                try {
                    if (a.empty()) throw std::bad_alloc();
                    const SolveBackwardError check(n, a.data());
                    const std::vector<float> b = right_hand_sides(kind, n, nrhs, args.seed);
                    Problem p(n, nrhs, args.repeats, tandem_options, a, b, check);
                    measure_tandem_host(p, c);
                    measure_tandem_refined(p, c, false);
                    if (gpu_rows) {
                        measure_tandem_gpu_memory(p, c);
                        measure_tandem_refined(p, c, true);
                        measure_cusolver(p, c);
                        measure_irs(p, c);
                    }
                    measure_lapack(p, c, args.cpu_max_n);
                } catch (const std::bad_alloc&) {
                    // The host copies themselves did not fit: one failure for the
                    // case, and the other sizes go on.
                    for (SolveRun& run : c.runs) run.note = "not run: out of host memory for A and B";
                    c.runs[tandem_host].status = RunStatus::failed;
                    c.runs[tandem_host].note = "failed: out of host memory for A, B and their copies";
                }
                print_progress(c, gpu_rows, show_kind, last_backend);
                if (csv.is_open()) write_csv_rows(csv, c, gpu_rows, args.update_precision);
                cases.push_back(std::move(c));
            }
        }
    }

    std::cout << "\n";
    print_table(std::cout, cases, gpu_rows, show_kind, gpu_note, args.update_precision);

    const int status = close_csv(csv, args.csv_path, "solve") ? 0 : 1;
    return std::max(status, print_verdict(cases, show_kind));
}

}  // namespace tandem_bench
