// libtandem_lapack: LAPACK's SGETRF, SGETRS and SGESV under their Fortran
// names (sgetrf_, sgetrs_, sgesv_), so that an unchanged program built
// against a system LAPACK uses tandem when this library comes first: put in
// front by LD_PRELOAD or by link order, as NVBLAS does for BLAS. Every other
// LAPACK and BLAS routine stays the system library's.
//
// tandem's own CPU path calls LAPACK's sgetrf_ and sgetrs_, which then resolve
// to these very functions: while a call is inside tandem (in any thread: its
// OpenMP team may call LAPACK too) they pass straight to the next definition
// in the search order, the system LAPACK's (dlsym(RTLD_NEXT, ...)). A program
// that calls them from several threads at once may thus have some calls
// answered by the system LAPACK directly.
//
// Arguments follow LAPACK: a bad one calls xerbla_ with LAPACK's argument
// number and returns INFO = -number; a run-time failure of tandem hands the
// call to the system LAPACK (A is untouched then), or stops the program with a
// message when A was already partially overwritten (no LAPACK INFO says so).
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>

#include "tandem/tandem.hpp"

extern "C" void xerbla_(const char* name, const int* info, std::size_t name_length);

namespace {

using Getrf = void (*)(const int*, const int*, float*, const int*, int*, int*);
using Getrs = void (*)(const char*, const int*, const int*, const float*, const int*, const int*,
                       float*, const int*, int*, std::size_t);
using Gesv = void (*)(const int*, const int*, float*, const int*, int*, float*, const int*, int*);

std::atomic<int> calls_inside_tandem{0};

// The system LAPACK's definition of `name`: the next one after this library.
template <class Function>
Function next_definition(const char* name) {
    void* symbol = dlsym(RTLD_NEXT, name);
    if (symbol == nullptr) {
        std::fprintf(stderr, "libtandem_lapack: no %s after this library (link a LAPACK after it)\n",
                     name);
        std::abort();
    }
    return reinterpret_cast<Function>(symbol);
}

// Marks a call as inside tandem for its duration.
class InsideTandem {
public:
    InsideTandem() { calls_inside_tandem.fetch_add(1); }
    ~InsideTandem() { calls_inside_tandem.fetch_sub(1); }
    InsideTandem(const InsideTandem&) = delete;
    InsideTandem& operator=(const InsideTandem&) = delete;
};

bool inside_tandem() { return calls_inside_tandem.load() > 0; }

// LAPACK's report of a bad argument: XERBLA, then INFO = -position.
void bad_argument(const char* name, int position, int* info) {
    *info = -position;
    const int number = position;
    xerbla_(name, &number, std::char_traits<char>::length(name));
}

// Runs tandem's routine; false when it failed at run time and the system
// LAPACK should answer instead (A untouched). Stops the program when A was
// left partially overwritten.
template <class Call>
bool ran_in_tandem(const char* routine, int* info, Call&& call) {
    try {
        InsideTandem inside;
        *info = call();
        return true;
    } catch (const tandem::Error& e) {
        const std::string what = e.what();
        if (what.find("partially overwritten") != std::string::npos) {
            std::fprintf(stderr, "libtandem_lapack: %s failed with A partially overwritten: %s\n",
                         routine, e.what());
            std::abort();
        }
        std::fprintf(stderr, "libtandem_lapack: %s: %s; the system LAPACK answers instead\n",
                     routine, e.what());
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "libtandem_lapack: %s: out of host memory; the system LAPACK answers instead\n",
                     routine);
    }
    return false;
}

}  // namespace

extern "C" {

void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info) {
    if (inside_tandem()) return next_definition<Getrf>("sgetrf_")(m, n, a, lda, ipiv, info);
    *info = 0;
    if (*m < 0) return bad_argument("SGETRF", 1, info);
    if (*n < 0) return bad_argument("SGETRF", 2, info);
    if (*lda < std::max(1, *m)) return bad_argument("SGETRF", 4, info);
    if (*m == 0 || *n == 0) return;
    if (ran_in_tandem("SGETRF", info, [&] { return tandem::sgetrf(*m, *n, a, *lda, ipiv); })) {
        if (*info < 0) bad_argument("SGETRF", -*info, info);
        return;
    }
    next_definition<Getrf>("sgetrf_")(m, n, a, lda, ipiv, info);
}

void sgetrs_(const char* trans, const int* n, const int* nrhs, const float* a, const int* lda,
             const int* ipiv, float* b, const int* ldb, int* info, std::size_t trans_length) {
    if (inside_tandem())
        return next_definition<Getrs>("sgetrs_")(trans, n, nrhs, a, lda, ipiv, b, ldb, info,
                                                 trans_length);
    *info = 0;
    const char t = *trans;
    if (t != 'N' && t != 'n' && t != 'T' && t != 't' && t != 'C' && t != 'c')
        return bad_argument("SGETRS", 1, info);
    if (*n < 0) return bad_argument("SGETRS", 2, info);
    if (*nrhs < 0) return bad_argument("SGETRS", 3, info);
    if (*lda < std::max(1, *n)) return bad_argument("SGETRS", 5, info);
    if (*ldb < std::max(1, *n)) return bad_argument("SGETRS", 8, info);
    if (*n == 0 || *nrhs == 0) return;
    if (ran_in_tandem("SGETRS", info,
                      [&] { return tandem::sgetrs(t, *n, *nrhs, a, *lda, ipiv, b, *ldb); })) {
        if (*info < 0) bad_argument("SGETRS", -*info, info);
        return;
    }
    next_definition<Getrs>("sgetrs_")(trans, n, nrhs, a, lda, ipiv, b, ldb, info, trans_length);
}

void sgesv_(const int* n, const int* nrhs, float* a, const int* lda, int* ipiv, float* b,
            const int* ldb, int* info) {
    if (inside_tandem()) return next_definition<Gesv>("sgesv_")(n, nrhs, a, lda, ipiv, b, ldb, info);
    *info = 0;
    if (*n < 0) return bad_argument("SGESV ", 1, info);
    if (*nrhs < 0) return bad_argument("SGESV ", 2, info);
    if (*lda < std::max(1, *n)) return bad_argument("SGESV ", 4, info);
    if (*ldb < std::max(1, *n)) return bad_argument("SGESV ", 7, info);
    if (*n == 0) return;
    if (ran_in_tandem("SGESV", info,
                      [&] { return tandem::sgesv(*n, *nrhs, a, *lda, ipiv, b, *ldb); })) {
        if (*info < 0) bad_argument("SGESV ", -*info, info);
        return;
    }
    next_definition<Gesv>("sgesv_")(n, nrhs, a, lda, ipiv, b, ldb, info);
}

}  // extern "C"
