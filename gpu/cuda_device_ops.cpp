// CudaDevice: the matrix operations of one LU step, each issued asynchronously
// on the queue it is given. Shapes and layouts are those of scheduler/device.hpp;
// the device keeps everything row-major (see cuda_device.hpp).
#include <algorithm>
#include <string>

#include "gpu/cuda_check.hpp"
#include "gpu/cuda_device.hpp"
#include "gpu/permute_rows.hpp"
#include "gpu/split_product.hpp"
#include "gpu/swap_rows.hpp"
#include "gpu/transpose.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {

void CudaDevice::upload(Queue q, const float* host, int64_t ldh, int64_t r0, int64_t c0,
                        int64_t rows, int64_t cols) {
    DeviceGuard guard(ordinal_);
    check_block("upload", r0, c0, rows, cols);
    if (rows == 0 || cols == 0) return;
    if (host == nullptr || ldh < rows)
        contract_error("upload", "host block null or ldh " + std::to_string(ldh) + " < rows");
    copy_host_to_row_major(host, ldh, rows, cols, at(r0, c0), ld_, staging(q), bounce(q),
                           stream(q));
}

void CudaDevice::download(Queue q, float* host, int64_t ldh, int64_t r0, int64_t c0,
                          int64_t rows, int64_t cols) {
    DeviceGuard guard(ordinal_);
    check_block("download", r0, c0, rows, cols);
    if (rows == 0 || cols == 0) return;
    if (host == nullptr || ldh < rows)
        contract_error("download", "host block null or ldh " + std::to_string(ldh) + " < rows");
    copy_row_major_to_host(at(r0, c0), ld_, rows, cols, host, ldh, staging(q), bounce(q),
                           stream(q));
}

void CudaDevice::receive_panel(Queue q, const float* panel, int64_t ldp, int64_t rows, int width,
                               const float* inv_l11, int64_t ldi) {
    DeviceGuard guard(ordinal_);
    if (rows < 0 || rows > rows_ || width < 0 || width > max_width_)
        contract_error("receive_panel", "a " + std::to_string(rows) + " x " +
                                            std::to_string(width) + " panel does not fit the " +
                                            std::to_string(rows_) + " x " +
                                            std::to_string(max_width_) + " workspace");
    if ((rows > 0 && width > 0 && (panel == nullptr || ldp < rows)) ||
        (inv_l11 != nullptr && width > 0 && ldi < width))
        contract_error("receive_panel", "panel null or ldp < rows, or ldi < width");
    // The bookkeeping is the host's view at issue time: operations issued after
    // this call use the new panel, whatever the queues are still doing.
    next_workspace();
    panel_rows_ = rows;
    panel_width_ = width;
    has_inverse_ = inv_l11 != nullptr;
    copy_host_to_row_major(panel, ldp, rows, width, panel_workspace(), panel_ld_, staging(q),
                           bounce(q), stream(q));
    if (has_inverse_)
        copy_host_to_row_major(inv_l11, ldi, width, width, inverse_workspace(), panel_ld_,
                               staging(q), bounce(q), stream(q));
}

void CudaDevice::store_panel(Queue q, int64_t r0, int64_t c0, int64_t rows, int width) {
    DeviceGuard guard(ordinal_);
    check_block("store_panel", r0, c0, rows, width);
    check_panel("store_panel", width, rows);
    if (rows == 0 || width == 0) return;
    TANDEM_CUDA_CHECK(cudaMemcpy2DAsync(at(r0, c0), sizeof(float) * ld_, panel_workspace(),
                                        sizeof(float) * panel_ld_, sizeof(float) * width, rows,
                                        cudaMemcpyDeviceToDevice, stream(q)));
}

void CudaDevice::swap_rows(Queue q, int64_t c0, int64_t cols, int64_t k1, int64_t k2,
                           const int* ipiv) {
    DeviceGuard guard(ordinal_);
    check_block("swap_rows", 0, c0, 0, cols);
    if (k1 < 0 || k2 < k1 || k2 > rows_)
        contract_error("swap_rows", "rows k1 = " + std::to_string(k1) + " .. k2 = " +
                                        std::to_string(k2) + " outside 0 .. " +
                                        std::to_string(rows_));
    if (cols == 0 || k1 == k2) return;
    check_pivots("swap_rows", k1, k2, ipiv);
    gpu::swap_rows(at(0, c0), ld_, cols, k1, k2, ipiv, stream(q));
}

