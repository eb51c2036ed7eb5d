#include "bench/gemm_bench.hpp"

#include "bench/gemm_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

#if TANDEM_HAVE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "gpu/cuda_check.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/kernel_timer.hpp"
#include "gpu/matrix_samples.hpp"
#include "gpu/sgemm_dispatch.hpp"
#include "gpu/sgemm_tuner.hpp"
#include "gpu/sgemm_tuning_cache.hpp"
#include "gpu/sgemm_variants.hpp"
#endif

namespace tandem_bench {
namespace {

struct GemmOptions {
    std::string shapes = "all";
    int repeats = 5;
    std::vector<std::string> variants;  // empty: all
    std::string csv_path;
    std::string cache_dir;  // set to the library's default before parsing (CUDA builds)
    bool tune = false;
    long long tune_max_size = 0;  // 0: no limit
    bool help = false;
};

// "MxNxK[,MxNxK...]": shapes named on the command line (e.g. one shape to profile).
bool parse_custom_shapes(const std::string& text, std::vector<GemmShape>* shapes) {
    std::stringstream list(text);
    int count = 0;
    for (std::string item; std::getline(list, item, ',');) {
        long long m = -1, n = -1, k = -1;
        char x1 = 0, x2 = 0, rest = 0;
        if (std::sscanf(item.c_str(), "%lld%c%lld%c%lld%c", &m, &x1, &n, &x2, &k, &rest) != 5 ||
            x1 != 'x' || x2 != 'x' || m <= 0 || n <= 0 || k <= 0)
            return false;
        if (shapes) shapes->push_back({"custom", m, n, k});
        ++count;
    }
    return count > 0;
}

bool parse_gemm_options(const std::vector<std::string>& args, GemmOptions& o, std::string& error) {
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&](std::string& out) {
            if (i + 1 >= args.size()) return error = a + " needs a value", false;
            return out = args[++i], true;
        };
        std::string v;
        if (a == "--help" || a == "-h") {
            o.help = true;
        } else if (a == "--tune") {
            o.tune = true;
        } else if (a == "--shapes") {
            if (!value(o.shapes)) return false;
            if (o.shapes != "lu" && o.shapes != "square" && o.shapes != "skinny" && o.shapes != "all" &&
                !parse_custom_shapes(o.shapes, nullptr))
                return error = "--shapes takes lu, square, skinny, all or a list MxNxK[,MxNxK...]", false;
        } else if (a == "--repeats" || a == "--tune-max-size") {
            if (!value(v)) return false;
            const long long n = std::atoll(v.c_str());
            if (n <= 0) return error = a + " needs a positive number", false;
            if (a == "--repeats")
                o.repeats = int(n);
            else
                o.tune_max_size = n;
        } else if (a == "--variants") {
            if (!value(v)) return false;
            std::stringstream list(v);
            for (std::string name; std::getline(list, name, ',');)
                if (!name.empty()) o.variants.push_back(name);
        } else if (a == "--csv") {
            if (!value(o.csv_path)) return false;
        } else if (a == "--cache-dir") {
            if (!value(o.cache_dir)) return false;
        } else {
            return error = "unknown option " + a, false;
        }
    }
    return true;
}

#if TANDEM_HAVE_CUDA
using namespace tandem::gpu;

std::vector<GemmShape> bench_shapes(const std::string& which) {
    std::vector<GemmShape> shapes;
    if (parse_custom_shapes(which, &shapes)) return shapes;
    const bool all = which == "all";
    if (all || which == "lu") {
        for (long long n : {16384LL, 32768LL})
            for (long long k : {64LL, 128LL, 256LL, 512LL}) shapes.push_back({"lu", n - k, n - k, k});
        for (long long k : {64LL, 128LL, 256LL, 512LL}) {
            shapes.push_back({"lookahead", 32768 - k, k, k});
            shapes.push_back({"inverse", k, 32768 - k, k});
        }
    }
    if (all || which == "square")
        for (long long n : {4096LL, 8192LL, 16384LL}) shapes.push_back({"square", n, n, n});
    if (all || which == "skinny")
        // Small m is launch-bound (a few MB move in microseconds); the large ones
        // show the bandwidth the kernel sustains.
        for (long long m : {32768LL, 65536LL, 1048576LL, 4194304LL})
            for (long long kn : {16LL, 32LL, 64LL}) shapes.push_back({"skinny", m, kn, kn});
    return shapes;
}

