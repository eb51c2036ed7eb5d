// The CudaDevice calls that factor a column-major matrix rather than this
// device's row-major storage: the caller's in GPU memory (sgetrf_gpu, in place)
// or a copy of the caller's host matrix (sgetrf's one-panel plans), with
// tandem's recursive panel or cuSOLVER's getrf. Their solves are in
// cuda_device_solve.cpp.
#include <algorithm>
#include <string>
#include <vector>

#include "gpu/cuda_check.hpp"
#include "gpu/cuda_device.hpp"
#include "gpu/cusolver_getrf.hpp"
#include "gpu/gemm.hpp"
#include "gpu/panel_leaf.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {

int* CudaDevice::resident_pivots(int64_t count) {
    const size_t bytes = sizeof(int) * static_cast<size_t>(count);
    resident_pivots_.ensure(bytes, "pivots of the _gpu routines");
    return resident_pivots_.ints();
}

int CudaDevice::factor_column_major(int64_t m, int64_t n, float* a, int64_t lda, int* ipiv) {
    DeviceGuard guard(ordinal_);
    const int64_t k = std::min(m, n);
    if (m == 0 || n == 0) return 0;
    if (a == nullptr || ipiv == nullptr || lda < m)
        contract_error("factor_column_major", "a or ipiv null, or lda < m");
    // cuBLAS and cuSOLVER take int sizes: checked before either route touches A.
    blas_int(m, "m");
    blas_int(n, "n");
    blas_int(lda, "lda");
    const cudaStream_t s = stream(Queue::compute);
    int* device_pivots = nullptr;  // k pivots, then the info
    if (n <= m && use_recursive_panel(m, n, true)) {
        device_pivots = resident_pivots(k + 1 + kLeafMovesInts);
        factor_recursively(Queue::compute, a, lda, true, m, static_cast<int>(n), device_pivots);
    } else {
        device_pivots = resident_pivots(k + 1);
        cusolver_getrf(solver(Queue::compute), m, n, a, lda, resident_work_,
                       "sgetrf_gpu's cuSOLVER workspace", device_pivots, device_pivots + k);
    }
    std::vector<int> pivots_and_info(static_cast<size_t>(k + 1));
    TANDEM_CUDA_CHECK(cudaMemcpyAsync(pivots_and_info.data(), device_pivots,
                                      sizeof(int) * pivots_and_info.size(), cudaMemcpyDeviceToHost,
                                      s));
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(s));
    std::copy(pivots_and_info.begin(), pivots_and_info.end() - 1, ipiv);
    const int info = pivots_and_info.back();
    if (info < 0)  // cuSOLVER's; the recursive panel reports none
        throw Error(TANDEM_ERROR_DEVICE, name_ + ": cusolverDnSgetrf rejected argument " +
                                             std::to_string(-info));
    return info;
}

int CudaDevice::factor_host_column_major(int64_t m, int64_t n, float* a, int64_t lda, int* ipiv) {
    DeviceGuard guard(ordinal_);
    if (m == 0 || n == 0) return 0;
    if (a == nullptr || ipiv == nullptr || lda < m)
        contract_error("factor_host_column_major", "a or ipiv null, or lda < m");
    kept_rows_ = kept_cols_ = 0;
    host_matrix_.ensure(sizeof(float) * static_cast<size_t>(m * n), "column-major copy of the matrix");
    float* const d_a = host_matrix_.floats();
    const cudaStream_t s = stream(Queue::compute);
    BounceBuffers& buffers = bounce(Queue::compute);
    copy_host_to_columns(a, lda, m, n, d_a, m, buffers, s);
    const int info = factor_column_major(m, n, d_a, m, ipiv);  // synchronous
    try {
        copy_columns_to_host(d_a, m, m, n, a, lda, buffers, s);
        TANDEM_CUDA_CHECK(cudaStreamSynchronize(s));
    } catch (const Error& e) {
        // Never an out-of-memory code: that would let the caller fall back to
        // the CPU, which would factor the half-written A.
        const int code = e.code() == TANDEM_ERROR_OUT_OF_MEMORY ? TANDEM_ERROR_DEVICE : e.code();
        throw Error(code, std::string(e.what()) +
                              " (the factors were being copied into A: A is partially overwritten; "
                              "ipiv holds the pivots)");
    }
    kept_rows_ = m;
    kept_cols_ = n;
    return info;
}

}  // namespace tandem::gpu
