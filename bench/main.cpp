// tandem-bench: performance measurements of tandem against its baselines.
// The first word selects the mode; each mode parses its own options.
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "bench/lu_args.hpp"
#include "bench/lu_sweep.hpp"

namespace {

struct Mode {
    const char* name;
    const char* summary;
    int (*run)(const std::vector<std::string>& args, const std::string& command_line);
};

// Later modes (gemm kernels, --tune of the block sizes, --plan of a blocking
// plan) are one more row here and a run function of their own.
const Mode modes[] = {
    {"lu", "sweep n: tandem sgetrf vs LAPACK (CPU) vs cuSOLVER (GPU) [default]",
     tandem_bench::run_lu_mode},
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