struct BenchStream {
    cudaStream_t stream = nullptr;
    cublasHandle_t handle = nullptr;
    BenchStream() {
        TANDEM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        TANDEM_CUBLAS_CHECK(cublasCreate(&handle));
        TANDEM_CUBLAS_CHECK(cublasSetStream(handle, stream));
    }
    ~BenchStream() { (void)cublasDestroy(handle), (void)cudaStreamDestroy(stream); }
};

// Read + write bandwidth of a device-to-device cudaMemcpy of `bytes` (timed
// like the products: cold, without the launch latency).
double copy_bandwidth_gbs(KernelTimer& timer, cudaStream_t stream, size_t bytes, int repeats) {
    DeviceBuffer buffer(2 * bytes, "copy bandwidth buffer");
    char* const base = reinterpret_cast<char*>(buffer.floats());
    const double seconds = timer.median_seconds(
        [&] { TANDEM_CUDA_CHECK(cudaMemcpyAsync(base + bytes, base, bytes, cudaMemcpyDeviceToDevice, stream)); },
        repeats, true);
    return 2.0 * double(bytes) / seconds * 1e-9;
}

int run_tune(const GemmOptions& o) {
    SgemmTunerOptions options;
    options.repeats = o.repeats;
    for (const SgemmBucket& bucket : all_sgemm_buckets())
        if (o.tune_max_size == 0 || std::max(sgemm_bucket_shape(bucket).m, sgemm_bucket_shape(bucket).n) <= o.tune_max_size)
            options.buckets.push_back(bucket);
    options.progress = [](const std::string& line) { std::cout << "  " << line << std::endl; };
    std::cout << "tuning " << options.buckets.size() << " SGEMM buckets (C -= A B, median of "
              << o.repeats << ")\n";
    const SgemmTuningResult result = tune_sgemm(options);
    std::cout << "\n# SGEMM tuning table for " << result.key.gpu_name << ", " << result.key.sm_count
              << " SMs, CUDA " << result.key.cuda_version << "\n" << result.table.to_text();
    if (o.cache_dir.empty()) return 0;
    std::string error;
    const std::string path = sgemm_cache_path(o.cache_dir, result.key);
    if (!save_sgemm_tuning(path, result.key, result.table, error)) {
        std::cerr << "tandem-bench: " << error << "\n";
        return 1;
    }
    std::cout << "stored in " << path << "\n";
    return 0;
}

