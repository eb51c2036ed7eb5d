#include "bench/plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace tandem_bench {
namespace {

struct Series {
    const char* title;
    double (*value)(const SizeResult&);
};

const Series all_series[] = {
    {"tandem", [](const SizeResult& r) { return ran(r.tandem) ? r.tandem.gflops : not_measured; }},
    {"LAPACK (CPU)", [](const SizeResult& r) { return ran(r.lapack) ? r.lapack.gflops : not_measured; }},
    {"cuSOLVER (on device)",
     [](const SizeResult& r) { return ran(r.cusolver) ? r.cusolver.gflops : not_measured; }},
    {"cuSOLVER + copies",
     [](const SizeResult& r) { return ran(r.cusolver) ? r.cusolver.gflops_with_transfer : not_measured; }},
};

// The shell runs the tools: quote paths so spaces and metacharacters stay literal.
std::string shell_quote(const std::string& text) {
    std::string quoted = "'";
    for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
}

// A double-quoted string literal for gnuplot or Python.
std::string string_literal(const std::string& text) {
    std::string quoted = "\"";
    for (const char c : text) {
        if (c == '"' || c == '\\') quoted += '\\';
        quoted += c;
    }
    return quoted + "\"";
}

bool command_succeeds(const std::string& command) {
    return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
}

std::string without_png_extension(const std::string& path) {
    const std::size_t dot = path.rfind('.');
    const std::size_t slash = path.rfind('/');
    if (dot != std::string::npos && (slash == std::string::npos || dot > slash)) return path.substr(0, dot);
    return path;
}

// Series with at least one point: gnuplot refuses a plot element with none.
std::vector<std::size_t> drawable_series(const std::vector<SizeResult>& results) {
    std::vector<std::size_t> drawable;
    for (std::size_t s = 0; s < std::size(all_series); ++s) {
        for (const SizeResult& r : results) {
            if (!std::isnan(all_series[s].value(r))) {
                drawable.push_back(s);
                break;
            }
        }
    }
    return drawable;
}

// A log y axis when the rates span more than a factor of 20 (LAPACK at small n
// beside cuSOLVER at large n), so the small ones are not flattened to the axis.
bool wants_log_y(const std::vector<SizeResult>& results, const std::vector<std::size_t>& drawable) {
    double low = 0.0, high = 0.0;
    for (const std::size_t s : drawable) {
        for (const SizeResult& r : results) {
            const double v = all_series[s].value(r);
            if (!(v > 0.0)) continue;
            low = low > 0.0 ? std::min(low, v) : v;
            high = std::max(high, v);
        }
    }
    return low > 0.0 && high / low > 20.0;
}

std::string gnuplot_script(const std::string& png, const std::string& data, const std::string& title,
                           const std::vector<std::size_t>& drawable, int min_n, int max_n,
                           bool log_y) {
    std::ostringstream gp;
    gp << "# Draws " << png << " from " << data << "; run: gnuplot <this file>\n"
       << "if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {\n"
       << "  set terminal pngcairo size 960,600 noenhanced font \"sans,11\"\n"
       << "} else {\n  set terminal png size 960,600 noenhanced\n}\n"
       << "set output " << string_literal(png) << "\n"
       << "set title " << string_literal(title) << "\n"
       << "set xlabel \"n\"\nset ylabel \"GFLOP/s (2/3 n^3 / time)\"\n"
       << "set logscale x 2\nset grid\nset key top left\nset datafile missing \"-\"\n"
       << (log_y ? "set logscale y 10\n" : "set yrange [0:*]\n")
       // A margin of a quarter octave each side, so the end points are not on
       // the frame (and a single size still has an x range).
       << "set xrange [" << min_n / 1.2 << ":" << max_n * 1.2 << "]\n"
       << "plot ";
    for (std::size_t k = 0; k < drawable.size(); ++k) {
        const std::size_t s = drawable[k];
        gp << (k ? ", \\\n     " : "") << string_literal(data) << " using 1:" << s + 2
           << (k == 0 ? ":xtic(1)" : "") << " with linespoints lw 2 pt 7 title "
           << string_literal(all_series[s].title);
    }
    gp << "\n";
    return gp.str();
}

std::string python_script(const std::string& png, const std::vector<SizeResult>& results,
                          const std::string& title, const std::vector<std::size_t>& drawable,
                          bool log_y) {
    std::ostringstream py;
    py << "# Draws " << png << "; run: python3 <this file>\n"
       << "import matplotlib\nmatplotlib.use(\"Agg\")\nimport matplotlib.pyplot as plt\n"
       << "nan = float(\"nan\")\n"
       << "n = [";
    for (const SizeResult& r : results) py << r.n << ",";
    py << "]\nseries = [\n";
    for (const std::size_t s : drawable) {
        py << "    (" << string_literal(all_series[s].title) << ", [";
        for (const SizeResult& r : results) {
            const double v = all_series[s].value(r);
            py << (std::isnan(v) ? std::string("nan") : std::to_string(v)) << ",";
        }
        py << "]),\n";
    }
    py << "]\n"
       << "fig, ax = plt.subplots(figsize=(9.6, 6.0), dpi=100)\n"
       << "for title, values in series:\n"
       << "    ax.plot(n, values, marker=\"o\", linewidth=2, label=title)\n"
       << "ax.set_xscale(\"log\", base=2)\nax.set_xticks(n)\nax.set_xticklabels([str(v) for v in n])\n"
       << "ax.set_xlabel(\"n\")\nax.set_ylabel(\"GFLOP/s (2/3 n^3 / time)\")\n"
       << (log_y ? "ax.set_yscale(\"log\")\n" : "ax.set_ylim(bottom=0)\n") << "ax.set_title(" << string_literal(title) << ")\n"
       << "ax.grid(True, alpha=0.4)\nax.legend(loc=\"upper left\")\n"
       << "fig.tight_layout()\nfig.savefig(" << string_literal(png) << ")\n";
    return py.str();
}

bool write_text(const std::string& path, const std::string& text, std::string& message) {
    std::ofstream out(path);
    out << text;
    out.close();
    if (!out) message = "failed: cannot write " + path;
    return static_cast<bool>(out);
}

}  // namespace

