#include "src/refined_solve.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/iterative_refinement.hpp"

namespace tandem::detail {
namespace {

// A (in the device's memory) and the factors of its lower-precision LU there.
class DeviceSystem final : public RefinementSystem {
public:
    DeviceSystem(Solver& solver, Device& device, int64_t n, const float* a, int64_t lda,
                 const float* lu, const int* ipiv, Report& report)
        : solver_(solver), device_(device), n_(n), a_(a), lda_(lda), lu_(lu), ipiv_(ipiv),
          report_(report) {}
    int64_t order() const override { return n_; }
    void solve_with_factors(int64_t k, float* v) override {
        solver_.solve_in_device_memory('N', n_, k, lu_, n_, ipiv_, v, n_, report_);
    }
    void multiply(int64_t k, const double* z, double* y) override {
        device_.multiply_in_double(n_, k, a_, lda_, z, y);
    }

private:
    Solver& solver_;
    Device& device_;
    int64_t n_;
    const float* a_;
    int64_t lda_;
    const float* lu_;
    const int* ipiv_;
    Report& report_;
};

using DeviceMatrix = std::unique_ptr<float, FreeMatrix>;

DeviceMatrix allocate(Device& device, int64_t count) {
    return DeviceMatrix(device.allocate_matrix(count), FreeMatrix{&device});
}

// FP32's sgesv: A's factors into a and ipiv, X = inv(A) B into x.
int solve_in_fp32(const Options& options, bool device_memory, int64_t n, int64_t nrhs, float* a,
                  int64_t lda, int* ipiv, const float* b, int64_t ldb, float* x, int64_t ldx,
                  Report& report) {
    Options fp32 = options;
    fp32.update_precision = UpdatePrecision::fp32;
    Solver solver(fp32);
    // X = inv(A) B is solved in a copy of B and written to X at the end, so
    // that a failure in the solve leaves X untouched.
    if (!device_memory) {
        std::vector<float> work(static_cast<size_t>(n * nrhs));  // before A is written
        const int info = solver.factor(n, n, a, lda, ipiv, report);
        if (info != 0) return info;
        for (int64_t j = 0; j < nrhs; ++j) std::copy_n(b + j * ldb, n, work.data() + j * n);
        solver.solve('N', n, nrhs, a, lda, ipiv, work.data(), n, report);
        for (int64_t j = 0; j < nrhs; ++j) std::copy_n(work.data() + j * n, n, x + j * ldx);
        return 0;
    }
    const bool columns = nrhs > 0;  // B and X have no memory to check without columns
    const CheckResult where = solver.use_device_memory(
        "sgesv_refined_gpu", {{a, 3}, {columns ? b : nullptr, 6}, {columns ? x : nullptr, 8}});
    if (where.info != 0) throw Error(TANDEM_ERROR_INTERNAL, where.message);  // checked before
    const int info = solver.factor_in_device_memory(n, n, a, lda, ipiv, report);
    if (info != 0 || nrhs == 0) return info;
    try {
        Device& device = solver.first_device();
        const DeviceMatrix work = allocate(device, n * nrhs);
        device.copy_matrix(n, nrhs, b, ldb, work.get(), n);
        solver.solve_in_device_memory('N', n, nrhs, a, lda, ipiv, work.get(), n, report);
        device.copy_matrix(n, nrhs, work.get(), n, x, ldx);
    } catch (const Error& e) {
        throw Error(e.code(), std::string(e.what()) + " (FP32 fallback: A and ipiv hold its LU factors)");
    }
    return 0;
}

}  // namespace

Options refined_factor_options(const Options& options) {
    Options low = options;
    if (low.update_precision == UpdatePrecision::fp32) low.update_precision = UpdatePrecision::tf32x3;
    return low;
}

int solve_refined(Solver& low, const Options& options, bool device_memory, int64_t n,
                  int64_t nrhs, float* a, int64_t lda, int* ipiv, const float* b, int64_t ldb,
                  float* x, int64_t ldx, int& iter, Report& report) {
    iter = 0;
    if (n == 0) return 0;
    const UpdatePrecision precision = refined_factor_options(options).update_precision;
    Device* device = nullptr;
    DeviceMatrix own_a, lu;
    // FP32's sgesv, once the lower-precision run has given back its arrays and
    // its lease on the GPU (the fallback's Solver takes the lease anew).
    auto fall_back = [&](int code, const std::string& why) {
        lu.reset();
        own_a.reset();
        low.release_devices();
        iter = code;
        const int info = solve_in_fp32(options, device_memory, n, nrhs, a, lda, ipiv, b, ldb, x,
                                       ldx, report);
        report.message = "FP32 sgesv (iter " + std::to_string(code) + "): " + why +
                         (report.message.empty() ? std::string() : "; " + report.message);
        return info;
    };
    if (!device_memory && low.factors_on_cpu(n, n))
        return fall_back(-1, "the CPU's LAPACK factors this matrix, in FP32");

    const float* matrix = a;  // A where the device reads it
    try {
        if (!device_memory) {
            const CheckResult one = low.use_device_memory("sgesv_refined", {});
            if (one.info != 0) throw Error(TANDEM_ERROR_INTERNAL, one.message);
        }
        device = &low.first_device();
        if (!device_memory) {  // A goes to the device once, for the factors and the residuals
            own_a = allocate(*device, n * n);
            device->copy_matrix(n, n, a, lda, own_a.get(), n);
            matrix = own_a.get();
        }
        lu = allocate(*device, n * n);
    } catch (const Error& e) {
        if (e.code() != TANDEM_ERROR_OUT_OF_MEMORY) throw;
        return fall_back(-1, std::string("no device memory for the refinement: ") + e.what());
    }
    const int64_t ld = device_memory ? lda : n;
    const double a_norm = device->norm_inf(n, matrix, ld);
    if (!std::isfinite(a_norm)) return fall_back(-2, "A holds Inf or NaN");

    // Errors from here to the end of the refinement concern sgesv_refined's own
    // copy of A: they say so, and what the caller's arrays hold.
    auto own_arrays = [](const Error& e) {
        return Error(e.code(), std::string(e.what()) +
                                   " (in sgesv_refined's lower-precision solve, on its own copy "
                                   "of A: the caller's A, B and X are unchanged, ipiv may hold "
                                   "that factorization's pivots)");
    };
    int info = 0;
    try {
        device->copy_matrix(n, n, matrix, ld, lu.get(), n);
        info = low.factor_in_device_memory(n, n, lu.get(), n, ipiv, report);
    } catch (const Error& e) {
        // The refinement's own arrays may be what left too little memory:
        // without them, FP32's sgesv may fit.
        if (e.code() == TANDEM_ERROR_OUT_OF_MEMORY)
            return fall_back(-1, std::string("no device memory for the refinement: ") + e.what());
        throw own_arrays(e);
    }
    if (info > 0)
        return fall_back(-3, std::string("the ") + update_precision_name(precision) +
                                 " factorization met an exact zero pivot");

    // Refinement on host arrays (n x nrhs: the O(n^2) work is on the device).
    // X is the caller's only once it passed: a failure on the way leaves it as it was.
    std::vector<float> host_b, host_x(static_cast<size_t>(n * nrhs));
    const float* rhs = b;
    int64_t ld_rhs = ldb;
    if (device_memory) {
        host_b.resize(static_cast<size_t>(n * nrhs));
        device->copy_matrix(n, nrhs, b, ldb, host_b.data(), n);
        rhs = host_b.data();
        ld_rhs = n;
    }
    DeviceSystem system(low, *device, n, matrix, ld, lu.get(), ipiv, report);
    RefinementResult result;
    try {
        result = refine_solution(system, a_norm, nrhs, rhs, ld_rhs, host_x.data(), n);
    } catch (const Error& e) {
        throw own_arrays(e);
    }
    lu.reset();
    own_a.reset();
    if (!result.converged) return fall_back(result.failure, result.why);

    if (device_memory) {
        device->copy_matrix(n, nrhs, host_x.data(), n, x, ldx);
    } else {
        for (int64_t j = 0; j < nrhs; ++j)
            std::copy_n(host_x.data() + j * n, n, x + j * ldx);
    }
    iter = result.corrections;
    const std::string gmres =
        result.gmres_steps > 0 ? " with " + std::to_string(result.gmres_steps) + " GMRES steps" : "";
    char text[192];
    std::snprintf(text, sizeof text,
                  "refined: %s factors, %d correction(s)%s, backward error %.2g (test %.2g)",
                  update_precision_name(precision), result.corrections, gmres.c_str(),
                  result.backward_error, RefinementSettings{}.tolerance);
    report.message = text + (report.message.empty() ? std::string() : "; " + report.message);
    return 0;
}

}  // namespace tandem::detail