int run_bench(const GemmOptions& o) {
    int device = 0;
    cudaDeviceProp prop{};
    TANDEM_CUDA_CHECK(cudaGetDevice(&device));
    TANDEM_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    std::string source;
    const SgemmTuningTable table = load_sgemm_table_for_current_device(o.cache_dir, &source);
    std::cout << "device: " << prop.name << ", " << prop.multiProcessorCount << " SMs\n"
              << "dispatch table: " << source << "\n"
              << "C = -A B + C, row-major; median of " << o.repeats
              << " runs (CUDA events around the queued product, L2 evicted before each)\n\n";
    const std::vector<GemmShape> shapes = bench_shapes(o.shapes);
    const std::vector<std::string> names = o.variants.empty() ? sgemm_variant_names() : o.variants;
    for (const std::string& name : names)
        if (!find_sgemm_variant(name)) {
            std::cerr << "tandem-bench gemm: no variant '" << name << "'; the menu:";
            for (const std::string& known : sgemm_variant_names()) std::cerr << " " << known;
            std::cerr << "\n";
            return 2;
        }
    long long a_size = 1, b_size = 1, c_size = 1;
    for (const GemmShape& s : shapes)
        a_size = std::max(a_size, s.m * s.k), b_size = std::max(b_size, s.k * s.n), c_size = std::max(c_size, s.m * s.n);
    DeviceBuffer a(size_t(a_size) * 4, "A"), b(size_t(b_size) * 4, "B"), c(size_t(c_size) * 4, "C"),
        c_ref(size_t(c_size) * 4, "reference C");
    BenchStream bench;
    KernelTimer timer(bench.stream);
    const SgemmStream where{bench.stream, bench.handle};
    std::vector<GemmResult> results;
    std::vector<double> copy_gbs_of_size(shapes.size(), 0.0);  // skinny shapes only
    for (size_t i = 0; i < shapes.size(); ++i) {
        const GemmShape& s = shapes[i];
        SgemmArgs args;
        args.m = s.m, args.n = s.n, args.k = s.k, args.alpha = -1.0f, args.beta = 1.0f;
        args.a = a.floats(), args.lda = s.k, args.b = b.floats(), args.ldb = s.n, args.c = c.floats(), args.ldc = s.n;
        fill_uniform_rm(s.m, s.k, a.floats(), s.k, 11, bench.stream);
        fill_uniform_rm(s.k, s.n, b.floats(), s.n, 12, bench.stream);
        fill_uniform_rm(s.m, s.n, c_ref.floats(), s.n, 13, bench.stream);
        SgemmArgs ref_args = args;
        ref_args.c = c_ref.floats();
        run_sgemm_variant(kCublasVariant, ref_args, where);
        std::vector<std::string> runs = names;
        runs.push_back("dispatch");
        for (const std::string& name : runs) {
            const bool dispatch = name == "dispatch";
            if (!dispatch && !sgemm_variant_can_run(name, args, where)) continue;
            GemmResult r;
            r.shape = i;
            auto run = [&] {
                if (dispatch) r.variant = "dispatch:" + sgemm_rm(table, args, where);
                else run_sgemm_variant(name, args, where);
            };
            if (!dispatch) r.variant = name;
            fill_uniform_rm(s.m, s.n, c.floats(), s.n, 13, bench.stream);
            run();
            if (name != kCublasVariant)
                r.rel_err = max_difference_rm(s.m, s.n, c.floats(), s.n, c_ref.floats(), s.n, bench.stream).relative();
            r.seconds = timer.median_seconds(run, o.repeats, true);
            r.tflops = 2.0 * double(s.m) * s.n * s.k / r.seconds * 1e-12;
            r.gbs = moved_bytes(s) / r.seconds * 1e-9;
            char line[200], err[16] = "reference";
            if (r.rel_err >= 0.0 || std::isnan(r.rel_err)) std::snprintf(err, sizeof err, "%.1e", r.rel_err);
            std::snprintf(line, sizeof line, "%-9s %6lld x %6lld x %5lld  %-38s %8.3f ms %s  err %s\n",
                          s.set.c_str(), s.m, s.n, s.k, r.variant.c_str(), r.seconds * 1e3,
                          gemm_rate(s, r).c_str(), err);
            std::cout << line << std::flush;
            results.push_back(r);
        }
        if (s.set == "skinny") {
            // A copy of as many bytes: the same launch, ramp and tail as the product.
            copy_gbs_of_size[i] = copy_bandwidth_gbs(timer, bench.stream, size_t(moved_bytes(s) / 2), o.repeats);
            std::printf("%-9s %6lld x %6lld x %5lld  %-38s %8.3f ms %6.0f GB/s\n", s.set.c_str(), s.m, s.n, s.k,
                        "cudaMemcpy D2D of the same bytes", moved_bytes(s) / copy_gbs_of_size[i] * 1e-6,
                        copy_gbs_of_size[i]);
        }
    }
    double copy_gbs = 0.0;
    if (std::any_of(shapes.begin(), shapes.end(), [](const GemmShape& s) { return s.set == "skinny"; })) {
        // The device's copy bandwidth: the best of large copies (which size
        // copies best differs between GPUs) and of the per-shape ones above.
        std::cout << "\ncudaMemcpy D2D, read + write:";
        for (size_t mib : {64, 256, 512, 1024}) {
            const double gbs = copy_bandwidth_gbs(timer, bench.stream, mib << 20, o.repeats);
            std::cout << " " << mib << " MiB " << int(gbs) << " GB/s;";
            copy_gbs = std::max(copy_gbs, gbs);
        }
        for (double gbs : copy_gbs_of_size) copy_gbs = std::max(copy_gbs, gbs);
        std::cout << "\ndevice copy bandwidth (the best copy measured): " << int(copy_gbs) << " GB/s\n"
                  << "an empty kernel, timed the same way: " << timer.empty_kernel_seconds(o.repeats) * 1e6
                  << " us\n";
    }
    if (!timer.holds())
        std::cout << "\nnote: the stream hold timed out (a profiler?): later times include the launch latency\n";
    print_gemm_summary(std::cout, shapes, results, copy_gbs, copy_gbs_of_size);
    std::string error;
    if (!o.csv_path.empty() && !write_gemm_csv(o.csv_path, shapes, results, error)) {
        std::cerr << "tandem-bench: " << error << "\n";
        return 1;
    }
    return 0;
}
#endif  // TANDEM_HAVE_CUDA

}  // namespace

