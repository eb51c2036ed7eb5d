// The device interface (scheduler/device.hpp) implemented on one CUDA device.
//
// What lives on the device, per allocate(rows, local_cols, max_panel_width,
// last_panel_width):
//   storage_    rows x local_cols, ROW-MAJOR, ld_ = local_cols rounded up to 32
//               floats (every row starts 128-byte aligned).
//   panel_[2]   the two panel workspaces (see Device): up to rows x max_panel_width,
//               row-major (panel_ld_); slot_ is the one filled last.
//   inv_l11_[2] inv(L11) of each workspace's panel, max_panel_width^2, row-major (panel_ld_).
//   staging_[q] one transposing-copy buffer per queue (also the scratch of the
//               out-of-place product U12 = inv(L11) * A12, and the column-major
//               copy of a panel factored column-major: rows x max_panel_width or
//               last_panel_width^2, whichever is larger), so that the two queues
//               never share one.
//   getrf_work_[q], getrf_pivots_[q]  cuSOLVER getrf's workspace; the panel's
//               pivots and info (and the recursive panel's row moves).
//   left_factors_  while held (hold_left_factors): rows x left_cols_, row-major.
// And on the host, per queue, pinned bounce buffers for large copies from and to
// pageable memory (allocated on first use, kept across allocate()).
// Queues are three non-blocking CUDA streams (compute at low priority, transfer
// and copy at high), each with its own cuBLAS and cuSOLVER handle (a handle's
// workspace must not be shared by concurrent streams). Events
// come from a pool that allocate() recycles. Every public method makes this
// device current for its duration and restores the caller's device.
#ifndef TANDEM_GPU_CUDA_DEVICE_HPP
#define TANDEM_GPU_CUDA_DEVICE_HPP

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpu/bounce_buffers.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/gemm.hpp"
#include "gpu/recursive_panel.hpp"
#include "gpu/sgemm_tuning_table.hpp"
#include "gpu/transfer.hpp"
#include "scheduler/device.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {

class CudaDevice final : public Device {
public:
    explicit CudaDevice(int ordinal);
    ~CudaDevice() override;
    CudaDevice(const CudaDevice&) = delete;
    CudaDevice& operator=(const CudaDevice&) = delete;

    std::string name() const override { return name_; }
    // Whether the CUDA context this device's objects were made in still
    // exists (an application's cudaDeviceReset() destroys it).
    bool context_alive() const noexcept;
    // The GPU, its driver and runtime, and the SGEMM policy of its updates
    // (Options::gemm changes the measured update rate).
    std::string fingerprint() const override;
    int64_t free_bytes() const override;
    int64_t left_factor_bytes() const override { return int64_t(left_factors_.bytes()); }
    using Device::allocate;
    void allocate(int64_t rows, int64_t local_cols, int max_panel_width,
                  int last_panel_width) override;
    float* host_alloc(int64_t count) override;
    void host_free(float* ptr) override;

    void upload(Queue q, const float* host, int64_t ldh, int64_t r0, int64_t c0, int64_t rows,
                int64_t cols) override;
    void download(Queue q, float* host, int64_t ldh, int64_t r0, int64_t c0, int64_t rows,
                  int64_t cols) override;
    void receive_panel(Queue q, const float* panel, int64_t ldp, int64_t rows, int width,
                       const float* inv_l11, int64_t ldi) override;
    void store_panel(Queue q, int64_t r0, int64_t c0, int64_t rows, int width) override;
    void factor_panel(Queue q, int64_t r0, int64_t c0, int64_t rows, int width,
                      int* pivots) override;
    void factor_panel_beside_update(Queue q, int64_t r0, int64_t c0, int64_t rows, int width,
                                    int* pivots) override;
    bool invert_panel_l11(Queue q, int64_t r0, int64_t c0, int width, int slot,
                          float* norm) override;
    void take_panel(Queue q, int64_t r0, int64_t c0, int64_t rows, int width) override;
    bool can_read(Device& source) override;
    void take_panel_from(Queue q, Device& source, Event ready, int64_t r0, int64_t c0,
                         int64_t rows, int width) override;
    void wait_for(Queue q, Device& source, Event e) override;
    void swap_rows(Queue q, int64_t c0, int64_t cols, int64_t k1, int64_t k2,
                   const int* ipiv) override;
    void form_u12(Queue q, int64_t r0, int width, int64_t c0, int64_t cols,
                  bool use_inverse) override;
    void update_trailing(Queue q, int64_t r0, int width, int64_t rows, int64_t c0,
                         int64_t cols) override;
    void update_trailing_beside_panel(Queue q, int64_t r0, int width, int64_t rows, int64_t c0,
                                      int64_t cols) override;
    void catch_up(Queue q, int64_t c0, int64_t cols, int64_t j, const int* ipiv) override;
    void hold_left_factors(int64_t cols) override;
    void keep_panel(Queue q, int64_t j) override;
    void swap_left_factor_rows(Queue q, int64_t cols, int64_t k1, int64_t k2,
                               const int* ipiv) override;
    void solve_block_column(char trans, char triangle, int64_t n, int64_t j, int64_t c0, int w,
                            int64_t nrhs, float* x, int64_t ldx) override;
    void solve(char trans, int64_t n, int64_t nrhs, const int* ipiv, float* b,
               int64_t ldb) override;

