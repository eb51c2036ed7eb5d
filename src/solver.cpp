#include "src/solver.hpp"

#include <algorithm>

#include "cpu/lapack_path.hpp"
#include "scheduler/blocking_plan.hpp"

namespace tandem::detail {

Solver::Solver(const Options& options) : options_(options), choice_(choose_backend(options)) {}

Solver::~Solver() = default;

int Solver::factor_on_cpu(int64_t m, int64_t n, float* a, int64_t lda, int* ipiv,
                          Report& report) {
    report.backend = Backend::cpu;
    report.device = lapack_name();
    return lapack_getrf(static_cast<int>(m), static_cast<int>(n), a, static_cast<int>(lda), ipiv);
}

int Solver::factor(int64_t m, int64_t n, float* a, int64_t lda, int* ipiv, Report& report) {
    report.message = choice_.note;
    factors_on_device_ = false;
    if (choice_.backend == Backend::cpu || m == 0 || n == 0)
        return factor_on_cpu(m, n, a, lda, ipiv, report);

    HybridSettings settings;
    settings.block_size = options_.block_size > 0
                              ? options_.block_size
                              : default_block_size(m, n, choice_.backend == Backend::gpu);
    settings.lookahead = options_.lookahead;
    settings.inverse_threshold = options_.inverse_threshold;
    settings.panel = options_.panel;
    try {
        if (!lease_) lease_ = std::make_unique<DeviceLease>(choice_);
        const std::vector<Device*>& devices = lease_->devices();
        hybrid_ = std::make_unique<HybridLU>(devices, settings);
        report.backend = choice_.backend;
        report.device = devices[0]->name();
        if (devices.size() > 1) report.device += " (+" + std::to_string(devices.size() - 1) + ")";
        const int info = hybrid_->factor(m, n, a, lda, ipiv, report);
        factors_on_device_ = m == n && devices.size() == 1;
        return info;
    } catch (const Error& e) {
        // A matrix too large for the GPU may still be factored on the CPU when
        // the caller left the choice to tandem. Nothing was written to a yet.
        const bool may_fall_back = e.code() == TANDEM_ERROR_OUT_OF_MEMORY &&
                                   options_.backend == Backend::automatic &&
                                   options_.allow_cpu_fallback;
        if (!may_fall_back) throw;
        hybrid_.reset();
        lease_.reset();
        const int info = factor_on_cpu(m, n, a, lda, ipiv, report);
        report.message = std::string("CPU fallback: ") + e.what();
        return info;
    }
}

void Solver::solve(char trans, int64_t n, int64_t nrhs, const float* a, int64_t lda,
                   const int* ipiv, float* b, int64_t ldb, Report& report) {
    const char op = (trans == 'N' || trans == 'n') ? 'N' : 'T';
    if (n == 0 || nrhs == 0) return;
    if (factors_on_device_) {
        hybrid_->solve(op, nrhs, b, ldb);
        return;
    }
    // Factors given on the host: moving n^2 floats to a GPU pays only for many
    // right-hand sides, so automatic keeps few of them on the CPU.
    const bool on_device = choice_.backend != Backend::cpu &&
                           (options_.backend != Backend::automatic ||
                            nrhs >= kMinRhsForDeviceSolve);
    if (!on_device) {
        report.backend = Backend::cpu;
        report.device = lapack_name();
        lapack_getrs(op, static_cast<int>(n), static_cast<int>(nrhs), a, static_cast<int>(lda),
                     ipiv, b, static_cast<int>(ldb));
        return;
    }
    if (!lease_) lease_ = std::make_unique<DeviceLease>(choice_);
    Device& device = *lease_->devices()[0];
    report.backend = choice_.backend;
    report.device = device.name();
    device.allocate(n, n, 1);
    device.upload(Queue::transfer, a, lda, 0, 0, n, n);
    device.synchronize();
    device.solve(op, n, nrhs, ipiv, b, ldb);
}

double getrf_flops(int64_t m, int64_t n) {
    const double big = static_cast<double>(std::max(m, n));
    const double small = static_cast<double>(std::min(m, n));
    return big * small * small - small * small * small / 3.0;
}

double getrs_flops(int64_t n, int64_t nrhs) {
    return 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(nrhs);
}

}  // namespace tandem::detail