// U12 = inv(L11) * A12 cannot be formed in place: the product goes to the
// queue's staging buffer (width x chunk, row-major) and is copied back, in
// column chunks when A12 is wider than the staging buffer allows.
void CudaDevice::form_u12(Queue q, int64_t r0, int width, int64_t c0, int64_t cols,
                          bool use_inverse) {
    DeviceGuard guard(ordinal_);
    check_block("form_u12", r0, c0, width, cols);
    if (width == 0 || cols == 0) return;  // reads no workspace (Device contract)
    check_panel("form_u12", width, width);
    if (use_inverse && !has_inverse_)
        contract_error("form_u12", "the inverse path needs inv(L11), not received with the panel");
    float* a12 = at(r0, c0);
    if (!use_inverse) {
        trsm_unit_lower_left(blas(q), width, cols, panel_workspace(), panel_ld_, a12, ld_);
        return;
    }
    const Staging scratch = staging(q);
    const int64_t chunk = std::min<int64_t>(cols, scratch.capacity / width);
    for (int64_t j = 0; j < cols; j += chunk) {
        const int64_t n = std::min(chunk, cols - j);
        product(q, width, n, width, 1.0f, inverse_workspace(), panel_ld_, a12 + j, ld_, 0.0f,
                scratch.data, n);
        TANDEM_CUDA_CHECK(cudaMemcpy2DAsync(a12 + j, sizeof(float) * ld_, scratch.data,
                                            sizeof(float) * n, sizeof(float) * n, width,
                                            cudaMemcpyDeviceToDevice, stream(q)));
    }
}

// A22 -= L21 * U12, with L21 the workspace rows width .. width+rows.
void CudaDevice::update_trailing(Queue q, int64_t r0, int width, int64_t rows, int64_t c0,
                                 int64_t cols) {
    update_trailing_leaving_sms(q, r0, width, rows, c0, cols, 0);
}

void CudaDevice::update_trailing_beside_panel(Queue q, int64_t r0, int width, int64_t rows,
                                              int64_t c0, int64_t cols) {
    update_trailing_leaving_sms(q, r0, width, rows, c0, cols,
                                share_beside_update(rows).sms_left);
}

CudaDevice::PanelShare CudaDevice::share_beside_update(int64_t rows) const {
    const PanelShare share =
        rows <= kRowsOfPanelBoundSteps ? kShareBesidePanelBoundStep : kShareBesideTallPanel;
    // Both shares were measured on GPUs of 132 SMs; one with no more than
    // twice the larger share's SMs keeps the plain calls for every panel.
    const bool shared = update_precision_ != UpdatePrecision::fp32 &&
                        panel_method_ == DevicePanelMethod::automatic &&
                        sm_count_ > 2 * kShareBesidePanelBoundStep.sms_left;
    return shared ? share : PanelShare{};
}

void CudaDevice::update_trailing_leaving_sms(Queue q, int64_t r0, int width, int64_t rows,
                                             int64_t c0, int64_t cols, int sms_left) {
    DeviceGuard guard(ordinal_);
    if (rows < 0) contract_error("update_trailing", "rows = " + std::to_string(rows) + " < 0");
    check_block("update_trailing", r0, c0, width + rows, cols);
    if (rows == 0 || cols == 0 || width == 0) return;  // reads no workspace (Device contract)
    check_panel("update_trailing", width, width + rows);
    const float* l21 = panel_workspace() + int64_t(width) * panel_ld_;
    if (update_precision_ == UpdatePrecision::fp32) {
        product(q, rows, cols, width, -1.0f, l21, panel_ld_, at(r0, c0), ld_, 1.0f,
                at(r0 + width, c0), ld_);
        return;
    }
    // The tensor-core products are cuBLAS's: its SM target is this handle's
    // until it is reset, also when the product fails.
    const BlasQueue where = blas(q);
    const bool leave_sms = sms_left > 0;
    if (leave_sms) TANDEM_CUBLAS_CHECK(cublasSetSmCountTarget(where.handle, sm_count_ - sms_left));
    try {
        if (update_precision_ == UpdatePrecision::tf32x3) {
            update_trailing_tf32x3(q, r0, width, rows, c0, cols);
        } else {
            const cublasComputeType_t compute = update_precision_ == UpdatePrecision::tf32
                                                    ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                    : CUBLAS_COMPUTE_32F_FAST_16BF;
            gemm_tensor_cores(where, compute, rows, cols, width, -1.0f, l21, panel_ld_,
                              at(r0, c0), ld_, 1.0f, at(r0 + width, c0), ld_);
        }
    } catch (...) {
        if (leave_sms) (void)cublasSetSmCountTarget(where.handle, 0);
        throw;
    }
    if (leave_sms) TANDEM_CUBLAS_CHECK(cublasSetSmCountTarget(where.handle, 0));
}

