#include "bench/first_call.hpp"

#include <iomanip>
#include <iostream>
#include <stdexcept>

#include "bench/matrix_data.hpp"
#include "bench/timing.hpp"
#include "tandem/tandem.hpp"

#ifdef TANDEM_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace tandem_bench {
namespace {

// Seconds to create the CUDA context (the runtime's first call that needs it);
// 0 without a GPU or without the CUDA backend.
double create_cuda_context() {
#ifdef TANDEM_HAVE_CUDA
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        (void)cudaGetLastError();
        return 0.0;
    }
    const double start = wall_seconds();
    const cudaError_t status = cudaFree(nullptr);
    if (status != cudaSuccess)
        throw std::runtime_error(std::string("cudaFree(0) failed: ") + cudaGetErrorString(status));
    return wall_seconds() - start;
#else
    return 0.0;
#endif
}

// Seconds of one tandem::sgesv (automatic backend, 1 right-hand side) on a
// fresh copy of `a`.
double time_sgesv(int n, const std::vector<float>& a, tandem::Report& report) {
    std::vector<float> lu = a, b(static_cast<size_t>(n), 1.0f);
    std::vector<int> ipiv(static_cast<size_t>(n));
    const double start = wall_seconds();
    const int info = tandem::sgesv(n, 1, lu.data(), n, ipiv.data(), b.data(), n, tandem::Options{},
                                   &report);
    const double seconds = wall_seconds() - start;
    if (info != 0) throw std::runtime_error("tandem::sgesv returned info " + std::to_string(info));
    return seconds;
}

}  // namespace

int run_first_call_mode(const std::vector<std::string>& args, const std::string&) {
    int n = 4096;
    for (size_t i = 0; i < args.size(); ++i) {
        if ((args[i] == "--size" || args[i] == "-n") && i + 1 < args.size()) {
            n = std::stoi(args[++i]);
        } else if (args[i] == "-h" || args[i] == "--help") {
            std::cout << "usage: tandem-bench first-call [--size N]   (default 4096)\n"
                         "Run as a process of its own: times the CUDA context's creation, then the\n"
                         "set-up a first call makes (tandem::describe_plan: the devices, the cached\n"
                         "model or its calibration, the plan), the process's first tandem::sgesv\n"
                         "(automatic backend, 1 right-hand side, n x n uniform in [-1,1]) and the\n"
                         "median of three more. The set-up and the first call's time over a warm\n"
                         "one are what tandem adds to the context.\n";
            return 0;
        } else {
            std::cerr << "tandem-bench first-call: unknown argument '" << args[i] << "'\n";
            return 2;
        }
    }
    if (n < 1 || n > 65536) {
        std::cerr << "tandem-bench first-call: --size must be in 1..65536\n";
        return 2;
    }
    const double context = create_cuda_context();
    const std::vector<float> a = random_matrix(n, 1);
    // The devices, the model and the plan, as a first call makes them.
    const double plan_start = wall_seconds();
    (void)tandem::describe_plan(n, n, tandem::Options{});
    const double setup = wall_seconds() - plan_start;
    tandem::Report first_report, report;
    const double first = time_sgesv(n, a, first_report);
    std::vector<double> warm;
    for (int r = 0; r < 3; ++r) warm.push_back(time_sgesv(n, a, report));
    const double steady = median(warm);
    const std::string plan = first_report.plan.substr(0, first_report.plan.find('\n'));
    std::cout << std::fixed << std::setprecision(1) << "n=" << n << ": CUDA context "
              << 1e3 * context << " ms; set-up (devices, model, plan) " << 1e3 * setup
              << " ms; first sgesv " << 1e3 * first << " ms, warm " << 1e3 * steady
              << " ms (median of 3): the first call's extra " << 1e3 * (setup + first - steady)
              << " ms [" << tandem::backend_name(first_report.backend)
              << ", " << first_report.device << (plan.empty() ? "" : ", " + plan) << "]\n";
    return 0;
}

}  // namespace tandem_bench
