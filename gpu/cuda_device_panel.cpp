// CudaDevice: the GPU placement of a panel factorization, by one of three routes.
// - tandem's recursive panel (recursive_panel.hpp) factors the row-major
//   storage as it lies, for narrow panels whose rows its leaves hold.
// - cuSOLVER's getrf, or the recursive panel on wider panels, work on a
//   column-major panel, the storage is row-major: the panel is
//   transposed into the queue's staging buffer, factored there and transposed
//   back (factoring the transposed view in place would pivot columns, not
//   rows). Both transposes together move 4 * rows * width * 4 bytes: about
//   20 us for a 32768 x 256 panel on an H200, against milliseconds for the
//   factorization itself.
#include <algorithm>
#include <optional>
#include <string>

#include "gpu/cuda_check.hpp"
#include "gpu/cuda_device.hpp"
#include "gpu/cusolver_getrf.hpp"
#include "gpu/gemm.hpp"
#include "gpu/invert_lower.hpp"
#include "gpu/panel_leaf.hpp"
#include "gpu/recursive_panel.hpp"
#include "gpu/transpose.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {
namespace {

constexpr const char* kGetrfWorkspaceName = "cuSOLVER getrf workspace";

}  // namespace

void CudaDevice::ensure_getrf_workspace(Queue q, int64_t rows, int width, bool cusolver_work) {
    const int index = static_cast<int>(q);
    if (rows <= 0 || width <= 0) return;
    // The size cusolver_getrf will ask for this panel in staging(q), so that it
    // finds the workspace large enough and never grows it mid-factorization.
    const size_t work_bytes =
        cusolver_work ? cusolver_getrf_workspace_bytes(solver(q), rows, width, staging(q).data, rows)
                      : 0;
    // The pivots, the info, and the recursive panel's lists of row moves, as
    // many as any of the factorization's (shorter) panels may keep.
    const int widest = std::max(width, max_width_);
    const int64_t scratch = panel_scratch_ints(std::min<int64_t>(rows, kCatchUpMaxRows), widest);
    const size_t pivot_bytes = sizeof(int) * static_cast<size_t>(widest + scratch);
    if (getrf_work_[index].bytes() >= work_bytes && getrf_pivots_[index].bytes() >= pivot_bytes)
        return;
    // Buffers still in use by earlier work on this queue must not be freed under it.
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream(q)));
    getrf_work_[index].ensure(work_bytes, kGetrfWorkspaceName);
    getrf_pivots_[index].ensure(pivot_bytes, "panel pivots");
}

// The panels are factored on the transfer queue: its workspace now, not
// mid-factorization (growing it synchronizes the queue).
void CudaDevice::ensure_getrf_workspaces(int64_t rows, int max_panel_width, int last_panel_width) {
    ensure_getrf_workspace(Queue::transfer, rows, max_panel_width, true);
    ensure_getrf_workspace(Queue::transfer, last_panel_width, last_panel_width, true);
}

void CudaDevice::factor_panel_beside_update(Queue q, int64_t r0, int64_t c0, int64_t rows,
                                            int width, int* pivots) {
    std::optional<LeafClusterCap> cap;  // see PanelShare
    if (const int blocks = share_beside_update(rows).leaf_cluster_cap; blocks > 0)
        cap.emplace(blocks);
    factor_panel(q, r0, c0, rows, width, pivots);
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
    const bool in_place = use_recursive_panel(rows, width, false);
    const bool transposed_recursive = !in_place && use_recursive_panel(rows, width, true);
    ensure_getrf_workspace(q, rows, width, !in_place && !transposed_recursive);
    const int index = static_cast<int>(q);
    const cudaStream_t s = stream(q);
    int* device_pivots = getrf_pivots_[index].ints();
    if (in_place) {
        factor_recursively(q, at(r0, c0), ld_, false, rows, width, device_pivots);
    } else {
        const Staging scratch = staging(q);
        if (rows * width > scratch.capacity)
            contract_error("factor_panel", "a " + std::to_string(rows) + " x " +
                                               std::to_string(width) +
                                               " panel exceeds the staging buffer");
        // Row-major rows x width is column-major width x rows: its transpose is the panel.
        transpose(at(r0, c0), ld_, width, rows, scratch.data, rows, s);
        if (transposed_recursive) {
            factor_recursively(q, scratch.data, rows, true, rows, width, device_pivots);
        } else {
            TANDEM_CUSOLVER_CHECK(cusolverDnSetStream(solver(q), s));
            cusolver_getrf(solver(q), rows, width, scratch.data, rows, getrf_work_[index],
                           kGetrfWorkspaceName, device_pivots, device_pivots + width);
        }
        transpose(scratch.data, rows, rows, width, at(r0, c0), ld_, s);
    }
    TANDEM_CUDA_CHECK(cudaMemcpyAsync(pivots, device_pivots, sizeof(int) * (width + 1),
                                      cudaMemcpyDeviceToHost, s));
}

