#include "scheduler/cpu_backend.hpp"

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "scheduler/cpu_panel.hpp"
#include "tandem/tandem.hpp"

namespace tandem {
namespace {

using Clock = std::chrono::steady_clock;

class HostDevice final : public Device {
public:
    HostDevice(int index, UpdatePrecision update) : index_(index), update_(update) {}

    std::string name() const override { return "host #" + std::to_string(index_); }
    std::string fingerprint() const override { return "host device"; }

    int64_t free_bytes() const override { return INT64_MAX; }
    int64_t left_factor_bytes() const override {
        return static_cast<int64_t>(sizeof(float) * left_.capacity());
    }

    using Device::allocate;
    // factor_panel works on the storage itself: a last panel needs nothing more.
    void allocate(int64_t rows, int64_t local_cols, int max_panel_width, int) override {
        try {
            rows_ = rows;
            local_cols_ = local_cols;
            ld_ = std::max<int64_t>(local_cols, 1);
            storage_.assign(static_cast<size_t>(rows * ld_), 0.0f);
            panel_.assign(static_cast<size_t>(rows * max_panel_width), 0.0f);
            inv_l11_.assign(static_cast<size_t>(max_panel_width) * max_panel_width, 0.0f);
            for (std::vector<float>& inverse : panel_inverse_)
                inverse.assign(static_cast<size_t>(max_panel_width) * max_panel_width, 0.0f);
            inverses_.clear();
            scratch_.clear();
            left_.clear();
            left_cols_ = 0;
        } catch (const std::bad_alloc&) {
            throw Error(TANDEM_ERROR_OUT_OF_MEMORY,
                        name() + ": cannot allocate " + std::to_string(rows) + " x " +
                            std::to_string(local_cols) + " floats");
        }
        panel_width_ = 0;
        has_inverse_ = false;
        events_.clear();
    }

    // Aligned to cache lines, as CUDA's pinned buffers are: a CPU panel's
    // threads split its rows at cache lines of its address, so a buffer at
    // another offset would round the panel's products differently from call
    // to call.
    static constexpr std::align_val_t kBufferAlignment{64};
    float* host_alloc(int64_t count) override {
        const size_t bytes = sizeof(float) * static_cast<size_t>(std::max<int64_t>(count, 1));
        void* p = ::operator new[](bytes, kBufferAlignment, std::nothrow);
        if (!p)
            throw Error(TANDEM_ERROR_OUT_OF_MEMORY,
                        "host_alloc: cannot allocate " + std::to_string(count) + " floats");
        return static_cast<float*>(p);
    }
    void host_free(float* ptr) override { ::operator delete[](ptr, kBufferAlignment); }

    void upload(Queue, const float* host, int64_t ldh, int64_t r0, int64_t c0, int64_t rows,
                int64_t cols) override {
        for (int64_t j = 0; j < cols; ++j)
            for (int64_t i = 0; i < rows; ++i) at(r0 + i, c0 + j) = host[j * ldh + i];
    }

    void download(Queue, float* host, int64_t ldh, int64_t r0, int64_t c0, int64_t rows,
                  int64_t cols) override {
        for (int64_t j = 0; j < cols; ++j)
            for (int64_t i = 0; i < rows; ++i) host[j * ldh + i] = at(r0 + i, c0 + j);
    }

    void receive_panel(Queue, const float* panel, int64_t ldp, int64_t rows, int width,
                       const float* inv_l11, int64_t ldi) override {
        // Workspace row-major, ld = width: the same layout a GPU would keep.
        panel_rows_ = rows;
        panel_width_ = width;
        for (int64_t i = 0; i < rows; ++i)
            for (int j = 0; j < width; ++j) panel_[i * width + j] = panel[j * ldp + i];
        has_inverse_ = inv_l11 != nullptr;
        if (has_inverse_)
            for (int i = 0; i < width; ++i)
                for (int j = 0; j < width; ++j) inv_l11_[i * width + j] = inv_l11[j * ldi + i];
    }