PlotOutcome write_plot(const std::string& png_path, const std::vector<SizeResult>& results,
                       const std::string& title, std::string& message) {
    const std::vector<std::size_t> drawable = drawable_series(results);
    if (drawable.empty()) {
        message = "skipped: nothing was measured";
        return PlotOutcome::skipped;
    }
    const std::string base = without_png_extension(png_path);
    const bool log_y = wants_log_y(results, drawable);
    int min_n = results.front().n, max_n = results.front().n;
    for (const SizeResult& r : results) {
        min_n = std::min(min_n, r.n);
        max_n = std::max(max_n, r.n);
    }

    // The data file serves anyone re-plotting; gnuplot reads it directly.
    std::ostringstream data;
    data << "# n";
    for (const Series& s : all_series) data << "\t\"" << s.title << "\"";
    data << "\t(GFLOP/s; - = not measured)\n";
    for (const SizeResult& r : results) {
        data << r.n;
        for (const Series& s : all_series) {
            const double v = s.value(r);
            data << '\t';
            if (std::isnan(v)) data << '-';
            else data << v;
        }
        data << '\n';
    }
    const std::string data_path = base + ".dat";
    if (!write_text(data_path, data.str(), message)) return PlotOutcome::failed;

    std::string script_path, command;
    if (command_succeeds("command -v gnuplot")) {
        script_path = base + ".gp";
        if (!write_text(script_path, gnuplot_script(png_path, data_path, title, drawable, min_n, max_n, log_y), message))
            return PlotOutcome::failed;
        command = "gnuplot " + shell_quote(script_path);
    } else if (command_succeeds("python3 -c 'import matplotlib'")) {
        script_path = base + ".py";
        if (!write_text(script_path, python_script(png_path, results, title, drawable, log_y), message))
            return PlotOutcome::failed;
        command = "python3 " + shell_quote(script_path);
    } else {
        message = "skipped: neither gnuplot nor python3 with matplotlib found (data in " + data_path + ")";
        return PlotOutcome::skipped;
    }
    const int status = std::system(command.c_str());
    if (status != 0) {
        message = "failed: '" + command + "' exited with status " + std::to_string(status);
        return PlotOutcome::failed;
    }
    message = png_path + " (data " + data_path + ", script " + script_path + ")";
    return PlotOutcome::written;
}

}  // namespace tandem_bench
