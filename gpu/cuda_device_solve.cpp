// CudaDevice's solves: op(A) X = B with the LU factors held in row-major
// storage (solve), in the caller's column-major array in GPU memory
// (solve_column_major, sgetrs_gpu), or in the column-major copy a one-panel
// host-memory factorization left (solve_kept_factors).
//
// The row-major factors F, read as column-major by cuBLAS, are F^T: L appears
// as the unit UPPER triangle and U as the LOWER triangle (with the diagonal).
// With P A = L U, i.e. A = P^T L U:
//   'N':  X = U^-1 L^-1 (P B)      -> gather rows, trsm(Upper, T, Unit), trsm(Lower, T, NonUnit)
//   'T':  X = P^T L^-T U^-T B      -> trsm(Lower, N, NonUnit), trsm(Upper, N, Unit), scatter rows
// B is copied column-major into the device's buffers (from host or GPU
// memory), so no transposes are needed; the pivots
// become one permutation applied by a gather/scatter kernel (the per-swap
// laswp is sequential in n and would dominate a solve with few right-hand sides).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "gpu/cuda_check.hpp"
#include "gpu/cuda_device.hpp"
#include "gpu/permute_rows.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {

void CudaDevice::solve(char trans, int64_t n, int64_t nrhs, const int* ipiv, float* b,
                       int64_t ldb) {
    DeviceGuard guard(ordinal_);
    if (n < 0 || nrhs < 0 || n > rows_ || n > local_cols_)
        contract_error("solve", "n = " + std::to_string(n) + " needs all of an n x n matrix; "
                                "the storage is " + std::to_string(rows_) + " x " +
                                std::to_string(local_cols_));
    // The factors may still be arriving on the other queues; the solve runs on compute.
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream(Queue::transfer)));
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream(Queue::copy)));
    solve_with_factors(storage_.floats(), ld_, false, trans, n, nrhs, ipiv, b, ldb);
}

void CudaDevice::solve_column_major(char trans, int64_t n, int64_t nrhs, const float* a,
                                    int64_t lda, const int* ipiv, float* b, int64_t ldb) {
    DeviceGuard guard(ordinal_);
    if (n > 0 && (a == nullptr || lda < n)) contract_error("solve_column_major", "a null or lda < n");
    solve_with_factors(a, lda, true, trans, n, nrhs, ipiv, b, ldb);
}

void CudaDevice::solve_kept_factors(char trans, int64_t n, int64_t nrhs, const int* ipiv, float* b,
                                    int64_t ldb) {
    DeviceGuard guard(ordinal_);
    if (n != kept_rows_ || n != kept_cols_)
        contract_error("solve_kept_factors", "no " + std::to_string(n) + " x " +
                                                 std::to_string(n) + " factors are kept");
    solve_with_factors(host_matrix_.floats(), n, true, trans, n, nrhs, ipiv, b, ldb);
}