void print_gemm_usage(std::ostream& os) {
    os << "usage: tandem-bench gemm [--shapes lu|square|skinny|all|MxNxK,...] [--repeats N] [--variants A,B]\n"
          "                         [--csv FILE] [--cache-dir DIR] [--tune [--tune-max-size N]]\n"
          "  tandem's SGEMM variants and dispatcher vs cuBLAS (C -= A B, row-major), or with\n"
          "  --tune the SGEMM autotuner (table printed and stored in the cache directory,\n"
          "  default $XDG_CACHE_HOME/tandem or ~/.cache/tandem, where the library looks).\n"
          "  Each figure is the median of N runs timed by CUDA events around the product\n"
          "  alone: the stream is held until the product is queued (the host's launch\n"
          "  latency is left out) and L2 is evicted before each run (operands come from\n"
          "  DRAM). Tall-skinny shapes are also given as a share of the device's copy\n"
          "  bandwidth and of a copy moving as many bytes, timed the same way.\n";
}

int run_gemm_mode(const std::vector<std::string>& args, const std::string& command_line) {
    GemmOptions options;
#if TANDEM_HAVE_CUDA
    options.cache_dir = tandem::gpu::default_sgemm_cache_dir();
#endif
    std::string error;
    if (!parse_gemm_options(args, options, error)) {
        std::cerr << "tandem-bench gemm: " << error << "\n";
        print_gemm_usage(std::cerr);
        return 2;
    }
    if (options.help) {
        print_gemm_usage(std::cout);
        return 0;
    }
#if TANDEM_HAVE_CUDA
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        std::cerr << "tandem-bench gemm: no CUDA device\n";
        return 1;
    }
    std::cout << command_line << "\n";
    try {
        return options.tune ? run_tune(options) : run_bench(options);
    } catch (const std::exception& e) {
        std::cerr << "tandem-bench gemm: " << e.what() << "\n";
        return 1;
    }
#else
    (void)command_line;
    std::cerr << "tandem-bench gemm: this build has no CUDA backend\n";
    return 1;
#endif
}

int run_gemm_bench(int argc, char** argv) {
    std::vector<std::string> args(argv + std::min(argc, 1), argv + argc);
    std::string command_line = "tandem-bench gemm";
    for (const std::string& arg : args) command_line += " " + arg;
    return run_gemm_mode(args, command_line);
}

}  // namespace tandem_bench