    void store_panel(Queue, int64_t r0, int64_t c0, int64_t rows, int width) override {
        for (int64_t i = 0; i < rows; ++i)
            std::memcpy(&at(r0 + i, c0), &panel_[i * width], sizeof(float) * width);
    }

    void factor_panel(Queue, int64_t r0, int64_t c0, int64_t rows, int width,
                      int* pivots) override {
        pivots[width] = 0;
        if (rows <= 0 || width <= 0) return;
        // The _work form: LAPACKE_sgetrf rejects a panel holding NaN (its
        // argument check), where LAPACK's sgetrf factors it and propagates the NaN.
        const lapack_int info = LAPACKE_sgetrf_work(LAPACK_ROW_MAJOR, static_cast<lapack_int>(rows),
                                                    width, &at(r0, c0), static_cast<lapack_int>(ld_),
                                                    pivots);
        if (info < 0)
            throw Error(TANDEM_ERROR_INTERNAL, name() + ": factor_panel: LAPACKE_sgetrf_work returned " +
                                                 std::to_string(info));
        pivots[width] = info;
    }

    // As a GPU does it, for the scheduler's tests: the inverse kept by slot,
    // brought along by take_panel and take_panel_from.
    bool invert_panel_l11(Queue, int64_t r0, int64_t c0, int width, int slot, float* norm) override {
        if (r0 < 0 || c0 < 0 || width <= 0 || r0 + width > rows_ || c0 + width > local_cols_ ||
            (slot != 0 && slot != 1) ||
            static_cast<size_t>(width) * width > panel_inverse_[slot].size())
            throw Error(TANDEM_ERROR_INTERNAL, name() + ": invert_panel_l11: bad block or slot");
        std::vector<float> l11(static_cast<size_t>(width) * width), inverse(l11.size());
        for (int i = 0; i < width; ++i)  // column-major for invert_unit_lower
            for (int j = 0; j < width; ++j) l11[j * width + i] = at(r0 + i, c0 + j);
        *norm = invert_unit_lower(width, l11.data(), width, inverse.data(), width, 1);
        for (int i = 0; i < width; ++i)
            for (int j = 0; j < width; ++j)
                panel_inverse_[slot][i * width + j] = j <= i ? inverse[j * width + i] : 0.0f;
        inverses_.made(slot, r0, c0, width);
        return true;
    }
    // The inverse of the panel at (r0, c0), `width` wide, into the workspace, if made.
    void bring_inverse(const HostDevice& from, int64_t r0, int64_t c0, int width) {
        const int slot = from.inverses_.find(r0, c0, width);
        if (slot < 0) return;
        std::copy_n(from.panel_inverse_[slot].begin(), static_cast<size_t>(width) * width,
                    inv_l11_.begin());
        has_inverse_ = true;
    }

    void take_panel(Queue, int64_t r0, int64_t c0, int64_t rows, int width) override {
        if (static_cast<size_t>(rows * width) > panel_.size())
            throw Error(TANDEM_ERROR_INTERNAL, name() + ": take_panel: a " + std::to_string(rows) +
                                                   " x " + std::to_string(width) +
                                                   " panel exceeds the workspace");
        panel_rows_ = rows;
        panel_width_ = width;
        has_inverse_ = false;
        for (int64_t i = 0; i < rows; ++i)
            std::memcpy(&panel_[i * width], &at(r0 + i, c0), sizeof(float) * width);
        bring_inverse(*this, r0, c0, width);
    }

    // Host devices share one address space: any other one can be read directly
    // (this stands in for a GPU's peer link in the tests).
    bool can_read(Device& source) override {
        return &source != this && dynamic_cast<HostDevice*>(&source) != nullptr;
    }