    Event record(Queue q) override;
    void wait(Queue q, Event e) override;
    void synchronize(Event e) override;
    bool query(Event e) override;
    void synchronize() override;
    double seconds_at(Event e) override;
    std::vector<double> seconds_at_each(const std::vector<Event>& events) override;

    // Which SGEMM the updates use (Options::gemm); automatic reads the tuning
    // table of this GPU from cache_dir (the shipped sm_90 table without one).
    void set_gemm_policy(GemmKernel kernel, const std::string& cache_dir);
    // How factor_panel factors (Options::device_panel).
    void set_panel_method(DevicePanelMethod method) { panel_method_ = method; }
    // The arithmetic of update_trailing (Options::update_precision).
    void set_update_precision(UpdatePrecision precision) { update_precision_ = precision; }

    // sgetrs_gpu: op(A) X = B with column-major LU factors `a` (lda) and
    // right-hand sides `b` (ldb, overwritten with X), both in this GPU's
    // memory; ipiv (1-based, checked by the caller) in host memory. Runs on
    // the compute queue and returns when done; the caller orders it after the
    // writes to a and b (Solver::use_device_memory waits for the GPU).
    void solve_column_major(char trans, int64_t n, int64_t nrhs, const float* a, int64_t lda,
                            const int* ipiv, float* b, int64_t ldb) override;
    // sgetrf_gpu when the plan is one device panel over the whole matrix: the
    // device's panel routine (tandem's recursive panel where its leaves reach
    // and n <= m, else cuSOLVER's getrf; Options::device_panel forces either)
    // on the caller's column-major matrix in this GPU's memory, in place,
    // without the row-major copy and its transposes. ipiv (min(m, n) ints) is host memory. Returns LAPACK's
    // info. Ordered and synchronous as solve_column_major.
    int factor_column_major(int64_t m, int64_t n, float* a, int64_t lda, int* ipiv) override;
    // sgetrf on the caller's HOST matrix when the plan is one device panel over
    // the whole matrix: the matrix is copied as it is (column-major, no
    // transposes) into a buffer of this GPU, factored there by
    // factor_column_major, and copied back. The factors stay in the buffer for
    // solve_kept_factors until the next call that uses it. Synchronous.
    int factor_host_column_major(int64_t m, int64_t n, float* a, int64_t lda, int* ipiv) override;
    // From kOverlappedCopyLeastFloats floats on, with n <= m, where tandem's
    // recursive panel takes the whole matrix.
    bool hides_host_copies(int64_t m, int64_t n) const override;
    bool last_host_call_hid_copies() const override { return host_call_hid_copies_; }
    std::vector<TimelineSpan> last_host_call_spans() const override { return host_call_spans_; }
    // op(A) X = B for B in host memory, with the n x n factors that the last
    // factor_host_column_major left on this GPU (ipiv: its pivots, host memory).
    void solve_kept_factors(char trans, int64_t n, int64_t nrhs, const int* ipiv, float* b,
                            int64_t ldb) override;

