// The CudaDevice calls that work on the caller's column-major matrix in GPU
// memory rather than on this device's row-major storage (sgetrf_gpu,
// sgetrs_gpu): tandem's recursive panel or cuSOLVER's getrf, and cuSOLVER's
// getrs, in place.
#include <algorithm>
#include <string>
#include <vector>

#include "gpu/cuda_check.hpp"
#include "gpu/cuda_device.hpp"
#include "gpu/gemm.hpp"
#include "gpu/panel_leaf.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {

int* CudaDevice::resident_pivots(int64_t count) {
    const size_t bytes = sizeof(int) * static_cast<size_t>(count);
    if (resident_pivots_.bytes() < bytes)
        resident_pivots_ = DeviceBuffer(bytes, "pivots of the _gpu routines");
    return resident_pivots_.ints();
}

void CudaDevice::solve_column_major(char trans, int64_t n, int64_t nrhs, const float* a,
                                    int64_t lda, const int* ipiv, float* b, int64_t ldb) {
    DeviceGuard guard(ordinal_);
    const bool transposed = trans == 'T' || trans == 't' || trans == 'C' || trans == 'c';
    if (!transposed && trans != 'N' && trans != 'n')
        contract_error("solve_column_major", std::string("trans '") + trans + "' is not N, T or C");
    if (n == 0 || nrhs == 0) return;
    if (a == nullptr || b == nullptr || ipiv == nullptr || lda < n || ldb < n)
        contract_error("solve_column_major", "a, b or ipiv null, or lda or ldb < n");
    int* const device_pivots = resident_pivots(n + 1);
    int* const device_info = device_pivots + n;
    const cudaStream_t s = stream(Queue::compute);
    TANDEM_CUDA_CHECK(
        cudaMemcpyAsync(device_pivots, ipiv, sizeof(int) * n, cudaMemcpyHostToDevice, s));
    const int n_i = blas_int(n, "n"), nrhs_i = blas_int(nrhs, "nrhs");
    TANDEM_CUSOLVER_CHECK(cusolverDnSgetrs(solver(Queue::compute), transposed ? CUBLAS_OP_T : CUBLAS_OP_N,
                                           n_i, nrhs_i, a, blas_int(lda, "lda"), device_pivots, b,
                                           blas_int(ldb, "ldb"), device_info));
    int info = 0;
    TANDEM_CUDA_CHECK(cudaMemcpyAsync(&info, device_info, sizeof(int), cudaMemcpyDeviceToHost, s));
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(s));
    if (info != 0)
        throw Error(TANDEM_ERROR_DEVICE,
                    name_ + ": cusolverDnSgetrs reported info = " + std::to_string(info));
}

int CudaDevice::factor_column_major(int64_t m, int64_t n, float* a, int64_t lda, int* ipiv) {
    DeviceGuard guard(ordinal_);
    const int64_t k = std::min(m, n);
    if (m == 0 || n == 0) return 0;
    if (a == nullptr || ipiv == nullptr || lda < m)
        contract_error("factor_column_major", "a or ipiv null, or lda < m");
    const int m_i = blas_int(m, "m"), n_i = blas_int(n, "n"), lda_i = blas_int(lda, "lda");
    const cudaStream_t s = stream(Queue::compute);
    int* device_pivots = nullptr;  // k pivots, then the info
    if (n <= m && use_recursive_panel(m, n, true)) {
        device_pivots = resident_pivots(k + 1 + kLeafMovesInts);
        factor_recursively(Queue::compute, a, lda, true, m, static_cast<int>(n), device_pivots);
    } else {
        int work_floats = 0;
        TANDEM_CUSOLVER_CHECK(
            cusolverDnSgetrf_bufferSize(solver(Queue::compute), m_i, n_i, a, lda_i, &work_floats));
        const size_t work_bytes = sizeof(float) * static_cast<size_t>(std::max(work_floats, 1));
        if (resident_work_.bytes() < work_bytes)
            resident_work_ = DeviceBuffer(work_bytes, "sgetrf_gpu's cuSOLVER workspace");
        device_pivots = resident_pivots(k + 1);
        TANDEM_CUSOLVER_CHECK(cusolverDnSgetrf(solver(Queue::compute), m_i, n_i, a, lda_i,
                                               resident_work_.floats(), device_pivots,
                                               device_pivots + k));
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

namespace {

// `buffer` holds at least `floats` floats (grown as needed, never shrunk).
float* at_least(DeviceBuffer& buffer, int64_t floats, const char* what) {
    const size_t bytes = sizeof(float) * static_cast<size_t>(std::max<int64_t>(floats, 1));
    if (buffer.bytes() < bytes) {
        buffer.reset();  // the old one first: the two need not fit together
        buffer = DeviceBuffer(bytes, what);
    }
    return buffer.floats();
}

}  // namespace

int CudaDevice::factor_host_column_major(int64_t m, int64_t n, float* a, int64_t lda, int* ipiv) {
    DeviceGuard guard(ordinal_);
    if (m == 0 || n == 0) return 0;
    if (a == nullptr || ipiv == nullptr || lda < m)
        contract_error("factor_host_column_major", "a or ipiv null, or lda < m");
    kept_rows_ = kept_cols_ = 0;
    float* const d_a = at_least(host_matrix_, m * n, "column-major copy of the matrix");
    const cudaStream_t s = stream(Queue::compute);
    BounceBuffers& buffers = bounce(Queue::compute);
    copy_host_to_columns(a, lda, m, n, d_a, m, buffers, s);
    const int info = factor_column_major(m, n, d_a, m, ipiv);  // synchronous
    try {
        copy_columns_to_host(d_a, m, m, n, a, lda, buffers, s);
        TANDEM_CUDA_CHECK(cudaStreamSynchronize(s));
    } catch (const Error& e) {
        throw Error(e.code(), std::string(e.what()) +
                                  " (the factors were being copied into A: A is partially overwritten)");
    }
    kept_rows_ = m;
    kept_cols_ = n;
    return info;
}

void CudaDevice::solve_kept_factors(char trans, int64_t n, int64_t nrhs, const int* ipiv, float* b,
                                    int64_t ldb) {
    DeviceGuard guard(ordinal_);
    if (n != kept_rows_ || n != kept_cols_)
        contract_error("solve_kept_factors", "no " + std::to_string(n) + " x " +
                                                 std::to_string(n) + " factors are kept");
    if (n == 0 || nrhs == 0) return;
    if (b == nullptr || ldb < n) contract_error("solve_kept_factors", "b null or ldb < n");
    float* const d_b = at_least(host_rhs_, n * nrhs, "right-hand sides");
    const cudaStream_t s = stream(Queue::compute);
    BounceBuffers& buffers = bounce(Queue::compute);
    copy_host_to_columns(b, ldb, n, nrhs, d_b, n, buffers, s);
    solve_column_major(trans, n, nrhs, host_matrix_.floats(), n, ipiv, d_b, n);  // synchronous
    copy_columns_to_host(d_b, n, n, nrhs, b, ldb, buffers, s);
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(s));
}

}  // namespace tandem::gpu
