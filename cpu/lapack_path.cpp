#include "scheduler/cpu_backend.hpp"

#include <lapacke.h>

#include <cstdio>
#include <string>

#include "tandem/tandem.hpp"

extern "C" {
// OpenBLAS's own queries; declared here so that only lapacke.h is needed.
char* openblas_get_config(void);
int openblas_get_num_threads(void);
}

namespace tandem {

int lapack_getrf(int m, int n, float* a, int lda, int* ipiv) {
    const lapack_int info = LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, m, n, a, lda, ipiv);
    if (info < 0)  // arguments were checked before: this is a bug, not the user's fault
        throw Error(TANDEM_ERROR_INTERNAL,
                    "LAPACKE_sgetrf_work rejected argument " + std::to_string(-info));
    return info;
}

void lapack_getrs(char trans, int n, int nrhs, const float* a, int lda, const int* ipiv,
                  float* b, int ldb) {
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