void CudaDevice::ensure_split_buffer(Queue q, DeviceBuffer& buffer, size_t bytes) {
    if (buffer.bytes() >= bytes) return;
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream(q)));
    buffer.ensure(bytes, "split operand (tf32x3 update)");
}

// L21 is split once per workspace fill and queue (the look-ahead and the rest
// of a step's update share it), U12's columns at each call.
void CudaDevice::update_trailing_tf32x3(Queue q, int64_t r0, int width, int64_t rows, int64_t c0,
                                        int64_t cols) {
    const int qi = static_cast<int>(q);
    const cudaStream_t s = stream(q);
    SplitPanel& split = split_of_[qi];
    if (split.fill != workspace_fill_[slot_] || split.rows != rows || split.width != width) {
        ensure_split_buffer(q, split_l21_[qi], sizeof(float) * 3 * rows * width);
        split_left_tf32x3(s, rows, width, panel_workspace() + int64_t(width) * panel_ld_,
                          panel_ld_, split_l21_[qi].floats());
        split = {workspace_fill_[slot_], rows, width};
    }
    ensure_split_buffer(q, split_u12_[qi], sizeof(float) * 3 * width * cols);
    split_right_tf32x3(s, width, cols, at(r0, c0), ld_, split_u12_[qi].floats());
    product_tf32x3(blas(q), rows, cols, width, -1.0f, split_l21_[qi].floats(),
                   split_u12_[qi].floats(), 1.0f, at(r0 + width, c0), ld_);
}