    void take_panel_from(Queue, Device& source, Event, int64_t r0, int64_t c0, int64_t rows,
                         int width) override {
        auto* from = dynamic_cast<HostDevice*>(&source);
        if (from == nullptr || from == this)
            throw Error(TANDEM_ERROR_INTERNAL,
                        name() + ": take_panel_from " + source.name() + ": not another host device");
        if (r0 < 0 || rows < 0 || r0 + rows > from->rows_ || c0 < 0 || width < 0 ||
            c0 + width > from->local_cols_ || static_cast<size_t>(rows * width) > panel_.size())
            throw Error(TANDEM_ERROR_INTERNAL, name() + ": take_panel_from: block outside " +
                                                   source.name() + "'s storage or the workspace");
        panel_rows_ = rows;
        panel_width_ = width;
        has_inverse_ = false;
        for (int64_t i = 0; i < rows; ++i)
            std::memcpy(&panel_[i * width], &from->at(r0 + i, c0), sizeof(float) * width);
        bring_inverse(*from, r0, c0, width);
    }

    void wait_for(Queue, Device&, Event) override {}  // every call has completed already

    void swap_rows(Queue, int64_t c0, int64_t cols, int64_t k1, int64_t k2,
                   const int* ipiv) override {
        swap_rows_of(storage_.data() + c0, ld_, cols, k1, k2, ipiv);
    }

    void form_u12(Queue, int64_t r0, int width, int64_t c0, int64_t cols,
                  bool use_inverse) override {
        if (cols <= 0 || width <= 0) return;
        float* a12 = &at(r0, c0);
        if (use_inverse) {
            if (!has_inverse_)
                throw Error(TANDEM_ERROR_INTERNAL, name() + ": form_u12 without inv(L11)");
            scratch_.resize(static_cast<size_t>(width * cols));
            for (int i = 0; i < width; ++i)
                std::memcpy(&scratch_[i * cols], a12 + i * ld_, sizeof(float) * cols);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, width, cols, width, 1.0f,
                        inv_l11_.data(), width, scratch_.data(), cols, 0.0f, a12, ld_);
        } else {
            cblas_strsm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, width,
                        cols, 1.0f, panel_.data(), width, a12, ld_);
        }
    }

