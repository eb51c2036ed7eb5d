// CudaDevice::solve_column_major: the solve of sgetrs_gpu, whose factors are
// the caller's column-major matrix in GPU memory (not this device's row-major
// storage): cuSOLVER's getrs does the interchanges and both triangular solves.
#include <string>

#include "gpu/cuda_check.hpp"
#include "gpu/cuda_device.hpp"
#include "gpu/gemm.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {

void CudaDevice::solve_column_major(char trans, int64_t n, int64_t nrhs, const float* a,
                                    int64_t lda, const int* ipiv, float* b, int64_t ldb) {
    DeviceGuard guard(ordinal_);
    const bool transposed = trans == 'T' || trans == 't' || trans == 'C' || trans == 'c';
    if (!transposed && trans != 'N' && trans != 'n')
        contract_error("solve_column_major", std::string("trans '") + trans + "' is not N, T or C");
    if (n == 0 || nrhs == 0) return;
    if (a == nullptr || b == nullptr || ipiv == nullptr || lda < n || ldb < n)
        contract_error("solve_column_major", "a, b or ipiv null, or lda or ldb < n");
    const size_t pivot_bytes = sizeof(int) * static_cast<size_t>(n + 1);
    if (getrs_pivots_.bytes() < pivot_bytes)
        getrs_pivots_ = DeviceBuffer(pivot_bytes, "sgetrs_gpu's pivots");
    int* const device_pivots = getrs_pivots_.ints();
    int* const device_info = device_pivots + n;

    // After whatever the caller queued on the device (sgetrf_gpu returns with
    // its queues idle; the caller's own streams are the caller's to order).
    TANDEM_CUDA_CHECK(cudaDeviceSynchronize());
    const cudaStream_t s = stream(Queue::compute);
    const int index = static_cast<int>(Queue::compute);
    TANDEM_CUDA_CHECK(
        cudaMemcpyAsync(device_pivots, ipiv, sizeof(int) * n, cudaMemcpyHostToDevice, s));
    TANDEM_CUSOLVER_CHECK(cusolverDnSetStream(solvers_[index], s));
    const int n_i = blas_int(n, "n"), nrhs_i = blas_int(nrhs, "nrhs");
    TANDEM_CUSOLVER_CHECK(cusolverDnSgetrs(solvers_[index], transposed ? CUBLAS_OP_T : CUBLAS_OP_N,
                                           n_i, nrhs_i, a, blas_int(lda, "lda"), device_pivots, b,
                                           blas_int(ldb, "ldb"), device_info));
    int info = 0;
    TANDEM_CUDA_CHECK(cudaMemcpyAsync(&info, device_info, sizeof(int), cudaMemcpyDeviceToHost, s));
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(s));
    if (info != 0)
        throw Error(TANDEM_ERROR_DEVICE,
                    name_ + ": cusolverDnSgetrs reported info = " + std::to_string(info));
}

}  // namespace tandem::gpu