// The deferred block's catch-up: the row interchanges of the first j columns,
// U = inv(L11) A(0:j, c) by TRSM with the whole leading j x j unit lower
// triangle of the storage, then A(j:, c) -= L(j:, 0:j) U in one product.
void CudaDevice::catch_up(Queue q, int64_t c0, int64_t cols, int64_t j, const int* ipiv) {
    DeviceGuard guard(ordinal_);
    check_block("catch_up", 0, c0, rows_, cols);
    // L's first j columns: the left factors while held, else the storage's.
    const bool from_left_factors = left_cols_ > 0;
    if (from_left_factors ? j < 0 || j > std::min(rows_, left_cols_)
                          : j < 0 || j > std::min(rows_, local_cols_) || (j > c0 && cols > 0))
        contract_error("catch_up", "the first " + std::to_string(j) +
                                       " columns must be held here" +
                                       (from_left_factors ? " in the left factors"
                                                          : ", left of column " + std::to_string(c0)));
    const float* l = from_left_factors ? left_factors_.floats() : storage_.floats();
    const int64_t ldl = from_left_factors ? left_ld_ : ld_;
    if (cols == 0 || j == 0) return;
    // The j interchanges as one gather through the permutation perm_, which
    // folds in the pivots as catch-ups ask for more of them (on this queue, in
    // order). Applying them with the swap kernel would take j / 512 launches
    // with 16 KB of parameters each: they fill the launch queue and block the
    // host behind the device's backlog. A pageable copy of a permutation could
    // synchronise with the stream, too.
    if (j < perm_folded_)
        contract_error("catch_up", "j = " + std::to_string(j) + " after a catch-up to " +
                                       std::to_string(perm_folded_));
    check_pivots("catch_up", perm_folded_, j, ipiv);
    const cudaStream_t s = stream(q);
    fold_swaps(perm_.ints(), perm_folded_, j - perm_folded_, ipiv, s);
    perm_folded_ = j;
    // In column chunks of w through the staging buffer: the gathered rows
    // (rows x w, row-major); rows j.. go back to the block as they are (the
    // product below updates them), and the top j rows, transposed to
    // column-major, take their place in the buffer, where the left-side TRSM
    // forms U of those columns, inv(L(0:j, 0:j)) times them: faster than the
    // right-side TRSM that the row-major storage would take
    // (tandem-catch-up-parts). A chunk needs w x max(rows, 2 j) floats, so a
    // block as wide as the buffer's columns goes in one piece while j <= rows / 2.
    const Staging scratch = staging(q);
    const int64_t chunk = std::min<int64_t>(
        cols, scratch.capacity / std::max<int64_t>({rows_, 2 * j, 1}));
    if (chunk < 1)
        contract_error("catch_up", "the staging buffer holds no column of " +
                                       std::to_string(std::max(rows_, 2 * j)) + " floats");
    float* gathered = scratch.data;
    float* block = at(0, c0);
    for (int64_t c = 0; c < cols; c += chunk) {
        const int64_t w = std::min(chunk, cols - c);
        gather_rows_row_major(block + c, ld_, gathered, w, rows_, w, perm_.ints(), s);
        if (rows_ > j)  // rows j.. as they are: the product below updates them
            TANDEM_CUDA_CHECK(cudaMemcpy2DAsync(block + j * ld_ + c, sizeof(float) * ld_,
                                                gathered + j * w, sizeof(float) * w,
                                                sizeof(float) * w, rows_ - j,
                                                cudaMemcpyDeviceToDevice, s));
        // Rows 0..j, row-major with ld w, are a w x j column-major matrix;
        // its transpose goes where rows j.. were (j x w, ld j).
        float* top = gathered + j * w;
        transpose(gathered, w, w, j, top, j, s);
        trsm_unit_lower_left_on_columns(blas(q), j, w, l, ldl, top, j);
        transpose(top, j, j, w, block + c, ld_, s);
    }
    if (rows_ > j)
        product(q, rows_ - j, cols, j, -1.0f, l + j * ldl, ldl, block, ld_, 1.0f, at(j, c0), ld_);
}

void CudaDevice::keep_panel(Queue q, int64_t j) {
    DeviceGuard guard(ordinal_);
    if (j < 0 || j + panel_width_ > left_cols_ || j + panel_rows_ > rows_)
        contract_error("keep_panel", "a " + std::to_string(panel_rows_) + " x " +
                                         std::to_string(panel_width_) + " panel at " +
                                         std::to_string(j) + " outside " +
                                         std::to_string(left_cols_) + " columns of left factors");
    if (panel_rows_ == 0 || panel_width_ == 0) return;
    TANDEM_CUDA_CHECK(cudaMemcpy2DAsync(left_factors_.floats() + j * left_ld_ + j,
                                        sizeof(float) * left_ld_, panel_workspace(),
                                        sizeof(float) * panel_ld_, sizeof(float) * panel_width_,
                                        panel_rows_, cudaMemcpyDeviceToDevice, stream(q)));
}

void CudaDevice::swap_left_factor_rows(Queue q, int64_t cols, int64_t k1, int64_t k2,
                                       const int* ipiv) {
    DeviceGuard guard(ordinal_);
    if (cols < 0 || cols > left_cols_ || k1 < 0 || k2 < k1 || k2 > rows_)
        contract_error("swap_left_factor_rows", "columns 0 .. " + std::to_string(cols) +
                                                    ", rows " + std::to_string(k1) + " .. " +
                                                    std::to_string(k2) + " outside the left factors");
    if (cols == 0 || k1 == k2) return;
    check_pivots("swap_left_factor_rows", k1, k2, ipiv);
    gpu::swap_rows(left_factors_.floats(), left_ld_, cols, k1, k2, ipiv, stream(q));
}

}  // namespace tandem::gpu
