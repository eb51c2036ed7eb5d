// The C++ entry points: check arguments (LAPACK info), convert row-major input
// to the column-major form the solver works on, time the call, fill the Report.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "src/checks.hpp"
#include "src/last_error.hpp"
#include "src/layout.hpp"
#include "src/refined_solve.hpp"
#include "src/solver.hpp"

namespace tandem {
namespace {

using Clock = std::chrono::steady_clock;

// TANDEM_VERBOSE=1: one line a call on stderr (as MKL_VERBOSE). Read at each
// call, so a program may turn it on and off; any other value than 0 or 1 is
// ignored, with one warning for the process.
bool verbose() {
    const char* env = std::getenv("TANDEM_VERBOSE");
    if (env == nullptr || *env == '\0' || std::strcmp(env, "0") == 0) return false;
    if (std::strcmp(env, "1") == 0) return true;
    static std::atomic<bool> warned{false};
    if (!warned.exchange(true))
        std::fprintf(stderr, "tandem: TANDEM_VERBOSE='%s' is not 0 or 1; ignored\n", env);
    return false;
}

// The report of a call that nobody reads (the caller passed none and
// TANDEM_VERBOSE is off): one a thread, reused, so that its strings keep their
// room and a small call allocates nothing for its text. No call of tandem runs
// inside another on one thread (the LAPACK drop-in passes those to LAPACK), and
// nothing reads it, so sharing it between calls is harmless. Null once the
// thread's storage is being destroyed (a call from a thread_local's or a static
// destructor): the flag is a plain bool, which outlives every destructor.
thread_local bool unread_report_destroyed = false;
struct UnreadReport {
    Report report;
    ~UnreadReport() { unread_report_destroyed = true; }
};
Report* unread_report() {
    if (unread_report_destroyed) return nullptr;
    thread_local UnreadReport holder;
    return &holder.report;
}

// Report for the call: the caller's, or one of tandem's when the caller passed
// none. With TANDEM_VERBOSE=1 (read once a call, at its start) it also writes
// the call's line: the routine, its sizes (nrhs < 0: none), info, the backend
// and why, the time and the rate.
class CallReport {
public:
    CallReport(Report* caller, const char* routine, int m, int n, int nrhs = -1)
        : verbose_(verbose()),
          report_(caller ? *caller : verbose_ || !unread_report() ? local_ : *unread_report()),
          routine_(routine), m_(m), n_(n), nrhs_(nrhs) {
        report_ = Report{};  // a reused Report keeps its strings' room for this call's text
    }
    ~CallReport() {
        if (!logged_ && verbose_)  // left by an exception: the caller gets it
            log("ended by an error");
    }
    CallReport(const CallReport&) = delete;
    CallReport& operator=(const CallReport&) = delete;
    Report& get() { return report_; }
    Clock::time_point start() const { return start_; }

    int rejected(const detail::CheckResult& check) {
        report_.info = check.info;
        report_.message = check.message;
        detail::set_last_error(check.message);
        if (verbose_) log(check.message.c_str());
        return check.info;
    }
    int finished(int info, double flops) {
        report_.info = info;
        report_.seconds = std::chrono::duration<double>(Clock::now() - start_).count();
        report_.gflops = report_.seconds > 0 ? flops / report_.seconds * 1e-9 : 0.0;
        detail::set_last_error("");
        if (verbose_) log(report_.message.c_str());
        return info;
    }

private:
    void log(const char* why) {
        logged_ = true;
        char sizes[64];
        if (nrhs_ >= 0)
            std::snprintf(sizes, sizeof sizes, "m=%d n=%d nrhs=%d", m_, n_, nrhs_);
        else
            std::snprintf(sizes, sizeof sizes, "m=%d n=%d", m_, n_);
        std::fprintf(stderr, "tandem: %s %s info=%d backend=%s device=\"%s\" %.3f ms %.1f GFLOP/s%s%s\n",
                     routine_, sizes, report_.info, backend_name(report_.backend),
                     report_.device.c_str(), 1e3 * report_.seconds, report_.gflops,
                     *why ? " | " : "", why);
    }

