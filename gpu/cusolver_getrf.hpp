// cuSOLVER's LU with partial pivoting (cusolverDnSgetrf) on a column-major
// device matrix: the one route to it, taken by the device panel (a panel
// transposed into its queue's staging buffer) and by factor_column_major (the
// caller's whole matrix), where tandem's recursive panel does not.
#ifndef TANDEM_GPU_CUSOLVER_GETRF_HPP
#define TANDEM_GPU_CUSOLVER_GETRF_HPP

#include <cusolverDn.h>

#include <cstddef>
#include <cstdint>

#include "gpu/device_buffer.hpp"

namespace tandem::gpu {

// Bytes of workspace cusolverDnSgetrf takes for the m x n matrix at a (lda),
// as cusolverDnSgetrf_bufferSize reports them (at least one float). A host-side
// query: nothing is issued.
size_t cusolver_getrf_workspace_bytes(cusolverDnHandle_t solver, int64_t m, int64_t n, float* a,
                                      int64_t lda);

// LU of the m x n column-major matrix at a (lda >= m) in place, issued on the
// stream `solver` is bound to: ipiv gets the min(m, n) 1-based pivots and *info
// LAPACK's info (negative: cuSOLVER rejected that argument), both device
// memory written by the stream. `workspace` is first grown to
// cusolver_getrf_workspace_bytes where it is smaller; growing frees the old
// buffer (DeviceBuffer::ensure), so no work queued before may still use it.
// `workspace_name` names it in an out-of-memory error. Every cuSOLVER status
// is checked (tandem::Error).
void cusolver_getrf(cusolverDnHandle_t solver, int64_t m, int64_t n, float* a, int64_t lda,
                    DeviceBuffer& workspace, const char* workspace_name, int* ipiv, int* info);

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_CUSOLVER_GETRF_HPP
