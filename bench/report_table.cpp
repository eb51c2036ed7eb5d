#include "bench/report_table.hpp"

#include <algorithm>
#include <fstream>
#include <utility>

#include "bench/option_parsing.hpp"
#include "bench/text_table.hpp"

namespace tandem_bench {
namespace {

// The GFLOP/s cell: the number, or what happened instead.
std::string rate_cell(const Measurement& m, double gflops) {
    switch (m.status) {
        case RunStatus::ran: return format_number("%.1f", gflops);
        case RunStatus::skipped: return m.note;
        case RunStatus::failed: return "failed";
        case RunStatus::unavailable: return "-";
    }
    return "-";
}

std::string residual_cell(const Measurement& m) {
    return ran(m) ? format_number("%.3g", m.residual) : "-";
}

std::string ratio_cell(const Measurement& numerator, const Measurement& denominator) {
    if (!ran(numerator) || !ran(denominator)) return "-";
    return format_number("%.2fx", numerator.gflops / denominator.gflops);
}

double hidden_share(const TandemDetails& d) {
    return d.panel_seconds > 0.0 ? d.panel_hidden_seconds / d.panel_seconds : not_measured;
}

std::string status_text(const Measurement& m) {
    return m.status == RunStatus::ran ? "ran" : m.note.empty() ? "not run" : m.note;
}

// Whether any size asked for cusolverMg.
bool shows_cusolver_mg(const std::vector<SizeResult>& results) {
    return std::any_of(results.begin(), results.end(), cusolver_mg_asked);
}

}  // namespace

void print_table(std::ostream& os, const std::vector<SizeResult>& results, bool show_cusolver,
                 const std::string& cusolver_note, bool matrix_on_gpu,
                 tandem::UpdatePrecision update_precision) {
    std::vector<std::string> header = {"n", "tandem GF/s", "LAPACK GF/s"};
    if (show_cusolver) {
        header.insert(header.end(), {"cuSOLVER GF/s", "cuSOLVER+copy GF/s", "tandem/cuSOLVER",
                                     "tandem/(cuSOLVER+copy)"});
    }
    header.insert(header.end(), {"tandem/LAPACK", "tandem resid est", "LAPACK resid est"});
    if (show_cusolver) header.push_back("cuSOLVER resid est");
    const bool show_mg = shows_cusolver_mg(results);
    if (show_mg) header.insert(header.end(), {"cusolverMg GF/s", "tandem/cusolverMg", "cusolverMg resid est"});
    header.insert(header.end(), {"backend", "nb", "inv/trsm steps", "device panels", "panel hidden"});

    std::vector<std::vector<std::string>> rows;
    for (const SizeResult& r : results) {
        const TandemDetails& d = r.details;
        std::vector<std::string> row = {std::to_string(r.n), rate_cell(r.tandem, r.tandem.gflops),
                                        rate_cell(r.lapack, r.lapack.gflops)};
        if (show_cusolver) {
            row.insert(row.end(), {rate_cell(r.cusolver, r.cusolver.gflops),
                                   rate_cell(r.cusolver, r.cusolver.gflops_with_transfer),
                                   ratio_cell(r.tandem, r.cusolver),
                                   ran(r.tandem) && ran(r.cusolver)
                                       ? format_number("%.2fx",
                                                       r.tandem.gflops / r.cusolver.gflops_with_transfer)
                                       : "-"});
        }
        // On the cpu backend tandem is LAPACK's sgetrf: the ratio is run-to-run noise.
        const bool same_code = ran(r.tandem) && d.backend == "cpu";
        row.insert(row.end(), {ratio_cell(r.tandem, r.lapack) + (same_code ? " (same code)" : ""),
                               residual_cell(r.tandem), residual_cell(r.lapack)});
        if (show_cusolver) row.push_back(residual_cell(r.cusolver));
        if (show_mg)
            row.insert(row.end(), {rate_cell(r.cusolver_mg, r.cusolver_mg.gflops),
                                   ratio_cell(r.tandem, r.cusolver_mg), residual_cell(r.cusolver_mg)});
        const bool hybrid = ran(r.tandem) && d.steps > 0;
        row.insert(row.end(),
                   {ran(r.tandem) ? d.backend : "-", hybrid ? std::to_string(d.block_size) : "-",
                    hybrid ? std::to_string(d.inverse_steps) + "/" + std::to_string(d.trsm_steps) : "-",
                    hybrid ? std::to_string(d.device_panel_steps) + "/" + std::to_string(d.steps) : "-",
                    hybrid && d.panel_seconds > 0.0 ? format_number("%.0f%%", 100.0 * hidden_share(d))
                                                    : "-"});
        rows.push_back(std::move(row));
    }

    print_aligned_table(os, header, rows);

    os << "\nGF/s = 2/3 n^3 / median seconds. tandem: host wall clock around "
       << (matrix_on_gpu ? "tandem::sgetrf_gpu, the matrix\nalready in GPU memory (copied there before the clock starts, as for cuSOLVER).\n"
                         : "tandem::sgetrf, the matrix in\nhost memory.\n");
    if (show_cusolver) {
        os << "cuSOLVER: cusolverDnSgetrf alone on a device-resident matrix (CUDA events); cuSOLVER+copy:\n"
              "the same plus copying A to the device and A and ipiv back (host wall clock, pageable memory).\n";
    }
    if (show_mg) {
        os << "cusolverMg: cusolverMgGetrf on the same GPUs, the matrix already on them in 256-column\n"
              "tiles dealt round the GPUs (host wall clock around the call and the GPUs' synchronization).\n";
    }
    os << "tandem's trailing updates on a GPU: " << update_precision_name(update_precision)
       << update_precision_note(update_precision) << "\n";
    os << "(same code): tandem ran on its cpu backend, which is LAPACK's sgetrf: the ratio is noise.\n";
    os << "resid est = ||P A - L U||_1 / (n ||A||_1 eps), eps = 2^-24, with ||P A - L U||_1 estimated in\n"
          "O(n^2) by Hager/Higham's method (as LAPACK's slacn2): a lower bound, usually within 3x; threshold 30.\n"
          "panel hidden = Report.panel_hidden_seconds / panel_seconds (CPU panel time overlapped by device work).\n";
    if (!show_cusolver) os << cusolver_note << "\n";
    // tandem's own remarks (e.g. why it fell back to the CPU), each once with its sizes.
    std::vector<std::pair<std::string, std::string>> remarks;  // message, sizes
    for (const SizeResult& r : results) {
        if (r.details.message.empty()) continue;
        auto same = std::find_if(remarks.begin(), remarks.end(),
                                 [&](const auto& remark) { return remark.first == r.details.message; });
        if (same == remarks.end()) remarks.emplace_back(r.details.message, std::to_string(r.n));
        else same->second += ", " + std::to_string(r.n);
    }
    for (const auto& [message, sizes] : remarks) os << "tandem says (n = " << sizes << "): " << message << "\n";
    for (const SizeResult& r : results) {
        if (r.tandem.status == RunStatus::failed) os << "n = " << r.n << ": tandem " << r.tandem.note << "\n";
        if (r.lapack.status == RunStatus::failed) os << "n = " << r.n << ": LAPACK " << r.lapack.note << "\n";
        if (r.cusolver.status == RunStatus::failed) os << "n = " << r.n << ": cuSOLVER " << r.cusolver.note << "\n";
        if (r.cusolver_mg.status == RunStatus::failed)
            os << "n = " << r.n << ": cusolverMg " << r.cusolver_mg.note << "\n";
    }
    os << "\n";
}

bool write_csv(const std::string& path, const std::vector<SizeResult>& results,
               tandem::UpdatePrecision update_precision, std::string& error) {
    std::ofstream out(path);
    if (!out) {
        error = "cannot open " + path + " for writing";
        return false;
    }
    out << "n,tandem_status,tandem_seconds,tandem_gflops,tandem_residual_est,tandem_backend,"
           "tandem_device,block_size,steps,inverse_steps,trsm_steps,panel_seconds,"
           "panel_hidden_seconds,panel_hidden_share,lapack_status,lapack_seconds,lapack_gflops,"
           "lapack_residual_est,cusolver_status,cusolver_seconds,cusolver_gflops,"
           "cusolver_with_transfer_seconds,cusolver_with_transfer_gflops,cusolver_residual_est,"
           "tandem_over_cusolver,tandem_over_cusolver_with_transfer,tandem_over_lapack,"
           "device_panel_steps,tandem_update_precision,model_predicted_seconds,"
           "tandem_over_model,cusolvermg_status,cusolvermg_seconds,cusolvermg_gflops,"
           "cusolvermg_residual_est,tandem_over_cusolvermg\n";
    for (const SizeResult& r : results) {
        const TandemDetails& d = r.details;
        const bool tandem_ran = ran(r.tandem);
        auto ratio = [&](const Measurement& base, double base_gflops) {
            return tandem_ran && ran(base) ? csv_number(r.tandem.gflops / base_gflops, "%.4f") : "";
        };
        out << r.n << ',' << csv_text(status_text(r.tandem)) << ',' << csv_number(r.tandem.seconds)
            << ',' << csv_number(r.tandem.gflops) << ',' << csv_number(r.tandem.residual) << ','
            << csv_text(d.backend) << ',' << csv_text(d.device) << ',';
        if (tandem_ran) {
            out << d.block_size << ',' << d.steps << ',' << d.inverse_steps << ',' << d.trsm_steps
                << ',' << csv_number(d.panel_seconds) << ',' << csv_number(d.panel_hidden_seconds)
                << ',' << csv_number(hidden_share(d), "%.4f") << ',';
        } else {
            out << ",,,,,,,";
        }
        out << csv_text(status_text(r.lapack)) << ',' << csv_number(r.lapack.seconds) << ','
            << csv_number(r.lapack.gflops) << ',' << csv_number(r.lapack.residual) << ','
            << csv_text(status_text(r.cusolver)) << ',' << csv_number(r.cusolver.seconds) << ','
            << csv_number(r.cusolver.gflops) << ',' << csv_number(r.cusolver.seconds_with_transfer)
            << ',' << csv_number(r.cusolver.gflops_with_transfer) << ','
            << csv_number(r.cusolver.residual) << ',' << ratio(r.cusolver, r.cusolver.gflops) << ','
            << ratio(r.cusolver, r.cusolver.gflops_with_transfer) << ','
            << ratio(r.lapack, r.lapack.gflops) << ','
            << (tandem_ran ? std::to_string(d.device_panel_steps) : std::string()) << ','
            << csv_text(update_precision_name(update_precision)) << ',';
        if (tandem_ran && d.predicted_seconds > 0.0)
            out << csv_number(d.predicted_seconds) << ','
                << csv_number(r.tandem.seconds / d.predicted_seconds, "%.4f") << ',';
        else
            out << ",,";
        out << csv_text(status_text(r.cusolver_mg)) << ',' << csv_number(r.cusolver_mg.seconds) << ','
            << csv_number(r.cusolver_mg.gflops) << ',' << csv_number(r.cusolver_mg.residual) << ','
            << ratio(r.cusolver_mg, r.cusolver_mg.gflops) << '\n';
    }
    out.close();
    if (!out) {
        error = "error writing " + path;
        return false;
    }
    return true;
}

}  // namespace tandem_bench
