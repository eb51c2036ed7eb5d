// The C ABI: LAPACKE's argument numbering (layout is argument 1) and no
// exception ever crosses it; run-time failures become TANDEM_ERROR_* codes.
#include <new>
#include <string>

#include "src/last_error.hpp"
#include "tandem/tandem.hpp"

namespace {

// The C++ entry point's message for a bad argument ("sgesv: argument 4 (...)
// is invalid") in the C function's words: its name and its argument number.
void name_c_argument(const char* routine, int cpp_position, int shift) {
    const std::string text = tandem::detail::last_error();
    const std::string argument = ": argument " + std::to_string(cpp_position) + " ";
    const size_t at = text.find(argument);
    tandem::detail::set_last_error(
        std::string(routine) + ": argument " + std::to_string(cpp_position + shift) + " " +
        (at == std::string::npos ? text : text.substr(at + argument.size())));
}

// Runs a C++ entry point; maps its exceptions. `shift` is added to a negative
// info: the C signature's arguments before the C++ one's.
template <class Call>
int guarded_call(const char* routine, const tandem::Options& options, int shift, Call&& call) {
    try {
        const int info = call(options);
        if (info >= 0) return info;
        name_c_argument(routine, -info, shift);
        return info - shift;
    } catch (const tandem::Error& e) {
        tandem::detail::set_last_error(e.what());
        return e.code();
    } catch (const std::bad_alloc&) {
        tandem::detail::set_last_error(std::string(routine) + ": out of host memory");
        return TANDEM_ERROR_OUT_OF_MEMORY;
    } catch (const std::exception& e) {
        tandem::detail::set_last_error(std::string(routine) + ": " + e.what());
        return TANDEM_ERROR_INTERNAL;
    } catch (...) {
        tandem::detail::set_last_error(std::string(routine) + ": unknown failure");
        return TANDEM_ERROR_INTERNAL;
    }
}

// An entry point whose first C argument is the layout (LAPACKE's numbering).
template <class Call>
int c_call(const char* routine, int layout, Call&& call) {
    if (layout != TANDEM_ROW_MAJOR && layout != TANDEM_COL_MAJOR) {
        tandem::detail::set_last_error(std::string(routine) +
                                       ": argument 1 (layout) is neither 101 nor 102");
        return -1;
    }
    tandem::Options options;
    options.layout = static_cast<tandem::Layout>(layout);
    return guarded_call(routine, options, 1, call);
}

}  // namespace

extern "C" {

int tandem_sgetrf(int layout, int m, int n, float* a, int lda, int* ipiv) {
    return c_call("tandem_sgetrf", layout, [&](const tandem::Options& o) {
        return tandem::sgetrf(m, n, a, lda, ipiv, o);
    });
}

int tandem_sgetrf_gpu(int m, int n, float* d_a, int ldda, int* ipiv) {
    return guarded_call("tandem_sgetrf_gpu", tandem::Options{}, 0, [&](const tandem::Options& o) {
        return tandem::sgetrf_gpu(m, n, d_a, ldda, ipiv, o);
    });
}

int tandem_sgetrs_gpu(char trans, int n, int nrhs, const float* d_a, int ldda, const int* ipiv,
                      float* d_b, int lddb) {
    return guarded_call("tandem_sgetrs_gpu", tandem::Options{}, 0, [&](const tandem::Options& o) {
        return tandem::sgetrs_gpu(trans, n, nrhs, d_a, ldda, ipiv, d_b, lddb, o);
    });
}

int tandem_sgesv_gpu(int n, int nrhs, float* d_a, int ldda, int* ipiv, float* d_b, int lddb) {
    return guarded_call("tandem_sgesv_gpu", tandem::Options{}, 0, [&](const tandem::Options& o) {
        return tandem::sgesv_gpu(n, nrhs, d_a, ldda, ipiv, d_b, lddb, o);
    });
}

int tandem_sgetrs(int layout, char trans, int n, int nrhs, const float* a, int lda,
                  const int* ipiv, float* b, int ldb) {
    return c_call("tandem_sgetrs", layout, [&](const tandem::Options& o) {
        return tandem::sgetrs(trans, n, nrhs, a, lda, ipiv, b, ldb, o);
    });
}

int tandem_sgesv(int layout, int n, int nrhs, float* a, int lda, int* ipiv, float* b,
                 int ldb) {
    return c_call("tandem_sgesv", layout, [&](const tandem::Options& o) {
        return tandem::sgesv(n, nrhs, a, lda, ipiv, b, ldb, o);
    });
}

int tandem_sgesv_refined(int layout, int n, int nrhs, float* a, int lda, int* ipiv, const float* b,
                         int ldb, float* x, int ldx, int* iter) {
    return c_call("tandem_sgesv_refined", layout, [&](const tandem::Options& o) {
        return tandem::sgesv_refined(n, nrhs, a, lda, ipiv, b, ldb, x, ldx, iter, o);
    });
}

int tandem_sgesv_refined_gpu(int n, int nrhs, float* d_a, int ldda, int* ipiv, const float* d_b,
                             int lddb, float* d_x, int lddx, int* iter) {
    return guarded_call("tandem_sgesv_refined_gpu", tandem::Options{}, 0,
                        [&](const tandem::Options& o) {
                            return tandem::sgesv_refined_gpu(n, nrhs, d_a, ldda, ipiv, d_b, lddb,
                                                             d_x, lddx, iter, o);
                        });
}

const char* tandem_last_error(void) { return tandem::detail::last_error(); }

}  // extern "C"

namespace tandem::detail {

namespace {
thread_local std::string last_error_text;
}

void set_last_error(const std::string& message) { last_error_text = message; }
const char* last_error() { return last_error_text.c_str(); }

}  // namespace tandem::detail
