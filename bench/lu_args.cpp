#include "bench/lu_args.hpp"

namespace tandem_bench {
namespace {

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
          "  --update-precision U\n"
          "                       arithmetic of the GPU's trailing updates A22 -= L21 U12: fp32\n"
          "                       (SGEMM) or tf32x3 (each operand split into two TF32 parts, three\n"
          "                       tensor-core products: close to FP32's accuracy, faster), or tf32,\n"
          "                       bf16 (one tensor-core product: rough factors, for sgesv_refined);\n"
          "                       no effect on the cpu backend (default fp32)\n"
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
          "  --plan               print tandem's plan (panel widths and sites) for each size,\n"
          "                       and the model's time for its steps against the call's\n"
          "  --gpus G             GPUs (backend gpu) or emulated devices (backend host),\n"
          "                       0 = all GPUs / one host device (default 0); from 2 GPUs,\n"
          "                       cusolverMg on the same GPUs is timed beside tandem\n"
          "  --repeats R          timed repeats per size and implementation (default 3)\n"
          "  --cpu-max-n N        skip LAPACK on the CPU for n > N (default 8192 with a GPU,\n"
          "                       2048 without)\n"
          "  --baselines B        0: tandem alone, for comparing tandem's own options (its\n"
          "                       ratios to the libraries need B = 1; LAPACK is skipped as\n"
          "                       with --cpu-max-n 0); 1: LAPACK, cuSOLVER and cusolverMg\n"
          "                       beside it (default 1)\n"
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
    // Every option but these flags takes one value.
    static const std::vector<std::string> flags = {"-h", "--help", "--plan"};
    static const std::vector<std::string> valued = with_sweep_options(
        {"--backend", "--nb", "--max-nb", "--lookahead", "--gpus", "--plot", "--trace", "--panel",
         "--gemm", "--update-precision", "--placement", "--device-panel", "--stream", "--peer",
         "--matrix", "--baselines"});
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string name, value;
        if (!next_option(args, i, flags, valued, name, value, error)) return false;
        if (name == "-h" || name == "--help") {
            out.help = true;
            continue;
        }
        if (name == "--plan") {
            out.show_plan = true;
            continue;
        }
        if (is_sweep_option(name)) {
            if (!parse_sweep_option(name, value, out, error)) return false;
            continue;
        }
        if (name == "--backend") {
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
        } else if (name == "--update-precision") {
            if (!parse_update_precision(name, value, out.options.update_precision, error))
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
        } else if (name == "--baselines") {
            if (!parse_switch(name, value, out.baselines, error)) return false;
        } else if (name == "--peer") {
            if (!parse_switch(name, value, out.options.peer_copies, error)) return false;
        } else if (name == "--nb") {
            if (!parse_int_option(name, value, 0, 65536, "a block size in 0..65536 (0 = automatic)",
                                  out.options.block_size, error))
                return false;
        } else if (name == "--max-nb") {
            if (!parse_int_option(name, value, 0, 65536,
                                  "a block size in 0..65536 (0 = the planner's)",
                                  out.options.max_block_size, error))
                return false;
        } else if (name == "--lookahead") {
            bool on = false;
            if (!parse_switch(name, value, on, error)) return false;
            out.options.lookahead = on ? 1 : 0;
        } else if (name == "--gpus") {
            if (!parse_int_option(name, value, 0, 1024, "a device count in 0..1024 (0 = all)",
                                  out.options.num_devices, error))
                return false;
        } else if (value.empty()) {
            error = name + " needs a file name";
            return false;
        } else if (name == "--plot") {
            out.plot_path = value;
        } else if (name == "--trace") {
            out.trace_path = value;
        }
    }
    return true;
}

}  // namespace tandem_bench