// The block column's part of the factors read as column-major is
// F(r:, K)^T (w wide, leading dimension ld_): the header's table, block by
// block. X's rows that the block reads go up into solve_rhs_[0] (n x nrhs, at
// their own rows), the rows it changes come back.
void CudaDevice::solve_block_column(char trans, char triangle, int64_t n, int64_t j, int64_t c0,
                                    int w, int64_t nrhs, float* x, int64_t ldx) {
    DeviceGuard guard(ordinal_);
    const std::string problem = block_column_solve_problem(trans, triangle, n, j, c0, w, nrhs, x,
                                                           ldx, rows_, local_cols_);
    if (!problem.empty()) contract_error("solve_block_column", problem);
    if (w == 0 || nrhs == 0) return;
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream(Queue::transfer)));
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream(Queue::copy)));
    const cudaStream_t s = stream(Queue::compute);
    solve_rhs_[0].ensure(sizeof(float) * static_cast<size_t>(n * nrhs), "solve's right-hand sides");
    float* const xd = solve_rhs_[0].floats();
    const bool lower = triangle == 'L';
    // Rows read: the block and those below it (L) or above it (U); rows
    // written: the same for 'N', the block alone for 'T'.
    const int64_t read_begin = lower ? j : 0, read_end = lower ? n : j + w;
    const int64_t write_begin = trans == 'N' ? read_begin : j;
    const int64_t write_end = trans == 'N' ? read_end : j + w;
    auto copy_rows = [&](int64_t begin, int64_t end, bool up) {
        float* const host = x + begin;
        float* const device = xd + begin;
        TANDEM_CUDA_CHECK(cudaMemcpy2DAsync(
            up ? device : host, sizeof(float) * (up ? n : ldx), up ? host : device,
            sizeof(float) * (up ? ldx : n), sizeof(float) * (end - begin), nrhs,
            up ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, s));
    };
    copy_rows(read_begin, read_end, true);

    const cublasHandle_t h = blas(Queue::compute).handle;
    const float one = 1.0f, minus_one = -1.0f;
    const float* diagonal = at(j, c0);  // F(K, K)^T: L(K, K)^T (upper, unit) or U(K, K)^T (lower)
    const float* top = at(0, c0);       // F(0:j, K)^T
    const float* below = j + w < n ? at(j + w, c0) : nullptr;  // F(j+w:n, K)^T
    float* const block = xd + j;
    const int wi = w, ri = blas_int(nrhs, "nrhs"), ld = blas_int(ld_, "ld"),
              ldn = blas_int(n, "n"), above = blas_int(j, "j"), after = blas_int(n - j - w, "n");
    const cublasFillMode_t fill = lower ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
    const cublasDiagType_t diag = lower ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
    const cublasOperation_t op = trans == 'N' ? CUBLAS_OP_T : CUBLAS_OP_N;
    auto solve_diagonal = [&] {
        TANDEM_CUBLAS_CHECK(cublasStrsm(h, CUBLAS_SIDE_LEFT, fill, op, diag, wi, ri, &one,
                                        diagonal, ld, block, ldn));
    };
    auto solve_block = [&] {
        if (trans == 'N') {
            solve_diagonal();
            if (lower && after > 0)
                TANDEM_CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, after, ri, wi,
                                                &minus_one, below, ld, block, ldn, &one, block + w,
                                                ldn));
            if (!lower && above > 0)
                TANDEM_CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, above, ri, wi,
                                                &minus_one, top, ld, block, ldn, &one, xd, ldn));
            return;
        }
        if (!lower && above > 0)
            TANDEM_CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, wi, ri, above, &minus_one,
                                            top, ld, xd, ldn, &one, block, ldn));
        if (lower && after > 0)
            TANDEM_CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, wi, ri, after, &minus_one,
                                            below, ld, block + w, ldn, &one, block, ldn));
        solve_diagonal();
    };
    // X's rows are on their way up from the caller's buffer: a failure must
    // not leave that copy running once this returns.
    try {
        solve_block();
        copy_rows(write_begin, write_end, false);
    } catch (...) {
        (void)cudaStreamSynchronize(s);
        throw;
    }
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(s));
}

