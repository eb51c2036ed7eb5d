#include "scheduler/cpu_backend.hpp"

#include <lapacke.h>

#include <cstdio>
#include <optional>
#include <string>

#include "scheduler/blas_threads.hpp"
#include "tandem/tandem.hpp"

extern "C" {
// OpenBLAS's own queries; declared here so that only lapacke.h is needed.
char* openblas_get_config(void);
int openblas_get_num_threads(void);
}

namespace tandem {
namespace {

// sgetrs with 2-8 right-hand sides up to n = 512 runs on one of OpenBLAS's
// threads when tandem chose the CPU itself. OpenBLAS solves them with its
// threads, which then spin for about 0.1 s; a GPU call that follows, whose
// host copies run an OpenMP team, and a LAPACK call that follows a GPU call,
// whose team spins in turn, then share the cores and wait for each other. On
// the 16-vCPU H200 machine (OpenBLAS 0.3.26, pthreads; tandem-getrs-routes,
// the routes taking turns), 256 x 8 and 512 x 8 took 3.84 and 3.39 ms with
// OpenBLAS's threads against 0.074 and 0.273 with one, and the GPU's route
// after them 4.0-145 ms at n = 256-4096 instead of 0.16-4.1. Alone, one
// thread measured from 15% faster to 33% slower than sixteen there, in two
// runs.
// One right-hand side is OpenBLAS's one-thread solve anyway (as fast and no
// slower taking turns at n = 64-4096); sgetrf up to the automatic backend's
// crossover (about n = 190) measured no faster on one thread.
bool getrs_on_one_thread(int n, int nrhs) { return nrhs > 1 && nrhs <= 8 && n <= 512; }

}  // namespace

int lapack_getrf(int m, int n, float* a, int lda, int* ipiv) {
    const lapack_int info = LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, m, n, a, lda, ipiv);
    if (info < 0)  // arguments were checked before: this is a bug, not the user's fault
        throw Error(TANDEM_ERROR_INTERNAL,
                    "LAPACKE_sgetrf_work rejected argument " + std::to_string(-info));
    return info;
}

void lapack_getrs(char trans, int n, int nrhs, const float* a, int lda, const int* ipiv,
                  float* b, int ldb, LapackThreads threads) {
    std::optional<SingleThreadedBlas> one_thread;
    if (threads == LapackThreads::by_size && getrs_on_one_thread(n, nrhs)) one_thread.emplace();
    const lapack_int info = LAPACKE_sgetrs_work(LAPACK_COL_MAJOR, trans, n, nrhs, a, lda,
                                                ipiv, b, ldb);
    if (info != 0)
        throw Error(TANDEM_ERROR_INTERNAL,
                    "LAPACKE_sgetrs_work rejected argument " + std::to_string(-info));
}

void lapack_laswp(int n, int nrhs, float* b, int ldb, const int* ipiv, bool forward) {
    if (n == 0 || nrhs == 0) return;
    const lapack_int info =
        LAPACKE_slaswp_work(LAPACK_COL_MAJOR, nrhs, b, ldb, 1, n, ipiv, forward ? 1 : -1);
    if (info != 0)
        throw Error(TANDEM_ERROR_INTERNAL,
                    "LAPACKE_slaswp_work rejected argument " + std::to_string(-info));
}

const char* lapack_name() {
    static const std::string name = [] {
        std::string config = openblas_get_config();
        return config + " (" + std::to_string(openblas_get_num_threads()) + " threads)";
    }();
    return name.c_str();
}

}  // namespace tandem