    void update_trailing(Queue, int64_t r0, int width, int64_t rows, int64_t c0,
                         int64_t cols) override {
        if (rows <= 0 || cols <= 0 || width <= 0) return;
        const float* l21 = &panel_[static_cast<size_t>(width) * width];
        if (update_ == UpdatePrecision::tf32 || update_ == UpdatePrecision::bf16) {
            // The tensor cores' product: operands rounded, FP32 accumulation.
            const int dropped_bits = update_ == UpdatePrecision::tf32 ? 13 : 16;
            rounded_l21_.resize(static_cast<size_t>(rows) * width);
            rounded_u12_.resize(static_cast<size_t>(width) * cols);
            for (int64_t i = 0; i < rows * width; ++i)
                rounded_l21_[i] = round_mantissa(l21[i], dropped_bits);
            for (int64_t i = 0; i < width; ++i)
                for (int64_t j = 0; j < cols; ++j)
                    rounded_u12_[i * cols + j] = round_mantissa(at(r0 + i, c0 + j), dropped_bits);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, cols, width, -1.0f,
                        rounded_l21_.data(), width, rounded_u12_.data(), cols, 1.0f,
                        &at(r0 + width, c0), ld_);
            return;
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, cols, width, -1.0f, l21,
                    width, &at(r0, c0), ld_, 1.0f, &at(r0 + width, c0), ld_);
    }

    void catch_up(Queue q, int64_t c0, int64_t cols, int64_t j, const int* ipiv) override {
        if (cols <= 0 || j <= 0) return;
        const bool from_left_factors = left_cols_ > 0;
        if (from_left_factors ? j > left_cols_ || j > rows_ : j > c0)
            throw Error(TANDEM_ERROR_INTERNAL,
                        name() + ": catch_up needs L's first " + std::to_string(j) + " columns");
        const float* l = from_left_factors ? left_.data() : storage_.data();
        const int64_t ldl = from_left_factors ? left_cols_ : ld_;
        swap_rows(q, c0, cols, 0, j, ipiv);
        cblas_strsm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit,
                    static_cast<int>(j), static_cast<int>(cols), 1.0f, l, static_cast<int>(ldl),
                    &at(0, c0), static_cast<int>(ld_));
        if (rows_ > j)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows_ - j),
                        static_cast<int>(cols), static_cast<int>(j), -1.0f, l + j * ldl,
                        static_cast<int>(ldl), &at(0, c0), static_cast<int>(ld_), 1.0f,
                        &at(j, c0), static_cast<int>(ld_));
    }

    void hold_left_factors(int64_t cols) override {
        try {
            left_.assign(static_cast<size_t>(rows_ * std::max<int64_t>(cols, 0)), 0.0f);
        } catch (const std::bad_alloc&) {
            throw Error(TANDEM_ERROR_OUT_OF_MEMORY,
                        name() + ": cannot hold " + std::to_string(cols) + " columns of L");
        }
        if (cols <= 0) left_.shrink_to_fit();
        left_cols_ = std::max<int64_t>(cols, 0);
    }

    void keep_panel(Queue, int64_t j) override {
        if (j < 0 || j + panel_width_ > left_cols_ || j + panel_rows_ > rows_)
            throw Error(TANDEM_ERROR_INTERNAL, name() + ": keep_panel: a " +
                                                   std::to_string(panel_rows_) + " x " +
                                                   std::to_string(panel_width_) + " panel at " +
                                                   std::to_string(j) + " outside the left factors");
        for (int64_t i = 0; i < panel_rows_; ++i)
            std::memcpy(&left_[static_cast<size_t>((j + i) * left_cols_ + j)], &panel_[i * panel_width_],
                        sizeof(float) * panel_width_);
    }

    void swap_left_factor_rows(Queue, int64_t cols, int64_t k1, int64_t k2,
                               const int* ipiv) override {
        if (cols > left_cols_ || k1 < 0 || k2 > rows_)
            throw Error(TANDEM_ERROR_INTERNAL, name() + ": swap_left_factor_rows outside the left factors");
        swap_rows_of(left_.data(), left_cols_, cols, k1, k2, ipiv);
    }

    void solve(char trans, int64_t n, int64_t nrhs, const int* ipiv, float* b,
               int64_t ldb) override {
        if (n < 0 || nrhs < 0 || n > rows_ || n > local_cols_)
            throw Error(TANDEM_ERROR_INTERNAL, name() + ": solve: n = " + std::to_string(n) +
                                                   " needs all of an n x n matrix; the storage is " +
                                                   std::to_string(rows_) + " x " +
                                                   std::to_string(local_cols_));
        if (n == 0 || nrhs == 0) return;
        // Row-major storage S holds A; as column-major it is A^T. B is column-major.
        const bool transposed = trans != 'N' && trans != 'n';
        const float* s = storage_.data();
        if (!transposed) {  // A = P^T L U: x = U^-1 L^-1 P b
            lapack_laswp(static_cast<int>(n), static_cast<int>(nrhs), b, static_cast<int>(ldb), ipiv,
                         true);
            cblas_strsm(CblasColMajor, CblasLeft, CblasUpper, CblasTrans, CblasUnit, n, nrhs,
                        1.0f, s, ld_, b, ldb);
            cblas_strsm(CblasColMajor, CblasLeft, CblasLower, CblasTrans, CblasNonUnit, n,
                        nrhs, 1.0f, s, ld_, b, ldb);
        } else {  // A^T = U^T L^T P: x = P^T L^-T U^-T b
            cblas_strsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, n,
                        nrhs, 1.0f, s, ld_, b, ldb);
            cblas_strsm(CblasColMajor, CblasLeft, CblasUpper, CblasNoTrans, CblasUnit, n, nrhs,
                        1.0f, s, ld_, b, ldb);
            lapack_laswp(static_cast<int>(n), static_cast<int>(nrhs), b, static_cast<int>(ldb), ipiv,
                         false);
        }
    }

    // The storage read as column-major is the transpose of the local columns:
    // F(i, c) at storage[i * ld + c], so the block column's part of it
    // starting at row r is F(r:, K)^T, w x (rows), leading dimension ld_.
    void solve_block_column(char trans, char triangle, int64_t n, int64_t j, int64_t c0, int w,
                            int64_t nrhs, float* x, int64_t ldx) override {
        const std::string problem = block_column_solve_problem(trans, triangle, n, j, c0, w, nrhs,
                                                                x, ldx, rows_, local_cols_);
        if (!problem.empty())
            throw Error(TANDEM_ERROR_INTERNAL, name() + ": solve_block_column: " + problem);
        if (w == 0 || nrhs == 0) return;
        const float* diagonal = storage_.data() + j * ld_ + c0;  // F(K, K)^T
        const float* top = storage_.data() + c0;                   // F(0:j, K)^T
        // F(j+w:n, K)^T, read only where rows lie below the block
        const float* below = j + w < n ? diagonal + int64_t(w) * ld_ : nullptr;
        float* block = x + j;
        const int wi = w, ri = static_cast<int>(nrhs), ld = static_cast<int>(ld_),
                  ldxi = static_cast<int>(ldx), above = static_cast<int>(j),
                  after = static_cast<int>(n - j - w);
        const bool lower = triangle == 'L';
        // F(K, K)^T is L(K, K)^T (upper, unit) or U(K, K)^T (lower).
        const CBLAS_UPLO uplo = lower ? CblasUpper : CblasLower;
        const CBLAS_DIAG diag = lower ? CblasUnit : CblasNonUnit;
        if (trans == 'N') {
            cblas_strsm(CblasColMajor, CblasLeft, uplo, CblasTrans, diag, wi, ri, 1.0f, diagonal,
                        ld, block, ldxi);
            if (lower && after > 0)
                cblas_sgemm(CblasColMajor, CblasTrans, CblasNoTrans, after, ri, wi, -1.0f, below,
                            ld, block, ldxi, 1.0f, block + w, ldxi);
            if (!lower && above > 0)
                cblas_sgemm(CblasColMajor, CblasTrans, CblasNoTrans, above, ri, wi, -1.0f, top, ld,
                            block, ldxi, 1.0f, x, ldxi);
            return;
        }
        if (!lower && above > 0)
            cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, wi, ri, above, -1.0f, top, ld,
                        x, ldxi, 1.0f, block, ldxi);
        if (lower && after > 0)
            cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, wi, ri, after, -1.0f, below,
                        ld, block + w, ldxi, 1.0f, block, ldxi);
        cblas_strsm(CblasColMajor, CblasLeft, uplo, CblasNoTrans, diag, wi, ri, 1.0f, diagonal, ld,
                    block, ldxi);
    }

    Event record(Queue) override {
        // A second host thread (the scheduler's FactorCollector) records too.
        std::lock_guard<std::mutex> lock(events_mutex_);
        events_.push_back(Clock::now());
        return static_cast<Event>(events_.size() - 1);
    }
    void wait(Queue, Event) override {}
    void synchronize(Event) override {}
    bool query(Event) override { return true; }
    void synchronize() override {}
    double seconds_at(Event e) override {
        std::lock_guard<std::mutex> lock(events_mutex_);
        return std::chrono::duration<double>(events_.at(e) - events_.front()).count();
    }

    // The refined solve's arrays: an emulated device's memory is host memory.
    float* allocate_matrix(int64_t count) override { return host_alloc(count); }
    void free_matrix(float* p) noexcept override { host_free(p); }
    void copy_matrix(int64_t rows, int64_t cols, const float* src, int64_t lds, float* dst,
                     int64_t ldd) override {
        for (int64_t j = 0; j < cols; ++j) std::copy_n(src + j * lds, rows, dst + j * ldd);
    }
    void multiply_in_double(int64_t n, int64_t k, const float* a, int64_t lda, const double* z,
                            double* y) override {
        std::fill_n(y, n * k, 0.0);
        for (int64_t c = 0; c < k; ++c)
            for (int64_t j = 0; j < n; ++j) {
                const double zj = z[c * n + j];
                const float* column = a + j * lda;
                double* out = y + c * n;
                for (int64_t i = 0; i < n; ++i) out[i] += static_cast<double>(column[i]) * zj;
            }
    }
    double norm_inf(int64_t n, const float* a, int64_t lda) override {
        std::vector<double> sums(static_cast<size_t>(n), 0.0);
        for (int64_t j = 0; j < n; ++j)
            for (int64_t i = 0; i < n; ++i) sums[i] += std::abs(static_cast<double>(a[j * lda + i]));
        double norm = 0.0;
        for (const double s : sums) {
            if (std::isnan(s)) return s;
            norm = std::max(norm, s);
        }
        return norm;
    }