    // The refined solve's arrays and products (cuda_device_refine.cpp), on the
    // compute queue, synchronous: cudaMalloc'd memory of this GPU, copies by
    // cudaMemcpy2D (either side host or this GPU), products with A in double
    // through a device buffer for Z and Y.
    float* allocate_matrix(int64_t count) override;
    void free_matrix(float* p) noexcept override;
    void copy_matrix(int64_t rows, int64_t cols, const float* src, int64_t lds, float* dst,
                     int64_t ldd) override;
    void multiply_in_double(int64_t n, int64_t k, const float* a, int64_t lda, const double* z,
                            double* y) override;
    double norm_inf(int64_t n, const float* a, int64_t lda) override;

private:
    // C = alpha A B + beta C, row-major, with the kernel the policy picks.
    void product(Queue q, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                 int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

    cudaStream_t stream(Queue q) const;
    BlasQueue blas(Queue q) const { return {stream(q), blas_handle(q)}; }
    cublasHandle_t blas_handle(Queue q) const;  // queue q's, made at its first use
    cusolverDnHandle_t solver(Queue q) const;   // likewise
    Staging staging(Queue q) const;
    BounceBuffers& bounce(Queue q) { return bounce_[static_cast<int>(q)]; }
    float* at(int64_t r, int64_t c) const { return storage_.floats() + r * ld_ + c; }
    cudaEvent_t event(Event e) const;

    // Contract checks: a violation is a scheduler bug, reported as TANDEM_ERROR_INTERNAL.
    void check_block(const char* op, int64_t r0, int64_t c0, int64_t rows, int64_t cols) const;
    void check_panel(const char* op, int width, int64_t rows_used) const;
    // ipiv[k1 .. k2) are rows of the storage (1-based).
    void check_pivots(const char* op, int64_t k1, int64_t k2, const int* ipiv) const;
    [[noreturn]] void contract_error(const char* op, const std::string& what) const;

    // Queue q's panel pivots (with the info and the leaves' moves) for a panel
    // up to `width` wide, and with cusolver_work cuSOLVER getrf's workspace
    // for a rows x width panel (asking cuSOLVER its size costs host time, so
    // the recursive panel's routes skip it).
    void ensure_getrf_workspace(Queue q, int64_t rows, int width, bool cusolver_work);
    // Whether a rows x width panel goes to tandem's recursive panel rather
    // than cuSOLVER's getrf: the method, the leaves' reach, and the layout.
    // column_major: a column-major panel (the caller's matrix of sgetrf_gpu, or
    // a row-major panel transposed into scratch); else the row-major storage
    // in place.
    bool use_recursive_panel(int64_t rows, int64_t width, bool column_major) const;
    // tandem's recursive panel on the rows x width panel at a (rows within the
    // leaves' reach) on queue q: device_pivots gets the width pivots, then the
    // info, then the leaves' moves (panel_scratch_ints(rows, width) ints in all).
    void factor_recursively(Queue q, float* a, int64_t ld, bool column_major, int64_t rows,
                            int width, int* device_pivots);
    // c -= x y for the recursive panel on queue q (leading dimension ld, the
    // panel's layout): cuBLAS, or tandem's kernels when they are forced.
    SubtractProduct panel_product(Queue q, int64_t ld, bool column_major);
    // factor_host_column_major with the copies beside the factorization: the
    // columns in parts split at `bounds`, each factored while the next
    // arrives, the rows of the factors returned as they become final
    // (cuda_device_resident.cpp).
    int factor_host_overlapped(int64_t m, int64_t n, const std::vector<int64_t>& bounds,
                               float* a, int64_t lda, int* ipiv);
    // The buffers factor_host_overlapped needs beyond the matrix's own;
    // false, with nothing allocated, where this GPU lacks the memory.
    bool reserve_overlap_buffers(int64_t m, int64_t n, int64_t first);
    // Event i of factor_host_overlapped's copies (created on first use).
    cudaEvent_t copy_event(size_t i);
    void ensure_getrf_workspaces(int64_t rows, int max_panel_width, int last_panel_width);
    // perm_ = identity on the compute queue, nothing folded in (allocate()).
    void reset_permutation();

    void release_buffers() noexcept;
    void release() noexcept;
    // Left factors kept from an earlier call (none held now) give way to a
    // buffer of `bytes` that the free memory would not hold.
    void make_room(size_t bytes);
    // After take_panel or take_panel_from of the panel at (r0, c0): its
    // inverse from `owner`'s slot into the inverse workspace, where the owner
    // made one (invert_panel_l11) and the panel is at least square.
    void bring_inverse(Queue q, const CudaDevice& owner, int64_t r0, int64_t c0, int64_t rows,
                       int width);

    int ordinal_;
    int sm_count_ = 0;
    // Beside a tensor-core update, whose cuBLAS GEMM keeps its blocks on the
    // SMs until the whole product is done, a panel's leaves (a cluster's blocks
    // must start together on one GPC) wait for the product's end. So the
    // update beside a panel asks cuBLAS to leave some SMs free, and the
    // panel's leaves take clusters of at most so many blocks (a panel taller
    // than its leaves then reach is cuSOLVER's getrf). How many depends on
    // which of the two bounds the step, told apart by the panel's height
    // (the rows of the update beside it are the same): beside a tall panel
    // the update bounds the step, and every SM it gives up costs it; up to
    // kRowsOfPanelBoundSteps rows the panel bounds it even so, and gains
    // from 48 SMs and 8-block clusters together (48 SMs with 4-block
    // clusters were no faster). Measured on H200s with the tf32x3 LU of
    // square matrices on one GPU (docs/PERFORMANCE.md): 32 SMs and 4-block
    // clusters beside every panel took n = 32768 to 62.4-62.5 TF/s (57.2-60.3
    // with neither, in other calls) and left 16384 at 31.9-32.0; 48 and 8
    // beside every panel took 16384 to 36.6 and 32768 down to 60.4; 64 and
    // 8, 35.4 and 53.2.
    struct PanelShare {
        int sms_left = 0;          // 0: the update takes every SM it can
        int leaf_cluster_cap = 0;  // 0: the leaves take clusters as usual
    };
    static constexpr int64_t kRowsOfPanelBoundSteps = 16384;
    static constexpr PanelShare kShareBesideTallPanel{32, 4};
    static constexpr PanelShare kShareBesidePanelBoundStep{48, 8};
    // What the update beside a panel of `rows` rows, and that panel, leave
    // each other: nothing with FP32 updates, with a forced panel method or on
    // a GPU with too few SMs to spare them.
    PanelShare share_beside_update(int64_t rows) const;
    void update_trailing_leaving_sms(Queue q, int64_t r0, int width, int64_t rows, int64_t c0,
                                     int64_t cols, int sms_left);
    std::string name_;
    std::string fingerprint_;
    static constexpr int kQueues = 3;     // compute, transfer, copy
    cudaStream_t streams_[kQueues] = {};  // indexed by Queue
    // handles_[q] and solvers_[q] are bound to streams_[q]; null until first used.
    mutable std::mutex handles_mutex_;
    mutable cublasHandle_t handles_[kQueues] = {};
    mutable cusolverDnHandle_t solvers_[kQueues] = {};

    DeviceBuffer storage_;
    int64_t rows_ = 0, local_cols_ = 0, ld_ = 1;
    DeviceBuffer panel_[2], inv_l11_[2];
    // invert_panel_l11's results by slot, and which panel each inverts, for
    // take_panel and other devices' take_panel_from.
    DeviceBuffer panel_inverse_[2], inverse_scratch_;
    PanelInverseSlots inverses_;
    int slot_ = 0;  // the workspace filled last, which the panel's users read
    float* panel_workspace() const { return panel_[slot_].floats(); }
    float* inverse_workspace() const { return inv_l11_[slot_].floats(); }
    // A fill goes to the other workspace: the one filled before may still be read.
    void next_workspace() {
        slot_ ^= 1;
        workspace_fill_[slot_] = ++fills_;
    }
    uint64_t fills_ = 0;                  // workspace fills so far
    uint64_t workspace_fill_[2] = {0, 0};  // which fill each workspace holds
    // Update precision tf32x3 (split_product.hpp): per queue, the split L21 of
    // a workspace's panel (kept for the step's other updates on that queue)
    // and the split U12 of the columns being updated.
    struct SplitPanel {
        uint64_t fill = 0;  // workspace fill it was split from (0: none)
        int64_t rows = 0;
        int width = 0;
    };
    SplitPanel split_of_[kQueues];
    DeviceBuffer split_l21_[kQueues], split_u12_[kQueues];
    void reserve_split_buffers(int64_t rows, int64_t local_cols, int max_panel_width);
    // A split buffer of at least `bytes`; a smaller one is replaced only once
    // the queue's work that may read it has finished.
    void ensure_split_buffer(Queue q, DeviceBuffer& buffer, size_t bytes);
    // A22 -= L21 U12 as update_trailing, through the split product.
    void update_trailing_tf32x3(Queue q, int64_t r0, int width, int64_t rows, int64_t c0,
                                int64_t cols);
    int max_width_ = 0;
    int64_t panel_ld_ = 1;
    int64_t panel_rows_ = 0;  // the received panel: rows x width, inverse or not
    int panel_width_ = 0;
    bool has_inverse_ = false;
    DeviceBuffer staging_[kQueues];
    DeviceBuffer perm_;             // rows ints: the interchanges catch_up has folded in
    DeviceBuffer left_factors_;     // rows x left_ld_, row-major: L's first left_cols_ columns
    int64_t left_cols_ = 0, left_ld_ = 1;
    int64_t perm_folded_ = 0;       // ... namely ipiv[0 .. perm_folded_)
    DeviceBuffer getrf_work_[kQueues];    // per queue: cuSOLVER getrf workspace
    DeviceBuffer resident_pivots_;        // the *_column_major calls: pivots + info, grown as needed
    int* resident_pivots(int64_t count);  // at least count ints of it
    DeviceBuffer resident_work_;          // factor_column_major: cuSOLVER getrf workspace
    DeviceBuffer host_matrix_;  // factor_host_column_major: the caller's matrix, then its factors
    DeviceBuffer arriving_columns_;  // ... its right columns as they arrive, before their interchanges
    DeviceBuffer column_perm_;       // ... and those interchanges as one permutation
    std::vector<cudaEvent_t> copy_events_;  // ... and its copies' events
    std::vector<cudaEvent_t> span_events_;  // ... the timed ones of its spans
    cudaEvent_t span_event(size_t i);       // the i-th of them, created as needed
    bool host_call_hid_copies_ = false;     // ... whether the last one moved A beside it
    std::vector<TimelineSpan> host_call_spans_;  // ... and then what its queues did
    std::chrono::steady_clock::time_point host_call_entered_;  // ... from the call's entry
    int64_t kept_rows_ = 0, kept_cols_ = 0;  // ... the factors it holds (0 x 0: none)
    DeviceBuffer solve_rhs_[2];  // the solves: right-hand sides in and out of the permutation
    DeviceBuffer solve_perm_;    // ... and the permutation
    DeviceBuffer refine_vectors_;  // multiply_in_double's Z and Y, norm_inf's row sums
    DeviceBuffer sentinel_;        // a small allocation that lives as long as the context
    // op(A) X = B with n x n LU factors at `factors` (ld, row-major storage or
    // column-major), B in host or this GPU's memory; synchronous.
    void solve_with_factors(const float* factors, int64_t ld, bool column_major, char trans,
                            int64_t n, int64_t nrhs, const int* ipiv, float* b, int64_t ldb);
    DeviceBuffer getrf_pivots_[kQueues];  // per queue: max_panel_width pivots + info + leaf moves
    int64_t staging_capacity_ = 0;  // floats, each
    BounceBuffers bounce_[kQueues];

    // Per peer ordinal: whether this device reads its memory directly (peer
    // access enabled), asked once (cuda_device_peer.cpp).
    std::unordered_map<int, bool> peer_readable_;

    GemmKernel gemm_policy_ = GemmKernel::cublas;
    DevicePanelMethod panel_method_ = DevicePanelMethod::automatic;
    UpdatePrecision update_precision_ = UpdatePrecision::fp32;
    std::optional<SgemmTuningTable> gemm_table_;  // for automatic and tandem
    std::string gemm_table_key_;                  // policy and cache dir it was made for

    // Pinned host blocks: handed out by host_alloc, and freed ones kept for reuse.
    static constexpr size_t kPinnedCacheBlocks = 10;  // device 0: LuSteps 5, FactorCollector 4
    std::unordered_map<void*, size_t> pinned_in_use_;
    std::vector<std::pair<size_t, void*>> pinned_cache_;

    // The event pool may be used from two host threads at once (the scheduler's
    // FactorCollector records and waits on the copy queue): record() and
    // event() hold events_mutex_.
    mutable std::mutex events_mutex_;
    std::vector<cudaEvent_t> events_;  // Event e is events_[e] while e < events_used_
    int events_used_ = 0;
    int origin_ = -1;  // the first event recorded since allocate(): time zero
};

// A device on CUDA device `ordinal` (its own streams, events, cuBLAS handle);
// throws Error(TANDEM_ERROR_BACKEND_UNAVAILABLE) when there is no such device.
// Every method sets the CUDA device it needs and restores the caller's.
std::unique_ptr<CudaDevice> make_cuda_device(int ordinal);

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_CUDA_DEVICE_HPP