// Automatic takes the recursive panel wherever its leaves reach (up to 65536
// rows): with leaves held by thread block clusters it measured faster than
// cuSOLVER's getrf on every column-major panel tried on the H200, 1.04-1.36x
// from 1024 x 128 to 65536 x 512 and the whole 2048^2, 4096^2 and 8192^2
// (2026-11-22, tandem-device-panel-parts; docs/ALGORITHM.md).
// Row-major panels of up to 128 columns are factored in place; wider ones
// are transposed and factored column-major, for cuBLAS's TRSM of row-major
// blocks (a right-sided solve to cuBLAS) is about half as fast (138 against
// 85 us at 512 x 512).
bool CudaDevice::use_recursive_panel(int64_t rows, int64_t width, bool column_major) const {
    constexpr int64_t kRowMajorWidth = 128;
    if (panel_method_ == DevicePanelMethod::cusolver) return false;
    return recursive_panel_fits(rows) && (column_major || width <= kRowMajorWidth);
}

SubtractProduct CudaDevice::panel_product(Queue q, int64_t ld, bool column_major) {
    // The panel's own products go to cuBLAS unless tandem's kernels are
    // forced: the tuning table holds the trailing update's shapes, and on the
    // recursion's shapes its picks made the whole 4096^2 and 8192^2 recursive
    // panels 6% and 4% slower than with cuBLAS (10.87 against 10.25 ms, 33.48
    // against 32.10; the H200, one call's calibrations, 2026-11-22).
    const bool tandem_kernels = gemm_policy_ == GemmKernel::tandem;
    return [this, q, ld, column_major, tandem_kernels](int64_t m, int64_t n, int64_t k,
                                                      const float* x, const float* y, float* c) {
        auto row_major_product = [&](int64_t rm, int64_t rn, const float* rx, const float* ry) {
            if (tandem_kernels) product(q, rm, rn, k, -1.0f, rx, ld, ry, ld, 1.0f, c, ld);
            else gemm(blas(q), rm, rn, k, -1.0f, rx, ld, ry, ld, 1.0f, c, ld);
        };
        // Column-major c -= x y is row-major c^T -= y^T x^T.
        if (column_major) row_major_product(n, m, y, x);
        else row_major_product(m, n, x, y);
    };
}

void CudaDevice::factor_recursively(Queue q, float* a, int64_t ld, bool column_major, int64_t rows,
                                    int width, int* device_pivots) {
    int* const info = device_pivots + width;
    TANDEM_CUDA_CHECK(cudaMemsetAsync(info, 0, sizeof(int), stream(q)));
    // The caller's scratch has panel_scratch_ints(rows, width) ints after the pivots.
    const DevicePanel panel{a, ld, column_major, rows, width, device_pivots, info, info + 1,
                            panel_move_lists(rows, width)};
    factor_panel_recursive(panel, blas(q), panel_product(q, ld, column_major));
}

bool CudaDevice::invert_panel_l11(Queue q, int64_t r0, int64_t c0, int width, int slot,
                                  float* norm) {
    DeviceGuard guard(ordinal_);
    check_block("invert_panel_l11", r0, c0, width, width);
    if (slot != 0 && slot != 1) contract_error("invert_panel_l11", "slot " + std::to_string(slot));
    if (norm == nullptr) contract_error("invert_panel_l11", "no norm to write");
    if (width > max_width_ || !gpu::unit_lower_inverse_fits(width)) return false;
    gpu::invert_unit_lower(blas(q), width, at(r0, c0), ld_, panel_inverse_[slot].floats(),
                           panel_ld_, inverse_scratch_.floats(), norm);
    inverses_.made(slot, r0, c0, width);
    return true;
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
    bring_inverse(q, *this, r0, c0, rows, width);
}

void CudaDevice::bring_inverse(Queue q, const CudaDevice& owner, int64_t r0, int64_t c0, int64_t rows,
                               int width) {
    const int inverse = owner.inverses_.find(r0, c0, width);
    if (inverse < 0 || rows < width) return;
    // Unified addressing: the owner's slot on this GPU or on a peer alike.
    TANDEM_CUDA_CHECK(cudaMemcpy2DAsync(inverse_workspace(), sizeof(float) * panel_ld_,
                                        owner.panel_inverse_[inverse].floats(),
                                        sizeof(float) * owner.panel_ld_, sizeof(float) * width,
                                        width, cudaMemcpyDefault, stream(q)));
    has_inverse_ = true;
}

}  // namespace tandem::gpu