// With column-major factors F (as sgetrf leaves them: L unit lower, U upper)
// and P A = L U:
//   'N':  X = U^-1 L^-1 (P B)      -> gather rows, trsm(Lower, N, Unit), trsm(Upper, N, NonUnit)
//   'T':  X = P^T L^-T U^-T B      -> trsm(Upper, T, NonUnit), trsm(Lower, T, Unit), scatter rows
// (row-major factors read as F^T: the header's table). cuBLAS alone: a
// process whose first GPU call solves never loads cuSOLVER, whose first
// handle cost about 200 ms on an H100.
void CudaDevice::solve_with_factors(const float* factors, int64_t ld, bool column_major, char trans,
                                    int64_t n, int64_t nrhs, const int* ipiv, float* b,
                                    int64_t ldb) {
    const bool transposed = trans == 'T' || trans == 't' || trans == 'C' || trans == 'c';
    if (!transposed && trans != 'N' && trans != 'n')
        contract_error("solve", std::string("trans '") + trans + "' is not N, T or C");
    if (n < 0 || nrhs < 0) contract_error("solve", "n or nrhs negative");
    if (n == 0 || nrhs == 0) return;
    if (ipiv == nullptr || b == nullptr || ldb < n)
        contract_error("solve", "ipiv or b null, or ldb " + std::to_string(ldb) + " < n");
    const std::vector<int> perm = fold_pivots(ipiv, n, n, name_ + ": solve");
    const cudaStream_t s = stream(Queue::compute);

    // Right-hand sides go in column chunks of two n x chunk buffers (in and out
    // of the permutation), each at most a quarter of free memory and 1 GiB;
    // kept between calls up to kKeptSolveBytes each, so that small solves cost
    // no cudaMalloc and large ones leave no gigabytes behind.
    const int64_t budget = std::clamp<int64_t>(free_bytes() / 4, int64_t(64) << 20,
                                               int64_t(1) << 30) / int64_t(sizeof(float));
    const int64_t chunk = std::clamp<int64_t>(budget / n, 1, nrhs);
    const size_t rhs_bytes = sizeof(float) * static_cast<size_t>(n * chunk);
    for (DeviceBuffer& buffer : solve_rhs_) buffer.ensure(rhs_bytes, "solve's right-hand sides");
    solve_perm_.ensure(sizeof(int) * static_cast<size_t>(n), "solve's row permutation");
    float* const x0 = solve_rhs_[0].floats();
    float* const x1 = solve_rhs_[1].floats();
    TANDEM_CUDA_CHECK(cudaMemcpyAsync(solve_perm_.ints(), perm.data(), sizeof(int) * n,
                                      cudaMemcpyHostToDevice, s));

    const cublasHandle_t h = blas(Queue::compute).handle;
    const float one = 1.0f;
    const int n_i = blas_int(n, "n"), ld_i = blas_int(ld, "ld");
    // The two triangles as cuBLAS sees the factors: L first, then U.
    const cublasFillMode_t l_fill = column_major ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
    const cublasFillMode_t u_fill = column_major ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
    // op(F) for L^-1 and U^-1 ('N'), L^-T and U^-T ('T').
    const cublasOperation_t op =
        (column_major != transposed) ? CUBLAS_OP_N : CUBLAS_OP_T;
    auto solve_l = [&](float* x, int cols_i) {
        TANDEM_CUBLAS_CHECK(cublasStrsm(h, CUBLAS_SIDE_LEFT, l_fill, op, CUBLAS_DIAG_UNIT, n_i,
                                        cols_i, &one, factors, ld_i, x, n_i));
    };
    auto solve_u = [&](float* x, int cols_i) {
        TANDEM_CUBLAS_CHECK(cublasStrsm(h, CUBLAS_SIDE_LEFT, u_fill, op, CUBLAS_DIAG_NON_UNIT, n_i,
                                        cols_i, &one, factors, ld_i, x, n_i));
    };
    for (int64_t j = 0; j < nrhs; j += chunk) {
        const int64_t cols = std::min(chunk, nrhs - j);
        const int cols_i = blas_int(cols, "nrhs");
        TANDEM_CUDA_CHECK(cudaMemcpy2DAsync(x0, sizeof(float) * n, b + j * ldb,
                                            sizeof(float) * ldb, sizeof(float) * n, cols,
                                            cudaMemcpyDefault, s));
        if (!transposed) {
            permute_rows(x0, n, x1, n, n, cols, solve_perm_.ints(), false, s);
            solve_l(x1, cols_i);
            solve_u(x1, cols_i);
        } else {
            solve_u(x0, cols_i);
            solve_l(x0, cols_i);
            permute_rows(x0, n, x1, n, n, cols, solve_perm_.ints(), true, s);
        }
        TANDEM_CUDA_CHECK(cudaMemcpy2DAsync(b + j * ldb, sizeof(float) * ldb, x1,
                                            sizeof(float) * n, sizeof(float) * n, cols,
                                            cudaMemcpyDefault, s));
    }
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(s));
    constexpr size_t kKeptSolveBytes = size_t(64) << 20;
    if (rhs_bytes > kKeptSolveBytes)
        for (DeviceBuffer& buffer : solve_rhs_) buffer.reset();
}

}  // namespace tandem::gpu
