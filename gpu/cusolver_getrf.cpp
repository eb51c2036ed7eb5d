#include "gpu/cusolver_getrf.hpp"

#include <algorithm>

#include "gpu/cuda_check.hpp"
#include "gpu/gemm.hpp"

namespace tandem::gpu {

size_t cusolver_getrf_workspace_bytes(cusolverDnHandle_t solver, int64_t m, int64_t n, float* a,
                                      int64_t lda) {
    int work_floats = 0;
    TANDEM_CUSOLVER_CHECK(cusolverDnSgetrf_bufferSize(solver, blas_int(m, "getrf rows"),
                                                      blas_int(n, "getrf columns"), a,
                                                      blas_int(lda, "getrf lda"), &work_floats));
    return sizeof(float) * static_cast<size_t>(std::max(work_floats, 1));
}

void cusolver_getrf(cusolverDnHandle_t solver, int64_t m, int64_t n, float* a, int64_t lda,
                    DeviceBuffer& workspace, const char* workspace_name, int* ipiv, int* info) {
    workspace.ensure(cusolver_getrf_workspace_bytes(solver, m, n, a, lda), workspace_name);
    TANDEM_CUSOLVER_CHECK(cusolverDnSgetrf(solver, blas_int(m, "getrf rows"),
                                           blas_int(n, "getrf columns"), a,
                                           blas_int(lda, "getrf lda"), workspace.floats(), ipiv,
                                           info));
}

}  // namespace tandem::gpu
