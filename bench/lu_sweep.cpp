#include "bench/lu_sweep.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>
#include <thread>
#include <tuple>

#include "bench/baselines.hpp"
#include "bench/device_matrix.hpp"
#include "bench/lu_args.hpp"
#include "bench/matrix_data.hpp"
#include "bench/option_parsing.hpp"
#include "bench/plot.hpp"
#include "bench/report_table.hpp"
#include "bench/results.hpp"
#include "bench/text_table.hpp"
#include "bench/timing.hpp"
#include "bench/trace.hpp"
#include "scheduler/cpu_panel.hpp"
#include "tandem/tandem.hpp"

namespace tandem_bench {
namespace {

// Fills a measurement from per-repeat seconds and the factors the last repeat left.
void finish_measurement(Measurement& m, int n, const std::vector<double>& seconds,
                        const LuResidualEstimator& check, const float* factors, const int* ipiv) {
    m.status = RunStatus::ran;
    const RepeatSummary times = summarize(seconds);
    m.seconds = times.median;
    m.fastest = times.fastest;
    m.slowest = times.slowest;
    m.gflops = lu_gflops(n, m.seconds);
    m.residual = check.estimate(factors, ipiv);
}

void mark_failed(Measurement& m, const std::string& what) {
    m.status = RunStatus::failed;
    m.note = "failed: " + what;
}

// Adds the report's CPU panels with tandem's recursive panel to `d`'s.
void add_cpu_panel_teams(const tandem::Report& report, TandemDetails& d) {
    for (const tandem::TimelineSpan& span : report.timeline) {
        if (span.team_threads <= 0) continue;
        const bool short_of_cores = span.least_thread_cpu_seconds < kShortOfCoresShare * span.team_seconds;
        d.cpu_panel_times.push_back({span.panel_rows, span.panel_columns, span.team_threads,
                                     span.team_seconds, short_of_cores, span.involuntary_switches});
    }
}

// Factors every shape of the timed CPU panels alone, as the factorization did
// (tandem::factor_panel with the same method and team, leading dimension n, on
// the bottom rows of the matrix's first columns), the median of 3 after a
// warm-up, and compares each timed panel with its shape's time.
void compare_cpu_panels_with_alone(int n, const std::vector<float>& original, const LuArgs& args,
                                   TandemDetails& d) {
    if (d.cpu_panel_times.empty()) return;
    std::map<std::tuple<long long, int, int>, double> alone;  // (rows, columns, threads) -> s
    for (const CpuPanelTime& p : d.cpu_panel_times) alone[{p.rows, p.columns, p.threads}] = 0.0;
    std::vector<float> panel;
    std::vector<int> ipiv;
    for (auto& [shape, seconds] : alone) {
        const auto [rows, columns, threads] = shape;
        if (rows <= 0 || columns <= 0 || rows > n || columns > n) continue;
        const std::size_t count = static_cast<std::size_t>(n) * columns;
        panel.resize(count);
        ipiv.resize(static_cast<std::size_t>(columns));
        std::vector<double> runs;
        for (int run = 0; run < 4; ++run) {  // run 0 warms the pages and the team
            std::memcpy(panel.data(), original.data(), count * sizeof(float));
            tandem::PanelTeamUsage usage;
            tandem::factor_panel(rows, columns, panel.data() + (n - rows), n, ipiv.data(),
                                 args.options.panel, threads, &usage);
            if (run > 0) runs.push_back(usage.seconds);
        }
        seconds = median(runs);
    }
    for (CpuPanelTime& p : d.cpu_panel_times) {
        const double base = alone[{p.rows, p.columns, p.threads}];
        if (base > 0.0) p.alone_ratio = p.seconds / base;
    }
}

// The timed runs' CPU panels: whether they kept their cores, and how each
// compares with its shape factored alone.
void print_cpu_panels(const std::vector<CpuPanelTime>& panels) {
    double seconds = 0.0;
    int short_of_cores = 0, over = 0, over_short = 0;
    long switches = 0;
    std::vector<double> ratios;
    const CpuPanelTime* worst = nullptr;
    for (const CpuPanelTime& p : panels) {
        seconds += p.seconds;
        short_of_cores += p.short_of_cores;
        switches += p.switches;
        if (std::isnan(p.alone_ratio)) continue;  // not compared
        ratios.push_back(p.alone_ratio);
        over += p.alone_ratio > kCpuPanelAloneLimit;
        over_short += p.alone_ratio > kCpuPanelAloneLimit && p.short_of_cores;
        if (worst == nullptr || p.alone_ratio > worst->alone_ratio) worst = &p;
    }
    char line[220];
    std::snprintf(line, sizeof line,
                  "  CPU panels of the timed runs: %zu, %.3g ms factoring; %d with a thread on a "
                  "core under %.0f%% of the time, %ld involuntary context switches\n",
                  panels.size(), 1e3 * seconds, short_of_cores, 100 * kShortOfCoresShare, switches);
    std::cout << line;
    if (worst == nullptr) return;
    std::snprintf(line, sizeof line,
                  "  each against its shape factored alone: median %.2fx, worst %.2fx (%lldx%d), "
                  "%d of %zu over %.1fx (%d of them short of cores)\n",
                  median(ratios), worst->alone_ratio, worst->rows, worst->columns, over,
                  ratios.size(), kCpuPanelAloneLimit, over_short);
    std::cout << line;
}

// Times tandem::sgetrf with the host wall clock around the call (it synchronizes
// before returning); the report of the last timed run goes to `last_report`,
// the timed runs' CPU panel teams to result.details.
void measure_tandem(int n, const std::vector<float>& original, std::vector<float>& work,
                    std::vector<int>& ipiv, const LuArgs& args, const LuResidualEstimator& check,
                    SizeResult& result, tandem::Report& last_report) {
    std::vector<double> seconds;
    try {
        std::unique_ptr<DeviceMatrix> on_gpu;
        if (args.matrix_on_gpu) on_gpu = std::make_unique<DeviceMatrix>(original.size());
        warm_up_then_time(args.repeats, [&](bool timed) {
            tandem::Report report;
            double start, stop;
            int info;
            if (on_gpu) {
                on_gpu->copy_from_host(original.data());
                start = wall_seconds();
                info = tandem::sgetrf_gpu(n, n, on_gpu->data(), n, ipiv.data(), args.options, &report);
                stop = wall_seconds();
            } else {
                std::memcpy(work.data(), original.data(), original.size() * sizeof(float));
                start = wall_seconds();
                info = tandem::sgetrf(n, n, work.data(), n, ipiv.data(), args.options, &report);
                stop = wall_seconds();
            }
            if (info != 0) {
                throw std::runtime_error(std::string(on_gpu ? "tandem::sgetrf_gpu" : "tandem::sgetrf") +
                                         " returned info = " + std::to_string(info) +
                                         (report.message.empty() ? "" : " (" + report.message + ")"));
            }
            if (timed) {
                seconds.push_back(stop - start);
                add_cpu_panel_teams(report, result.details);
            }
            last_report = std::move(report);
        });
        if (on_gpu) on_gpu->copy_to_host(work.data());
    } catch (const std::exception& error) {
        mark_failed(result.tandem, error.what());
        return;
    }
    finish_measurement(result.tandem, n, seconds, check, work.data(), ipiv.data());
    TandemDetails& d = result.details;
    d.backend = tandem::backend_name(last_report.backend);
    d.device = last_report.device;
    d.message = last_report.message;
    d.block_size = last_report.block_size;
    d.steps = last_report.steps;
    d.inverse_steps = last_report.inverse_steps;
    d.trsm_steps = last_report.trsm_steps;
    d.device_panel_steps = last_report.device_panel_steps;
    d.plan = last_report.plan;
    d.panel_seconds = last_report.panel_seconds;
    d.panel_hidden_seconds = last_report.panel_hidden_seconds;
    d.predicted_seconds = last_report.predicted_seconds;
}

void measure_lapack(int n, const std::vector<float>& original, std::vector<float>& work,
                    std::vector<int>& ipiv, int repeats, int cpu_max_n,
                    const LuResidualEstimator& check, Measurement& m) {
    if (n > cpu_max_n) {
        m.status = RunStatus::skipped;
        m.note = "skipped: n > cpu-max-n";
        return;
    }
    try {
        const std::vector<double> seconds =
            time_lapack_sgetrf(n, original.data(), work.data(), ipiv.data(), repeats);
        finish_measurement(m, n, seconds, check, work.data(), ipiv.data());
    } catch (const std::exception& error) {
        mark_failed(m, error.what());
    }
}

// A GPU baseline: unavailable with `unavailable_note` (no GPU backend or
// device), or where the library does not offer it; failed with its error.
template <class Measure>
void measure_gpu_baseline(const std::string& unavailable_note, Measurement& m, Measure&& measure) {
    if (!unavailable_note.empty()) {
        m.status = RunStatus::unavailable;
        m.note = unavailable_note;
        return;
    }
    try {
        measure();
    } catch (const BaselineUnsupported& error) {
        m.status = RunStatus::unavailable;
        m.note = error.what();
    } catch (const std::exception& error) {
        mark_failed(m, error.what());
    }
}

void measure_cusolver(int n, const std::vector<float>& original, std::vector<float>& work,
                      std::vector<int>& ipiv, int repeats, const std::string& unavailable_note,
                      const LuResidualEstimator& check, Measurement& m) {
    measure_gpu_baseline(unavailable_note, m, [&] {
        const CusolverTimes times =
            time_cusolver_sgetrf(n, original.data(), work.data(), ipiv.data(), repeats);
        finish_measurement(m, n, times.factor_seconds, check, work.data(), ipiv.data());
        m.seconds_with_transfer = median(times.with_transfer_seconds);
        m.gflops_with_transfer = lu_gflops(n, m.seconds_with_transfer);
    });
}

void measure_cusolver_mg(int n, const std::vector<float>& original, std::vector<float>& work,
                         std::vector<int>& ipiv, int gpus, int repeats,
                         const std::string& unavailable_note, const LuResidualEstimator& check,
                         Measurement& m) {
    if (gpus < 2) return;  // status unavailable, no note: not asked for
    measure_gpu_baseline(unavailable_note, m, [&] {
        const std::vector<double> seconds =
            time_cusolvermg_sgetrf(n, gpus, original.data(), work.data(), ipiv.data(), repeats);
        finish_measurement(m, n, seconds, check, work.data(), ipiv.data());
    });
}

std::string format_gflops(const Measurement& m) {
    if (!ran(m)) return m.status == RunStatus::failed ? "failed" : "-";
    char text[96];
    std::snprintf(text, sizeof text, "%.1f GF/s (%.3g s, runs %.3g-%.3g s, resid %.2g)", m.gflops,
                  m.seconds, m.fastest, m.slowest, m.residual);
    return text;
}

// The device is named only when it changes (it is long, and the same on most lines).
void print_progress(const SizeResult& r, bool show_cusolver, bool show_plan,
                    std::string& last_device) {
    std::cout << "n=" << r.n << ": tandem " << format_gflops(r.tandem);
    if (ran(r.tandem)) {
        const bool new_device = r.details.device != last_device && !r.details.device.empty();
        std::cout << " [" << r.details.backend << (new_device ? ", " + r.details.device : "") << "]";
        last_device = r.details.device;
    }
    std::cout << " | LAPACK " << (r.lapack.status == RunStatus::skipped ? r.lapack.note : format_gflops(r.lapack));
    if (show_cusolver) std::cout << " | cuSOLVER " << format_gflops(r.cusolver);
    if (cusolver_mg_asked(r))
        std::cout << " | cusolverMg "
                  << (r.cusolver_mg.status == RunStatus::unavailable ? r.cusolver_mg.note
                                                                     : format_gflops(r.cusolver_mg));
    std::cout << std::endl;  // flushed: the sweep can take minutes
    if (show_plan && !r.details.plan.empty()) std::cout << r.details.plan;
    if (show_plan && ran(r.tandem) && r.details.predicted_seconds > 0.0) {
        // The model's steps against the whole call: the difference is the model's
        // error plus what it leaves out (set-up, transfers to and from host memory).
        char line[160];
        std::snprintf(line, sizeof line,
                      "the model: %.3g ms for the steps; the call: %.3g ms (median), %.2fx\n",
                      1e3 * r.details.predicted_seconds, 1e3 * r.tandem.seconds,
                      r.tandem.seconds / r.details.predicted_seconds);
        std::cout << line;
    }
    if (ran(r.tandem) && !r.details.cpu_panel_times.empty())
        print_cpu_panels(r.details.cpu_panel_times);
    std::cout << std::flush;
}

}  // namespace

int run_lu_mode(const std::vector<std::string>& raw_args, const std::string& command_line) {
    LuArgs args;
    std::string error;
    if (!parse_lu_args(raw_args, args, error)) {
        std::cerr << "tandem-bench: " << error << " (see tandem-bench --help)\n";
        return 2;
    }
    if (args.help) {
        print_lu_usage(std::cout);
        return 0;
    }

    const bool gpu = tandem::gpu_available();
    if (args.matrix_on_gpu && !gpu) {
        std::cerr << "tandem-bench: --matrix gpu needs a usable GPU (tandem::gpu_available() is false)\n";
        return 2;
    }
    std::string path_error;
    if (!output_writable("--csv", args.csv_path, path_error) ||
        !output_writable("--plot", args.plot_path, path_error) ||
        !output_writable("--trace", args.trace_path, path_error)) {
        std::cerr << "tandem-bench: " << path_error << "\n";
        return 2;
    }
    if (args.sizes.empty()) args.sizes = default_sizes(gpu);
    if (args.cpu_max_n < 0) args.cpu_max_n = default_cpu_max_n(gpu);
    const int largest_n = *std::max_element(args.sizes.begin(), args.sizes.end());

    std::string cusolver_note;  // empty: cuSOLVER runs
    if (!cusolver_compiled()) cusolver_note = "cuSOLVER: no GPU backend";
    else if (!gpu) cusolver_note = "cuSOLVER: no GPU present";
    else if (!args.baselines) cusolver_note = "cuSOLVER: not timed (--baselines 0)";
    if (!args.baselines) args.cpu_max_n = 0;
    const bool show_cusolver = cusolver_note.empty();

    std::string resolved = "?";
    try {
        resolved = tandem::backend_name(tandem::resolve_backend(args.options));
    } catch (const std::exception& e) {
        resolved = std::string("? (") + e.what() + ")";
    }
    std::cout << "tandem-bench lu   " << local_time_text() << "\n"
              << "command:   " << command_line << "\n"
              << "tandem:    backend " << args.backend_text << " -> " << resolved
              << ", nb " << (args.options.block_size ? std::to_string(args.options.block_size) : "auto")
              << ", matrix in " << (args.matrix_on_gpu ? "GPU memory (sgetrf_gpu)" : "host memory (sgetrf)")
              << ", lookahead " << args.options.lookahead << ", devices "
              << (args.options.num_devices ? std::to_string(args.options.num_devices) : "default")
              << ", GPU updates " << update_precision_name(args.options.update_precision) << "\n"
              << "machine:   " << std::thread::hardware_concurrency() << " hardware threads, "
              << tandem::gpu_count() << " usable GPU(s)\n"
              << "timing:    median of " << args.repeats << " after a warm-up (>= 1 run, >= "
              << min_warmup_seconds << " s); LAPACK up to n = "
              << args.cpu_max_n << "; seed " << args.seed << "\n";
    if (!show_cusolver) std::cout << cusolver_note << "\n";
    std::cout << std::endl;

    std::vector<SizeResult> results;
    tandem::Report trace_report;
    bool have_trace = false;
    std::string last_device;
    for (const int n : args.sizes) {
        SizeResult result;
        result.n = n;
        try {
            const std::vector<float> original = random_matrix(n, args.seed);
            std::vector<float> work(original.size());
            std::vector<int> ipiv(static_cast<std::size_t>(n));
            const LuResidualEstimator check(n, original.data());

            tandem::Report last_report;
            measure_tandem(n, original, work, ipiv, args, check, result, last_report);
            try {
                compare_cpu_panels_with_alone(n, original, args, result.details);
            } catch (const std::exception& error) {  // the ratios stay unmeasured
                std::cerr << "tandem-bench: n = " << n << ": CPU panels alone: " << error.what() << "\n";
            }
            if (n == largest_n && ran(result.tandem)) {
                trace_report = std::move(last_report);
                have_trace = true;
            }
            measure_lapack(n, original, work, ipiv, args.repeats, args.cpu_max_n, check, result.lapack);
            measure_cusolver(n, original, work, ipiv, args.repeats, cusolver_note, check, result.cusolver);
            if (args.options.backend != tandem::Backend::host && args.options.backend != tandem::Backend::cpu)
                measure_cusolver_mg(n, original, work, ipiv, args.options.num_devices, args.repeats,
                                    cusolver_note, check, result.cusolver_mg);
        } catch (const std::bad_alloc&) {
            // The host copies themselves did not fit: record it and go on with other sizes.
            mark_failed(result.tandem, "out of host memory for the n x n copies");
        }
        print_progress(result, show_cusolver, args.show_plan, last_device);
        results.push_back(std::move(result));
    }

    std::cout << "\n";
    print_table(std::cout, results, show_cusolver, cusolver_note, args.matrix_on_gpu,
                args.options.update_precision);

    int status = 0;
    if (!args.csv_path.empty()) {
        if (write_csv(args.csv_path, results, args.options.update_precision, error)) {
            std::cout << "CSV:   " << args.csv_path << "\n";
        } else {
            std::cerr << "tandem-bench: " << error << "\n";
            status = 1;
        }
    }
    if (!args.plot_path.empty()) {
        const std::string title = "sgetrf, tandem backend " + args.backend_text + " -> " + resolved +
                                  ", GPU updates " + update_precision_name(args.options.update_precision);
        std::string message;
        const PlotOutcome outcome = write_plot(args.plot_path, results, title, message);
        std::cout << "plot:  " << message << "\n";
        if (outcome == PlotOutcome::failed) status = 1;
    }
    if (!args.trace_path.empty()) {
        if (!have_trace) {
            std::cout << "trace: not written: tandem did not run at n = " << largest_n << "\n";
        } else if (write_chrome_trace(args.trace_path, trace_report, largest_n, error)) {
            std::cout << "trace: " << args.trace_path << " (" << trace_report.timeline.size()
                      << " spans" << (trace_report.timeline.empty() ? "; backend " +
                          std::string(tandem::backend_name(trace_report.backend)) + " records no timeline" : "")
                      << "; open in https://ui.perfetto.dev or chrome://tracing)\n";
        } else {
            std::cerr << "tandem-bench: " << error << "\n";
            status = 1;
        }
    }

    // The verdict: every failure and every residual above LAPACK's threshold, by name.
    for (const SizeResult& r : results) {
        const std::pair<const char*, const Measurement*> runs[] = {
            {"tandem", &r.tandem}, {"LAPACK", &r.lapack}, {"cuSOLVER", &r.cusolver}};
        for (const auto& [name, m] : runs) {
            if (m->status == RunStatus::failed) {
                const std::string prefix = "failed: ";
                const std::string why = m->note.rfind(prefix, 0) == 0 ? m->note.substr(prefix.size()) : m->note;
                std::cout << "FAILED: " << name << " at n = " << r.n << ": " << why << "\n";
                status = 1;
            } else if (residual_too_large(*m)) {
                std::cout << "FAILED: " << name << " at n = " << r.n << ": residual estimate "
                          << m->residual << " > " << residual_threshold << "\n";
                status = 1;
            }
        }
    }
    if (status == 0) std::cout << "all runs passed (residual estimates <= " << residual_threshold << ")\n";
    return status;
}

}  // namespace tandem_bench
