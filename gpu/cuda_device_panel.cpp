// CudaDevice: the GPU placement of a panel factorization, by one of two routes.
// - tandem's recursive panel (recursive_panel.hpp) factors the row-major
//   storage as it lies, for panels whose rows its one-block leaves hold.
// - cuSOLVER's getrf is column-major, the storage row-major: the panel is
//   transposed into the queue's staging buffer, factored there and transposed
//   back (factoring the transposed view in place would pivot columns, not
//   rows). Both transposes together move 4 * rows * width * 4 bytes: about
//   20 us for a 32768 x 256 panel on an H200, against milliseconds for the
//   factorization itself.
#include <algorithm>
#include <string>

#include "gpu/cuda_check.hpp"
#include "gpu/cuda_device.hpp"
#include "gpu/panel_leaf.hpp"
#include "gpu/recursive_panel.hpp"
#include "gpu/transpose.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {

void CudaDevice::ensure_getrf_workspace(Queue q, int64_t rows, int width) {
    const int index = static_cast<int>(q);
    if (rows <= 0 || width <= 0) return;
    const int rows_i = blas_int(rows, "panel rows"), width_i = width;
    int work_floats = 0;
    TANDEM_CUSOLVER_CHECK(cusolverDnSgetrf_bufferSize(solvers_[index], rows_i, width_i,
                                                      staging(q).data, rows_i, &work_floats));
    const size_t work_bytes = sizeof(float) * static_cast<size_t>(std::max(work_floats, 1));
    // The pivots, the info, and the recursive panel's list of row moves.
    const size_t pivot_bytes =
        sizeof(int) * static_cast<size_t>(std::max(width, max_width_) + 1 + kLeafMovesInts);
    if (getrf_work_[index].bytes() >= work_bytes && getrf_pivots_[index].bytes() >= pivot_bytes)
        return;
    // Buffers still in use by earlier work on this queue must not be freed under it.
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream(q)));
    if (getrf_work_[index].bytes() < work_bytes)
        getrf_work_[index] = DeviceBuffer(work_bytes, "cuSOLVER getrf workspace");
    if (getrf_pivots_[index].bytes() < pivot_bytes)
        getrf_pivots_[index] = DeviceBuffer(pivot_bytes, "panel pivots");
}

// The panels are factored on the transfer queue: its workspace now, not
// mid-factorization (growing it synchronizes the queue).
void CudaDevice::ensure_getrf_workspaces(int64_t rows, int max_panel_width, int last_panel_width) {
    ensure_getrf_workspace(Queue::transfer, rows, max_panel_width);
    ensure_getrf_workspace(Queue::transfer, last_panel_width, last_panel_width);
}

void CudaDevice::factor_panel(Queue q, int64_t r0, int64_t c0, int64_t rows, int width,
                              int* pivots) {
    DeviceGuard guard(ordinal_);
    check_block("factor_panel", r0, c0, rows, width);
    if (pivots == nullptr) contract_error("factor_panel", "pivots is null");
    if (width > rows)
        contract_error("factor_panel", "a panel of " + std::to_string(rows) + " rows cannot be " +
                                           std::to_string(width) + " wide");
    pivots[width] = 0;  // written now: nothing below runs for an empty panel
    if (rows == 0 || width == 0) return;
    if (use_recursive_panel(rows, width, false)) {
        factor_panel_recursively(q, r0, c0, rows, width, pivots);
        return;
    }
    const Staging scratch = staging(q);
    if (rows * width > scratch.capacity)
        contract_error("factor_panel", "a " + std::to_string(rows) + " x " +
                                           std::to_string(width) +
                                           " panel exceeds the staging buffer");
    ensure_getrf_workspace(q, rows, width);
    const int index = static_cast<int>(q);
    const cudaStream_t s = stream(q);
    const int rows_i = blas_int(rows, "panel rows");
    int* device_pivots = getrf_pivots_[index].ints();

    // Row-major rows x width is column-major width x rows: its transpose is the panel.
    transpose(at(r0, c0), ld_, width, rows, scratch.data, rows, s);
    TANDEM_CUSOLVER_CHECK(cusolverDnSetStream(solvers_[index], s));
    TANDEM_CUSOLVER_CHECK(cusolverDnSgetrf(solvers_[index], rows_i, width, scratch.data, rows_i,
                                           getrf_work_[index].floats(), device_pivots,
                                           device_pivots + width));
    transpose(scratch.data, rows, rows, width, at(r0, c0), ld_, s);
    TANDEM_CUDA_CHECK(cudaMemcpyAsync(pivots, device_pivots, sizeof(int) * (width + 1),
                                      cudaMemcpyDeviceToHost, s));
}

