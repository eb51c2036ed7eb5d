#include "bench/lu_args.hpp"

#include <cerrno>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <utility>

namespace tandem_bench {
namespace {

// Whole-string integer in [low, high]; rejects "12abc", "", and overflow.
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

// An option that is 0 or 1 (`name` for the message).
bool parse_switch(const std::string& name, const std::string& value, bool& on, std::string& error) {
    long long number = 0;
    if (!parse_int(value, 0, 1, number)) {
        error = name + ": '" + value + "' is not 0 or 1";
        return false;
    }
    on = number == 1;
    return true;
}

// An option that names one of a few choices (`name` for the message).
template <class Choice>
bool parse_choice(const std::string& name, const std::string& value,
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
    error = name + ": '" + value + "' is not one of " + names;
    return false;
}

bool parse_sizes(const std::string& text, std::vector<int>& sizes, std::string& error) {
    sizes.clear();
    std::size_t begin = 0;
    while (begin <= text.size()) {
        const std::size_t comma = text.find(',', begin);
        const std::string item =
            text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
        long long n = 0;
        // 65536^2 floats is 16 GiB per copy: beyond that the sweep cannot be meant.
        if (!parse_int(item, 1, 65536, n)) {
            error = "--sizes: '" + item + "' is not a size in 1..65536 (expected e.g. 1024,2048)";
            return false;
        }
        sizes.push_back(static_cast<int>(n));
        if (comma == std::string::npos) break;
        begin = comma + 1;
    }
    return true;
}

bool parse_backend(const std::string& text, tandem::Backend& backend) {
    if (text == "auto") backend = tandem::Backend::automatic;
    else if (text == "cpu") backend = tandem::Backend::cpu;
    else if (text == "gpu") backend = tandem::Backend::gpu;
    else if (text == "host") backend = tandem::Backend::host;
    else return false;
    return true;
}

}  // namespace

std::vector<int> default_sizes(bool gpu) {
    if (gpu) return {2048, 4096, 8192, 12288, 16384};
    return {256, 512, 1024, 1536, 2048};
}

// Above these sizes LAPACK on the host would take many seconds per repeat and
// add nothing the smaller sizes do not already show.
int default_cpu_max_n(bool gpu) { return gpu ? 8192 : 2048; }

void print_lu_usage(std::ostream& os) {
    os << "usage: tandem-bench [lu] [options]\n"
          "\n"
          "Times tandem::sgetrf (LU with partial pivoting, single precision) over a sweep\n"
          "of square sizes n, side by side with LAPACK's sgetrf on the CPU and, when a GPU\n"
          "is present, cuSOLVER's cusolverDnSgetrf. Reports the median of the repeats after\n"
          "a warm-up (at least one run and 0.2 s), GFLOP/s (2/3 n^3) and an O(n^2) estimate\n"
          "of LAPACK's scaled residual ||P A - L U||_1 / (n ||A||_1 eps).\n"
          "\n"
          "options:\n"
          "  --sizes N1,N2,...    sizes to sweep (default: 2048,4096,8192,12288,16384 with a\n"
          "                       GPU, 256,512,1024,1536,2048 without)\n"
          "  --backend B          tandem backend: auto|cpu|gpu|host (default auto)\n"
          "  --nb NB              tandem panel width, 0 = chosen per step by the model (default 0)\n"
          "  --max-nb NB          the widest panel the model may choose (default 0 = 1024)\n"
          "  --lookahead L        tandem look-ahead depth 0|1 (default 1)\n"
          "  --panel P            CPU panel: auto|lapack|recursive (default auto = recursive)\n"
          "  --gemm G             GPU update SGEMM: auto|tandem|cublas (default auto = tuning table)\n"
          "  --device-panel D     how a GPU factors its panels: auto|recursive|cusolver\n"
          "                       (default auto = recursive wherever its leaves reach, up to\n"
          "                       65536 rows; panels of tandem's row-major copy wider than 128\n"
          "                       columns are transposed first)\n"
          "  --placement P        where panels are factored: auto|cpu|device (default auto = the\n"
          "                       measured model's choice per step)\n"
          "  --stream S           1: move the matrix while the steps run, 0: before\n"
          "                       and after them (default 1)\n"
          "  --peer P             several GPUs: 1: device-factored panels go GPU to GPU over\n"
          "                       the peer link where possible, 0: through host memory (default 1)\n"
          "  --matrix M           where tandem's matrix is: host (tandem::sgetrf, timed with\n"
          "                       the copies to the GPU and back) or gpu (tandem::sgetrf_gpu on\n"
          "                       a copy already in GPU memory, timed as cuSOLVER is) (default host)\n"
          "  --plan               print tandem's plan (panel widths and sites) for each size\n"
          "  --gpus G             GPUs (backend gpu) or emulated devices (backend host),\n"
          "                       0 = all GPUs / one host device (default 0)\n"
          "  --repeats R          timed repeats per size and implementation (default 3)\n"
          "  --cpu-max-n N        skip LAPACK on the CPU for n > N (default 8192 with a GPU,\n"
          "                       2048 without)\n"
          "  --seed S             seed of the random matrices, entries uniform in [-1,1]\n"
          "  --csv FILE           write the results as CSV\n"
          "  --plot FILE.png      plot GFLOP/s against n (gnuplot or python3+matplotlib)\n"
          "  --trace FILE.json    Chrome/Perfetto trace of tandem's last run at the largest n\n"
          "  -h, --help           this text\n"
          "\n"
          "Options take their value as the next argument or after '=' (--sizes=1024,2048).\n"
          "Exit status: 0 all ran and every residual <= 30, 1 a run failed or a residual\n"
          "exceeded 30, 2 bad arguments.\n";
}

bool parse_lu_args(const std::vector<std::string>& args, LuArgs& out, std::string& error) {
    out = LuArgs{};
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string name = args[i];
        std::string value;
        bool has_value = false;
        const std::size_t equals = name.find('=');
        if (name.rfind("--", 0) == 0 && equals != std::string::npos) {
            value = name.substr(equals + 1);
            name = name.substr(0, equals);
            has_value = true;
        }
        if (name == "-h" || name == "--help") {
            out.help = true;
            continue;
        }
        if (name == "--plan") {
            out.show_plan = true;
            continue;
        }
        // Every other option takes one value.
        static const char* const valued[] = {"--sizes", "--backend", "--nb",   "--max-nb", "--lookahead",
                                             "--gpus",  "--repeats", "--seed", "--cpu-max-n",
                                             "--csv",   "--plot",    "--trace",
                                             "--panel", "--gemm",    "--placement", "--device-panel",
                                             "--stream",  "--peer",   "--matrix"};
        bool known = false;
        for (const char* option : valued) known = known || name == option;
        if (!known) {
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

        long long number = 0;
        const long long int_max = std::numeric_limits<int>::max();
        if (name == "--sizes") {
            if (!parse_sizes(value, out.sizes, error)) return false;
        } else if (name == "--backend") {
            if (!parse_backend(value, out.options.backend)) {
                error = "--backend: '" + value + "' is not one of auto, cpu, gpu, host";
                return false;
            }
            out.backend_text = value;
        } else if (name == "--panel") {
            using tandem::PanelMethod;
            if (!parse_choice(name, value,
                              {{"auto", PanelMethod::automatic}, {"lapack", PanelMethod::lapack},
                               {"recursive", PanelMethod::recursive}},
                              out.options.panel, error))
                return false;
        } else if (name == "--gemm") {
            using tandem::GemmKernel;
            if (!parse_choice(name, value,
                              {{"auto", GemmKernel::automatic}, {"tandem", GemmKernel::tandem},
                               {"cublas", GemmKernel::cublas}},
                              out.options.gemm, error))
                return false;
        } else if (name == "--device-panel") {
            using tandem::DevicePanelMethod;
            if (!parse_choice(name, value,
                              {{"auto", DevicePanelMethod::automatic},
                               {"recursive", DevicePanelMethod::recursive},
                               {"cusolver", DevicePanelMethod::cusolver}},
                              out.options.device_panel, error))
                return false;
        } else if (name == "--placement") {
            using tandem::PanelPlacement;
            if (!parse_choice(name, value,
                              {{"auto", PanelPlacement::automatic}, {"cpu", PanelPlacement::cpu},
                               {"device", PanelPlacement::device}},
                              out.options.placement, error))
                return false;
        } else if (name == "--stream") {
            if (!parse_switch(name, value, out.options.stream_matrix, error)) return false;
        } else if (name == "--matrix") {
            if (value != "host" && value != "gpu") {
                error = "--matrix: '" + value + "' is not one of host, gpu";
                return false;
            }
            out.matrix_on_gpu = value == "gpu";
        } else if (name == "--peer") {
            if (!parse_switch(name, value, out.options.peer_copies, error)) return false;
        } else if (name == "--nb") {
            if (!parse_int(value, 0, 65536, number)) {
                error = "--nb: '" + value + "' is not a block size in 0..65536 (0 = automatic)";
                return false;
            }
            out.options.block_size = static_cast<int>(number);
        } else if (name == "--max-nb") {
            if (!parse_int(value, 0, 65536, number)) {
                error = "--max-nb: '" + value + "' is not a block size in 0..65536 (0 = the planner's)";
                return false;
            }
            out.options.max_block_size = static_cast<int>(number);
        } else if (name == "--lookahead") {
            bool on = false;
            if (!parse_switch(name, value, on, error)) return false;
            out.options.lookahead = on ? 1 : 0;
        } else if (name == "--gpus") {
            if (!parse_int(value, 0, 1024, number)) {
                error = "--gpus: '" + value + "' is not a device count in 0..1024 (0 = all)";
                return false;
            }
            out.options.num_devices = static_cast<int>(number);
        } else if (name == "--repeats") {
            if (!parse_int(value, 1, 1000, number)) {
                error = "--repeats: '" + value + "' is not a count in 1..1000";
                return false;
            }
            out.repeats = static_cast<int>(number);
        } else if (name == "--cpu-max-n") {
            if (!parse_int(value, 0, int_max, number)) {
                error = "--cpu-max-n: '" + value + "' is not a size >= 0";
                return false;
            }
            out.cpu_max_n = static_cast<int>(number);
        } else if (name == "--seed") {
            if (!parse_int(value, 0, std::numeric_limits<long long>::max(), number)) {
                error = "--seed: '" + value + "' is not a non-negative integer";
                return false;
            }
            out.seed = static_cast<std::uint64_t>(number);
        } else if (value.empty()) {
            error = name + " needs a file name";
            return false;
        } else if (name == "--csv") {
            out.csv_path = value;
        } else if (name == "--plot") {
            out.plot_path = value;
        } else if (name == "--trace") {
            out.trace_path = value;
        }
    }
    return true;
}

}  // namespace tandem_bench
