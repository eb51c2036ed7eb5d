// CudaDevice::solve: op(A) X = B with the LU factors held in row-major storage.
//
// The row-major factors F, read as column-major by cuBLAS, are F^T: L appears
// as the unit UPPER triangle and U as the LOWER triangle (with the diagonal).
// With P A = L U, i.e. A = P^T L U:
//   'N':  X = U^-1 L^-1 (P B)      -> gather rows, trsm(Upper, T, Unit), trsm(Lower, T, NonUnit)
//   'T':  X = P^T L^-T U^-T B      -> trsm(Lower, N, NonUnit), trsm(Upper, N, Unit), scatter rows
// B stays column-major on the device, so no transposes are needed; the pivots
// become one permutation applied by a gather/scatter kernel (the per-swap
// laswp is sequential in n and would dominate a solve with few right-hand sides).
#include <algorithm>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "gpu/cuda_check.hpp"
#include "gpu/cuda_device.hpp"
#include "gpu/permute_rows.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {
namespace {

// perm[i] = the row of B that P moves to row i: the swaps of ipiv applied in
// order to 0 .. n-1. (P B)(i, :) = B(perm[i], :).
std::vector<int> permutation_of(int64_t n, const int* ipiv, const std::string& device) {
    std::vector<int> perm(static_cast<size_t>(n));
    std::iota(perm.begin(), perm.end(), 0);
    for (int64_t k = 0; k < n; ++k) {
        const int64_t p = int64_t(ipiv[k]) - 1;
        if (p < 0 || p >= n)
            throw Error(TANDEM_ERROR_INTERNAL, device + ": solve: ipiv[" + std::to_string(k) +
                                                   "] = " + std::to_string(ipiv[k]) +
                                                   " is outside 1 .. " + std::to_string(n));
        std::swap(perm[k], perm[p]);
    }
    return perm;
}

}  // namespace

void CudaDevice::solve(char trans, int64_t n, int64_t nrhs, const int* ipiv, float* b,
                       int64_t ldb) {
    DeviceGuard guard(ordinal_);
    const bool transposed = trans == 'T' || trans == 't' || trans == 'C' || trans == 'c';
    if (!transposed && trans != 'N' && trans != 'n')
        contract_error("solve", std::string("trans '") + trans + "' is not N, T or C");
    if (n < 0 || nrhs < 0 || n > rows_ || n > local_cols_)
        contract_error("solve", "n = " + std::to_string(n) + " needs all of an n x n matrix; "
                                "the storage is " + std::to_string(rows_) + " x " +
                                std::to_string(local_cols_));
    if (n == 0 || nrhs == 0) return;
    if (ipiv == nullptr || b == nullptr || ldb < n)
        contract_error("solve", "ipiv or b null, or ldb " + std::to_string(ldb) + " < n");
    const std::vector<int> perm = permutation_of(n, ipiv, name_);

    // The factors may still be arriving on the other queues; the solve runs on compute.
    const cudaStream_t s = stream(Queue::compute);
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream(Queue::transfer)));
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream(Queue::copy)));

    // Right-hand sides go in column chunks of two n x chunk buffers (in and out
    // of the permutation), each at most a quarter of free memory and 1 GiB.
    const int64_t budget = std::clamp<int64_t>(free_bytes() / 4, int64_t(64) << 20,
                                               int64_t(1) << 30) / int64_t(sizeof(float));
    const int64_t chunk = std::clamp<int64_t>(budget / n, 1, nrhs);
    DeviceBuffer perm_d(sizeof(int) * n, "solve's row permutation");
    DeviceBuffer x0(sizeof(float) * n * chunk, "solve's right-hand sides");
    DeviceBuffer x1(sizeof(float) * n * chunk, "solve's permuted right-hand sides");
    TANDEM_CUDA_CHECK(cudaMemcpyAsync(perm_d.ints(), perm.data(), sizeof(int) * n,
                                      cudaMemcpyHostToDevice, s));

    const cublasHandle_t h = blas(Queue::compute).handle;
    const float one = 1.0f;
    const float* factors = storage_.floats();
    const int n_i = blas_int(n, "n"), ld_i = blas_int(ld_, "ld");
    for (int64_t j = 0; j < nrhs; j += chunk) {
        const int64_t cols = std::min(chunk, nrhs - j);
        const int cols_i = blas_int(cols, "nrhs");
        TANDEM_CUDA_CHECK(cudaMemcpy2DAsync(x0.floats(), sizeof(float) * n, b + j * ldb,
                                            sizeof(float) * ldb, sizeof(float) * n, cols,
                                            cudaMemcpyHostToDevice, s));
        if (!transposed) {
            permute_rows(x0.floats(), n, x1.floats(), n, n, cols, perm_d.ints(), false, s);
            TANDEM_CUBLAS_CHECK(cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER,
                                            CUBLAS_OP_T, CUBLAS_DIAG_UNIT, n_i, cols_i, &one,
                                            factors, ld_i, x1.floats(), n_i));
            TANDEM_CUBLAS_CHECK(cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER,
                                            CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, n_i, cols_i,
                                            &one, factors, ld_i, x1.floats(), n_i));
        } else {
            TANDEM_CUBLAS_CHECK(cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER,
                                            CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n_i, cols_i,
                                            &one, factors, ld_i, x0.floats(), n_i));
            TANDEM_CUBLAS_CHECK(cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER,
                                            CUBLAS_OP_N, CUBLAS_DIAG_UNIT, n_i, cols_i, &one,
                                            factors, ld_i, x0.floats(), n_i));
            permute_rows(x0.floats(), n, x1.floats(), n, n, cols, perm_d.ints(), true, s);
        }
        TANDEM_CUDA_CHECK(cudaMemcpy2DAsync(b + j * ldb, sizeof(float) * ldb, x1.floats(),
                                            sizeof(float) * n, sizeof(float) * n, cols,
                                            cudaMemcpyDeviceToHost, s));
    }
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(s));
}

}  // namespace tandem::gpu