// Automatic takes the recursive panel where it measured faster than
// cuSOLVER's getrf on the H200 (2026-11-22, medians; docs/PERFORMANCE.md):
// - the caller's column-major matrix (sgetrf_gpu in one piece): up to 2048
//   rows (tools/probes/device_panel_parts.cpp: 2048 x 2048 in 3.83 against
//   4.55 ms, 2048 x 512 1.06 against 1.37), not at 4096 (4096 x 4096: 12.5
//   against 11.7; 8-column leaves, and a column costs more);
// - tandem's row-major storage: only up to 128 columns (the calibration:
//   2048 x 128 in 0.34 against 0.38 ms with the transposes; 2048 x 512 1.45
//   against 1.40, the whole 2048 x 2048 5.10 against 4.59), for cuBLAS's
//   right-sided TRSM of row-major blocks is about half as fast.
bool CudaDevice::use_recursive_panel(int64_t rows, int64_t width, bool column_major) const {
    constexpr int64_t kAutomaticRows = 2048, kAutomaticRowMajorWidth = 128;
    switch (panel_method_) {
    case DevicePanelMethod::cusolver: return false;
    case DevicePanelMethod::recursive: return recursive_panel_fits(rows);
    case DevicePanelMethod::automatic: break;
    }
    return rows <= kAutomaticRows && recursive_panel_fits(rows) &&
           (column_major || width <= kAutomaticRowMajorWidth);
}

void CudaDevice::factor_panel_recursively(Queue q, int64_t r0, int64_t c0, int64_t rows,
                                          int width, int* pivots) {
    ensure_getrf_workspace(q, rows, width);
    const int index = static_cast<int>(q);
    const cudaStream_t s = stream(q);
    int* device_pivots = getrf_pivots_[index].ints();
    int* const info = device_pivots + width;
    TANDEM_CUDA_CHECK(cudaMemsetAsync(info, 0, sizeof(int), s));
    const DevicePanel panel{at(r0, c0), ld_, false, rows, width, device_pivots, info, info + 1};
    factor_panel_recursive(panel, blas(q),
                           [&](int64_t m, int64_t n, int64_t k, const float* a, const float* b,
                               float* c) { product(q, m, n, k, -1.0f, a, ld_, b, ld_, 1.0f, c, ld_); });
    TANDEM_CUDA_CHECK(cudaMemcpyAsync(pivots, device_pivots, sizeof(int) * (width + 1),
                                      cudaMemcpyDeviceToHost, s));
}

void CudaDevice::take_panel(Queue q, int64_t r0, int64_t c0, int64_t rows, int width) {
    DeviceGuard guard(ordinal_);
    check_block("take_panel", r0, c0, rows, width);
    if (width > max_width_)
        contract_error("take_panel", "width " + std::to_string(width) + " exceeds the workspace's " +
                                         std::to_string(max_width_));
    // Host-side bookkeeping at issue time, as in receive_panel.
    next_workspace();
    panel_rows_ = rows;
    panel_width_ = width;
    has_inverse_ = false;
    if (rows == 0 || width == 0) return;
    TANDEM_CUDA_CHECK(cudaMemcpy2DAsync(panel_workspace(), sizeof(float) * panel_ld_, at(r0, c0),
                                        sizeof(float) * ld_, sizeof(float) * width, rows,
                                        cudaMemcpyDeviceToDevice, stream(q)));
}

}  // namespace tandem::gpu