    const bool verbose_;
    Report local_;
    Report& report_;
    const char* routine_;
    int m_, n_, nrhs_;
    bool logged_ = false;
    Clock::time_point start_ = Clock::now();
};

// The C++ API lets only tandem::Error out (its header's promise): anything
// else from below, a thread that could not be created, an internal check of
// the standard library, becomes one, with TANDEM_ERROR_OUT_OF_MEMORY for
// memory and TANDEM_ERROR_INTERNAL for the rest.
template <class Body>
auto only_tandem_errors(const char* routine, Body&& body) -> decltype(body()) {
    try {
        return body();
    } catch (const Error&) {
        throw;
    } catch (const std::bad_alloc&) {
        throw Error(TANDEM_ERROR_OUT_OF_MEMORY, std::string("tandem: out of host memory in ") + routine);
    } catch (const std::exception& e) {
        throw Error(TANDEM_ERROR_INTERNAL, std::string("tandem: ") + routine + ": " + e.what());
    }
}

bool row_major(const Options& o) { return o.layout == Layout::row_major; }

}  // namespace

int sgetrf(int m, int n, float* a, int lda, int* ipiv, const Options& options, Report* report) {
    return only_tandem_errors("sgetrf", [&]() -> int {
        CallReport call(report, "sgetrf", m, n);
        const detail::CheckResult check = detail::check_getrf(m, n, a, lda, ipiv, options);
        if (check.info != 0) return call.rejected(check);

        detail::Solver solver(options, call.start());
        int info;
        if (row_major(options)) {
            std::vector<float> work = detail::col_major_copy(m, n, a, lda);
            info = solver.factor(m, n, work.data(), std::max(m, 1), ipiv, call.get());
            detail::store_row_major(m, n, work.data(), a, lda);
        } else {
            info = solver.factor(m, n, a, lda, ipiv, call.get());
        }
        return call.finished(info, detail::getrf_flops(m, n));
    });
}

int sgetrf_gpu(int m, int n, float* d_a, int ldda, int* ipiv, const Options& options,
               Report* report) {
    return only_tandem_errors("sgetrf_gpu", [&]() -> int {
        CallReport call(report, "sgetrf_gpu", m, n);
        const detail::CheckResult check = detail::check_getrf_gpu(m, n, d_a, ldda, ipiv, options);
        if (check.info != 0) return call.rejected(check);

        detail::Solver solver(options, call.start());
        if (m > 0 && n > 0) {  // an empty matrix may have no memory at all
            const detail::CheckResult where = solver.use_device_memory("sgetrf_gpu", {{d_a, 3}});
            if (where.info != 0) return call.rejected(where);
        }
        const int info = solver.factor_in_device_memory(m, n, d_a, ldda, ipiv, call.get());
        return call.finished(info, detail::getrf_flops(m, n));
    });
}

int sgetrs_gpu(char trans, int n, int nrhs, const float* d_a, int ldda, const int* ipiv,
               float* d_b, int lddb, const Options& options, Report* report) {
    return only_tandem_errors("sgetrs_gpu", [&]() -> int {
        CallReport call(report, "sgetrs_gpu", n, n, nrhs);
        const detail::CheckResult check =
            detail::check_getrs_gpu(trans, n, nrhs, d_a, ldda, ipiv, d_b, lddb, options);
        if (check.info != 0) return call.rejected(check);

        detail::Solver solver(options, call.start());
        if (n > 0 && nrhs > 0) {
            const detail::CheckResult where = solver.use_device_memory("sgetrs_gpu", {{d_a, 4}, {d_b, 7}});
            if (where.info != 0) return call.rejected(where);
        }
        solver.solve_in_device_memory(detail::is_transposed(trans) ? 'T' : 'N', n, nrhs, d_a, ldda,
                                      ipiv, d_b, lddb, call.get());
        return call.finished(0, detail::getrs_flops(n, nrhs));
    });
}

int sgesv_gpu(int n, int nrhs, float* d_a, int ldda, int* ipiv, float* d_b, int lddb,
              const Options& options, Report* report) {
    return only_tandem_errors("sgesv_gpu", [&]() -> int {
        CallReport call(report, "sgesv_gpu", n, n, nrhs);
        const detail::CheckResult check = detail::check_gesv_gpu(n, nrhs, d_a, ldda, ipiv, d_b, lddb, options);
        if (check.info != 0) return call.rejected(check);

        detail::Solver solver(options, call.start());
        if (n > 0) {  // B has no memory to check when it has no columns
            const detail::CheckResult where =
                solver.use_device_memory("sgesv_gpu", {{d_a, 3}, {nrhs > 0 ? d_b : nullptr, 6}});
            if (where.info != 0) return call.rejected(where);
        }
        const double flops = detail::getrf_flops(n, n) + detail::getrs_flops(n, nrhs);
        const int info = solver.factor_in_device_memory(n, n, d_a, ldda, ipiv, call.get());
        if (info == 0) solver.solve_in_device_memory('N', n, nrhs, d_a, ldda, ipiv, d_b, lddb, call.get());
        return call.finished(info, flops);
    });
}

int sgetrs(char trans, int n, int nrhs, const float* a, int lda, const int* ipiv, float* b,
           int ldb, const Options& options, Report* report) {
    return only_tandem_errors("sgetrs", [&]() -> int {
        CallReport call(report, "sgetrs", n, n, nrhs);
        const detail::CheckResult check =
            detail::check_getrs(trans, n, nrhs, a, lda, ipiv, b, ldb, options);
        if (check.info != 0) return call.rejected(check);

        detail::Solver solver(options, call.start());
        if (row_major(options)) {
            // Row-major factors of A are the column-major factors' transposed storage.
            std::vector<float> factors = detail::col_major_copy(n, n, a, lda);
            std::vector<float> rhs = detail::col_major_copy(n, nrhs, b, ldb);
            solver.solve(trans, n, nrhs, factors.data(), std::max(n, 1), ipiv, rhs.data(),
                         std::max(n, 1), call.get());
            detail::store_row_major(n, nrhs, rhs.data(), b, ldb);
        } else {
            solver.solve(trans, n, nrhs, a, lda, ipiv, b, ldb, call.get());
        }
        return call.finished(0, detail::getrs_flops(n, nrhs));
    });
}

int sgesv(int n, int nrhs, float* a, int lda, int* ipiv, float* b, int ldb,
          const Options& options, Report* report) {
    return only_tandem_errors("sgesv", [&]() -> int {
        CallReport call(report, "sgesv", n, n, nrhs);
        const detail::CheckResult check = detail::check_gesv(n, nrhs, a, lda, ipiv, b, ldb, options);
        if (check.info != 0) return call.rejected(check);

        detail::Solver solver(options, call.start());
        const double flops = detail::getrf_flops(n, n) + detail::getrs_flops(n, nrhs);
        if (row_major(options)) {
            std::vector<float> work = detail::col_major_copy(n, n, a, lda);
            std::vector<float> rhs = detail::col_major_copy(n, nrhs, b, ldb);
            const int ld = std::max(n, 1);
            const int info = solver.factor(n, n, work.data(), ld, ipiv, call.get());
            if (info == 0) solver.solve('N', n, nrhs, work.data(), ld, ipiv, rhs.data(), ld, call.get());
            detail::store_row_major(n, n, work.data(), a, lda);
            if (info == 0) detail::store_row_major(n, nrhs, rhs.data(), b, ldb);
            return call.finished(info, flops);
        }
        const int info = solver.factor(n, n, a, lda, ipiv, call.get());
        if (info == 0) solver.solve('N', n, nrhs, a, lda, ipiv, b, ldb, call.get());
        return call.finished(info, flops);
    });
}

int sgesv_refined(int n, int nrhs, float* a, int lda, int* ipiv, const float* b, int ldb,
                  float* x, int ldx, int* iter, const Options& options, Report* report) {
    return only_tandem_errors("sgesv_refined", [&]() -> int {
        CallReport call(report, "sgesv_refined", n, n, nrhs);
        const detail::CheckResult check =
            detail::check_gesv_refined(n, nrhs, a, lda, ipiv, b, ldb, x, ldx, iter, options);
        if (check.info != 0) return call.rejected(check);

        const double flops = detail::getrf_flops(n, n) + detail::getrs_flops(n, nrhs);
        detail::Solver low(detail::refined_factor_options(options), call.start());
        if (row_major(options)) {
            std::vector<float> work = detail::col_major_copy(n, n, a, lda);
            std::vector<float> rhs = detail::col_major_copy(n, nrhs, b, ldb);
            std::vector<float> solution(rhs.size());
            const int ld = std::max(n, 1);
            const int info = detail::solve_refined(low, options, false, n, nrhs, work.data(), ld,
                                                   ipiv, rhs.data(), ld, solution.data(), ld,
                                                   *iter, call.get());
            if (*iter < 0) detail::store_row_major(n, n, work.data(), a, lda);  // the FP32 factors
            if (info == 0) detail::store_row_major(n, nrhs, solution.data(), x, ldx);
            return call.finished(info, flops);
        }
        const int info = detail::solve_refined(low, options, false, n, nrhs, a, lda, ipiv, b, ldb,
                                               x, ldx, *iter, call.get());
        return call.finished(info, flops);
    });
}

int sgesv_refined_gpu(int n, int nrhs, float* d_a, int ldda, int* ipiv, const float* d_b,
                      int lddb, float* d_x, int lddx, int* iter, const Options& options,
                      Report* report) {
    return only_tandem_errors("sgesv_refined_gpu", [&]() -> int {
        CallReport call(report, "sgesv_refined_gpu", n, n, nrhs);
        const detail::CheckResult check = detail::check_gesv_refined_gpu(
            n, nrhs, d_a, ldda, ipiv, d_b, lddb, d_x, lddx, iter, options);
        if (check.info != 0) return call.rejected(check);

        detail::Solver low(detail::refined_factor_options(options), call.start());
        if (n > 0) {
            const bool columns = nrhs > 0;
            const detail::CheckResult where = low.use_device_memory(
                "sgesv_refined_gpu",
                {{d_a, 3}, {columns ? d_b : nullptr, 6}, {columns ? d_x : nullptr, 8}});
            if (where.info != 0) return call.rejected(where);
        }
        const double flops = detail::getrf_flops(n, n) + detail::getrs_flops(n, nrhs);
        const int info = detail::solve_refined(low, options, true, n, nrhs, d_a, ldda, ipiv, d_b,
                                               lddb, d_x, lddx, *iter, call.get());
        return call.finished(info, flops);
    });
}

std::string describe_plan(int m, int n, const Options& options) {
    return only_tandem_errors("describe_plan", [&]() -> std::string {
        if (m < 0 || n < 0) throw Error(TANDEM_ERROR_INTERNAL, "describe_plan: m and n must be >= 0");
        detail::Solver solver(options);
        return solver.describe_plan(m, n);
    });
}

}  // namespace tandem