private:
    float& at(int64_t i, int64_t j) { return storage_[static_cast<size_t>(i * ld_ + j)]; }

    // LAPACK laswp on `cols` columns of a row-major block at `base` (ld).
    static void swap_rows_of(float* base, int64_t ld, int64_t cols, int64_t k1, int64_t k2,
                             const int* ipiv) {
        if (cols <= 0) return;
        for (int64_t k = k1; k < k2; ++k) {
            const int64_t p = ipiv[k] - 1;
            if (p != k) std::swap_ranges(base + k * ld, base + k * ld + cols, base + p * ld);
        }
    }

    // x rounded to nearest (ties to even) at bit `dropped_bits` of its
    // significand: TF32 (13) or BF16 (16). Inf and NaN stay themselves; a
    // finite x whose rounding would overflow is truncated instead.
    static float round_mantissa(float x, int dropped_bits) {
        uint32_t bits;
        std::memcpy(&bits, &x, sizeof bits);
        if ((bits & 0x7f800000u) == 0x7f800000u) return x;
        const uint32_t half = (1u << (dropped_bits - 1)) - 1u;
        const uint32_t mask = ~((1u << dropped_bits) - 1u);
        uint32_t rounded = (bits + half + ((bits >> dropped_bits) & 1u)) & mask;
        if ((rounded & 0x7f800000u) == 0x7f800000u) rounded = bits & mask;
        float out;
        std::memcpy(&out, &rounded, sizeof out);
        return out;
    }

    int index_;
    UpdatePrecision update_;
    std::vector<float> rounded_l21_, rounded_u12_;  // update tf32 / bf16: the rounded operands
    int64_t rows_ = 0, local_cols_ = 0, ld_ = 1;
    std::vector<float> storage_;
    std::vector<float> panel_;    // rows x width, row-major
    std::vector<float> inv_l11_;  // width x width, row-major
    std::vector<float> scratch_;  // A12 copy for the out-of-place inverse product
    std::vector<float> left_;     // the left factors: rows x left_cols_, row-major
    int64_t left_cols_ = 0;
    int64_t panel_rows_ = 0;
    int panel_width_ = 0;
    bool has_inverse_ = false;
    // invert_panel_l11's inverses (row-major, width x width) by slot, and
    // which panel each inverts.
    std::vector<float> panel_inverse_[2];
    PanelInverseSlots inverses_;
    std::mutex events_mutex_;
    std::vector<Clock::time_point> events_;
};

}  // namespace

std::unique_ptr<Device> make_host_device(int index, UpdatePrecision update) {
    return std::make_unique<HostDevice>(index, update);
}

}  // namespace tandem
