// tandem-bench: performance measurements of tandem against its baselines.
// The first word selects the mode; each mode parses its own options.
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "bench/accuracy_bench.hpp"
#include "bench/first_call.hpp"
#include "bench/gemm_bench.hpp"
#include "bench/lu_args.hpp"
#include "bench/lu_sweep.hpp"
#include "bench/panel_bench.hpp"
#include "bench/solve_bench.hpp"

namespace {

struct Mode {
    const char* name;
    const char* summary;
    int (*run)(const std::vector<std::string>& args, const std::string& command_line);
};

// The panel mode takes main()-style arguments (argv[0] = the mode's name).
int run_panel_mode(const std::vector<std::string>& args, const std::string&) {
    std::vector<std::string> words{"panel"};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& word : words) argv.push_back(word.data());
    return tandem_bench::run_panel_bench(static_cast<int>(argv.size()), argv.data());
}

// `tandem-bench --tune` is the gemm mode's autotuner.
int run_tune_mode(const std::vector<std::string>& args, const std::string& command_line) {
    std::vector<std::string> with_tune{"--tune"};
    with_tune.insert(with_tune.end(), args.begin(), args.end());
    return tandem_bench::run_gemm_mode(with_tune, command_line);
}

// `tandem-bench plan` (or --plan first): tandem's plan for each size, nothing timed.
int run_plan_mode(const std::vector<std::string>& args, const std::string&) {
    tandem_bench::LuArgs parsed;
    std::string error;
    if (!tandem_bench::parse_lu_args(args, parsed, error)) {
        std::cerr << "tandem-bench plan: " << error << "\n";
        return 2;
    }
    if (parsed.help) {
        std::cout << "usage: tandem-bench plan [--sizes ...] [--backend B] [--gpus G] [--nb NB]\n"
                     "                         [--placement P] [--panel P]\n"
                     "Prints the plan tandem::sgetrf would follow at each size: panel widths, where\n"
                     "each panel is factored and the model's predicted step time (on a GPU, from the\n"
                     "machine's measured performance model, calibrated now if none is cached).\n";
        return 0;
    }
    const std::vector<int> sizes =
        parsed.sizes.empty() ? tandem_bench::default_sizes(tandem::gpu_available()) : parsed.sizes;
    for (int n : sizes) {
        std::cout << "n = " << n << ": " << tandem::describe_plan(n, n, parsed.options) << "\n";
    }
    return 0;
}

const Mode modes[] = {
    {"lu", "sweep n: tandem sgetrf vs LAPACK (CPU) vs cuSOLVER (GPU) [default]",
     tandem_bench::run_lu_mode},
    {"gemm", "tandem's SGEMM kernels vs cuBLAS on the LU shapes; --tune runs the autotuner",
     tandem_bench::run_gemm_mode},
    {"panel", "CPU panel factorization: tandem's recursive panel vs LAPACK sgetrf",
     run_panel_mode},
    {"plan", "tandem's plan per size (panel widths and sites); --plan is the same", run_plan_mode},
    {"first-call", "the first sgesv of a process against the CUDA context and a warm call",
     tandem_bench::run_first_call_mode},
    {"solve",
     "sweep n and nrhs: tandem sgesv (host and GPU memory) vs cuSOLVER getrf+getrs and its IRS "
     "solvers vs LAPACK sgesv",
     tandem_bench::run_solve_mode},
    {"accuracy",
     "per matrix kind, n and seed: tandem sgesv's residual, backward error and time with the "
     "GPU's updates in fp32 and tf32x3",
     tandem_bench::run_accuracy_mode},
};

void print_usage(std::ostream& os) {
    os << "usage: tandem-bench [MODE] [options]   (tandem-bench MODE --help for the mode's options)\n\n"
          "modes:\n";
    for (const Mode& mode : modes) os << "  " << mode.name << "    " << mode.summary << "\n";
    os << "\n";
    tandem_bench::print_lu_usage(os);
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    std::string command_line = "tandem-bench";
    for (const std::string& arg : args) command_line += " " + arg;

    // Options start with '-'; anything else in first place names the mode.
    std::string mode_name = "lu";
    if (!args.empty() && !args[0].empty() && args[0][0] != '-') {
        mode_name = args[0];
        args.erase(args.begin());
    } else if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
        print_usage(std::cout);
        return 0;
    } else if (!args.empty() && args[0] == "--plan") {
        mode_name = "plan";
        args.erase(args.begin());
    } else if (!args.empty() && args[0] == "--tune") {
        args.erase(args.begin());
        try {
            return run_tune_mode(args, command_line);
        } catch (const std::exception& error) {
            std::cerr << "tandem-bench: " << error.what() << "\n";
            return 1;
        }
    }
    for (const Mode& mode : modes) {
        if (mode_name == mode.name) {
            try {
                return mode.run(args, command_line);
            } catch (const std::exception& error) {
                std::cerr << "tandem-bench: " << error.what() << "\n";
                return 1;
            }
        }
    }
    std::cerr << "tandem-bench: unknown mode '" << mode_name << "'; modes:";
    for (const Mode& mode : modes) std::cerr << " " << mode.name;
    std::cerr << " (see tandem-bench --help)\n";
    return 2;
}
