#include "src/checks.hpp"

#include <algorithm>
#include <cmath>

#include "src/backend.hpp"

namespace tandem::detail {
namespace {

CheckResult bad(int position, const char* routine, const std::string& what) {
    return {-position, std::string(routine) + ": argument " + std::to_string(position) + " (" +
                           what + ") is invalid"};
}

bool is_row_major(const Options& o) { return o.layout == Layout::row_major; }

}  // namespace

bool options_valid(const Options& o, std::string* why) {
    auto fail = [&](const char* w) {
        if (why) *why = w;
        return false;
    };
    if (o.layout != Layout::row_major && o.layout != Layout::col_major)
        return fail("options.layout is neither row_major nor col_major");
    if (o.backend != Backend::automatic && o.backend != Backend::cpu &&
        o.backend != Backend::gpu && o.backend != Backend::host)
        return fail("options.backend is not a Backend value");
    // 64: as TANDEM_BACKEND=host:N allows; more emulated devices only cost
    // memory and time (a pair check is quadratic in them), no machine has more GPUs.
    if (o.num_devices < 0 || o.num_devices > 64) return fail("options.num_devices is not in 0..64");
    if (o.block_size < 0) return fail("options.block_size < 0");
    if (o.max_block_size < 0) return fail("options.max_block_size < 0");
    if (o.lookahead < 0 || o.lookahead > 1) return fail("options.lookahead is not 0 or 1");
    if (o.panel != PanelMethod::automatic && o.panel != PanelMethod::lapack &&
        o.panel != PanelMethod::recursive)
        return fail("options.panel is not a PanelMethod value");
    if (o.placement != PanelPlacement::automatic && o.placement != PanelPlacement::cpu &&
        o.placement != PanelPlacement::device)
        return fail("options.placement is not a PanelPlacement value");
    if (o.gemm != GemmKernel::automatic && o.gemm != GemmKernel::tandem &&
        o.gemm != GemmKernel::cublas)
        return fail("options.gemm is not a GemmKernel value");
    if (o.device_panel != DevicePanelMethod::automatic &&
        o.device_panel != DevicePanelMethod::recursive &&
        o.device_panel != DevicePanelMethod::cusolver)
        return fail("options.device_panel is not a DevicePanelMethod value");
    if (o.update_precision != UpdatePrecision::fp32 &&
        o.update_precision != UpdatePrecision::tf32x3 &&
        o.update_precision != UpdatePrecision::tf32 && o.update_precision != UpdatePrecision::bf16)
        return fail("options.update_precision is not an UpdatePrecision value");
    if (!(o.inverse_threshold >= 0.0f) || std::isinf(o.inverse_threshold))
        return fail("options.inverse_threshold is negative, infinite or NaN");
    return true;
}

bool trans_valid(char t) {
    return t == 'N' || t == 'n' || t == 'T' || t == 't' || t == 'C' || t == 'c';
}
bool is_transposed(char t) { return t != 'N' && t != 'n'; }

namespace {

// Where a routine's matrices live: the host routines' in host memory (device
// memory would crash the host's reads), the _gpu routines' in GPU memory
// (checked by the Solver, which knows the backend). ipiv is host memory for both.
enum class Arrays { host, gpu };

// "" when the array is where the routine needs it, else why not.
std::string misplaced(const void* array, Arrays where, const std::string& gpu_routine) {
    if (where == Arrays::host && array != nullptr && host_cannot_read(array))
        return "in GPU memory; " + gpu_routine + " takes that";
    return "";
}

std::string ipiv_misplaced(const void* ipiv) {
    return ipiv != nullptr && host_cannot_read(ipiv) ? "in GPU memory; it must be host memory" : "";
}

CheckResult check_getrf_arguments(const char* r, int m, int n, const float* a, int lda,
                                  const int* ipiv, const Options& o, Arrays where) {
    std::string why;
    if (m < 0) return bad(1, r, "m < 0");
    if (n < 0) return bad(2, r, "n < 0");
    if (a == nullptr && m > 0 && n > 0) return bad(3, r, "a is null");
    if (why = misplaced(a, where, "sgetrf_gpu"); !why.empty()) return bad(3, r, "a is " + why);
    const int rows_needed = is_row_major(o) ? n : m;
    if (lda < std::max(1, rows_needed))
        return bad(4, r, is_row_major(o) ? "lda < max(1,n) for row-major" : "lda < max(1,m)");
    if (ipiv == nullptr && std::min(m, n) > 0) return bad(5, r, "ipiv is null");
    if (why = ipiv_misplaced(ipiv); !why.empty()) return bad(5, r, "ipiv is " + why);
    if (!options_valid(o, &why)) return bad(6, r, why);
    return {};
}

CheckResult check_gpu_options(const char* r, int position, const Options& o);
Options as_col_major(Options o);

}  // namespace

CheckResult check_getrf(int m, int n, const float* a, int lda, const int* ipiv,
                        const Options& o) {
    return check_getrf_arguments("sgetrf", m, n, a, lda, ipiv, o, Arrays::host);
}

CheckResult check_getrf_gpu(int m, int n, const float* a, int lda, const int* ipiv,
                            const Options& o) {
    const char* r = "sgetrf_gpu";
    CheckResult result = check_getrf_arguments(r, m, n, a, lda, ipiv, as_col_major(o), Arrays::gpu);
    if (result.info != 0) return result;
    std::string why;
    if (!options_valid(o, &why)) return bad(6, r, why);
    return check_gpu_options(r, 6, o);
}

namespace {

CheckResult check_getrs_arguments(const char* r, char trans, int n, int nrhs, const float* a,
                                  int lda, const int* ipiv, const float* b, int ldb,
                                  const Options& o, Arrays where) {
    std::string why;
    if (!trans_valid(trans)) return bad(1, r, "trans is not 'N', 'T' or 'C'");
    if (n < 0) return bad(2, r, "n < 0");
    if (nrhs < 0) return bad(3, r, "nrhs < 0");
    if (a == nullptr && n > 0) return bad(4, r, "a is null");
    if (why = misplaced(a, where, "sgetrs_gpu"); !why.empty()) return bad(4, r, "a is " + why);
    if (lda < std::max(1, n)) return bad(5, r, "lda < max(1,n)");
    // No right-hand side: LAPACK returns at once, whatever ipiv holds.
    if (ipiv == nullptr && n > 0 && nrhs > 0) return bad(6, r, "ipiv is null");
    if (why = ipiv_misplaced(ipiv); !why.empty()) return bad(6, r, "ipiv is " + why);
    for (int k = 0; k < n && nrhs > 0; ++k)  // laswp would read or write outside B with these
        if (ipiv[k] < 1 || ipiv[k] > n)
            return bad(6, r, "ipiv[" + std::to_string(k) + "] = " + std::to_string(ipiv[k]) +
                                 " is outside 1..n");
    if (b == nullptr && n > 0 && nrhs > 0) return bad(7, r, "b is null");
    if (why = misplaced(b, where, "sgetrs_gpu"); !why.empty()) return bad(7, r, "b is " + why);
    if (ldb < std::max(1, is_row_major(o) ? nrhs : n))
        return bad(8, r, is_row_major(o) ? "ldb < max(1,nrhs) for row-major" : "ldb < max(1,n)");
    if (!options_valid(o, &why)) return bad(9, r, why);
    return {};
}

CheckResult check_gesv_arguments(const char* r, int n, int nrhs, const float* a, int lda,
                                 const int* ipiv, const float* b, int ldb, const Options& o, Arrays where) {
    std::string why;
    if (n < 0) return bad(1, r, "n < 0");
    if (nrhs < 0) return bad(2, r, "nrhs < 0");
    if (a == nullptr && n > 0) return bad(3, r, "a is null");
    const std::string gpu_routine = std::string(r) + "_gpu";
    if (why = misplaced(a, where, gpu_routine); !why.empty()) return bad(3, r, "a is " + why);
    if (lda < std::max(1, n)) return bad(4, r, "lda < max(1,n)");
    if (ipiv == nullptr && n > 0) return bad(5, r, "ipiv is null");
    if (why = ipiv_misplaced(ipiv); !why.empty()) return bad(5, r, "ipiv is " + why);
    if (b == nullptr && n > 0 && nrhs > 0) return bad(6, r, "b is null");
    if (why = misplaced(b, where, gpu_routine); !why.empty()) return bad(6, r, "b is " + why);
    if (ldb < std::max(1, is_row_major(o) ? nrhs : n))
        return bad(7, r, is_row_major(o) ? "ldb < max(1,nrhs) for row-major" : "ldb < max(1,n)");
    if (!options_valid(o, &why)) return bad(8, r, why);
    return {};
}

// sgesv's arguments 1-7, then X (8, 9), iter (10) and the options (11).
CheckResult check_refined_arguments(const char* r, int n, int nrhs, const float* a, int lda,
                                    const int* ipiv, const float* b, int ldb, const float* x,
                                    int ldx, const int* iter, const Options& o, Arrays where) {
    Options layout_only;
    layout_only.layout = o.layout;
    CheckResult result = check_gesv_arguments(r, n, nrhs, a, lda, ipiv, b, ldb, layout_only, where);
    if (result.info != 0) return result;
    std::string why;
    if (x == nullptr && n > 0 && nrhs > 0) return bad(8, r, "x is null");
    if (x != nullptr && x == b && n > 0 && nrhs > 0) return bad(8, r, "x is b; X and B are separate arrays");
    if (why = misplaced(x, where, std::string(r) + "_gpu"); !why.empty()) return bad(8, r, "x is " + why);
    if (ldx < std::max(1, is_row_major(o) ? nrhs : n))
        return bad(9, r, is_row_major(o) ? "ldx < max(1,nrhs) for row-major" : "ldx < max(1,n)");
    if (iter == nullptr) return bad(10, r, "iter is null");
    if (!options_valid(o, &why)) return bad(11, r, why);
    return {};
}

// The _gpu routines' own demands on Options (argument `position`): column-major, one device.
CheckResult check_gpu_options(const char* r, int position, const Options& o) {
    if (is_row_major(o)) return bad(position, r, "options.layout: matrices in GPU memory must be col_major");
    if (o.num_devices > 1) return bad(position, r, "options.num_devices > 1: the matrices are on one GPU");
    return {};
}

Options as_col_major(Options o) {
    o.layout = Layout::col_major;
    return o;
}

}  // namespace

CheckResult check_getrs(char trans, int n, int nrhs, const float* a, int lda, const int* ipiv,
                        const float* b, int ldb, const Options& o) {
    return check_getrs_arguments("sgetrs", trans, n, nrhs, a, lda, ipiv, b, ldb, o, Arrays::host);
}

CheckResult check_gesv(int n, int nrhs, const float* a, int lda, const int* ipiv,
                       const float* b, int ldb, const Options& o) {
    return check_gesv_arguments("sgesv", n, nrhs, a, lda, ipiv, b, ldb, o, Arrays::host);
}

// Arguments as for the column-major matrices they must be, then the options.
CheckResult check_getrs_gpu(char trans, int n, int nrhs, const float* a, int lda, const int* ipiv,
                            const float* b, int ldb, const Options& o) {
    const char* r = "sgetrs_gpu";
    CheckResult result =
        check_getrs_arguments(r, trans, n, nrhs, a, lda, ipiv, b, ldb, as_col_major(o), Arrays::gpu);
    if (result.info != 0) return result;
    std::string why;
    if (!options_valid(o, &why)) return bad(9, r, why);
    return check_gpu_options(r, 9, o);
}

CheckResult check_gesv_gpu(int n, int nrhs, const float* a, int lda, const int* ipiv,
                           const float* b, int ldb, const Options& o) {
    const char* r = "sgesv_gpu";
    CheckResult result =
        check_gesv_arguments(r, n, nrhs, a, lda, ipiv, b, ldb, as_col_major(o), Arrays::gpu);
    if (result.info != 0) return result;
    std::string why;
    if (!options_valid(o, &why)) return bad(8, r, why);
    return check_gpu_options(r, 8, o);
}

CheckResult check_gesv_refined(int n, int nrhs, const float* a, int lda, const int* ipiv,
                               const float* b, int ldb, const float* x, int ldx, const int* iter,
                               const Options& o) {
    return check_refined_arguments("sgesv_refined", n, nrhs, a, lda, ipiv, b, ldb, x, ldx, iter, o,
                                   Arrays::host);
}

CheckResult check_gesv_refined_gpu(int n, int nrhs, const float* a, int lda, const int* ipiv,
                                   const float* b, int ldb, const float* x, int ldx,
                                   const int* iter, const Options& o) {
    const char* r = "sgesv_refined_gpu";
    Options column_major = o;
    column_major.layout = Layout::col_major;
    CheckResult result = check_refined_arguments(r, n, nrhs, a, lda, ipiv, b, ldb, x, ldx, iter,
                                                 column_major, Arrays::gpu);
    if (result.info != 0) return result;
    std::string why;
    if (!options_valid(o, &why)) return bad(11, r, why);
    return check_gpu_options(r, 11, o);
}

}  // namespace tandem::detail
