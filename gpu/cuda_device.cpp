// CudaDevice: construction, memory, contract checks and events. The matrix
// operations are in cuda_device_ops.cpp, the solve in cuda_device_solve.cpp.
#include "gpu/cuda_device.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

#include "gpu/cuda_check.hpp"
#include "gpu/invert_lower.hpp"
#include "gpu/permute_rows.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {
namespace {

constexpr int64_t kAlignFloats = 32;  // 128 bytes: rows start on a full memory transaction
// Left free for cuBLAS workspaces and the CUDA context's own needs.
constexpr int64_t kHeadroomBytes = int64_t(256) << 20;

int64_t round_up(int64_t v, int64_t to) { return (std::max<int64_t>(v, 1) + to - 1) / to * to; }

std::string gib(double bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
    return text;
}

}  // namespace

CudaDevice::CudaDevice(int ordinal) : ordinal_(ordinal) {
    DeviceGuard guard(ordinal_);
    try {
        cudaDeviceProp properties;
        TANDEM_CUDA_CHECK(cudaGetDeviceProperties(&properties, ordinal_));
        name_ = std::string(properties.name) + " #" + std::to_string(ordinal_);
        sm_count_ = properties.multiProcessorCount;
        int driver = 0, runtime = 0;
        TANDEM_CUDA_CHECK(cudaDriverGetVersion(&driver));
        TANDEM_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
        fingerprint_ = std::string(properties.name) + " sm_" + std::to_string(properties.major) +
                       std::to_string(properties.minor) + " " +
                       std::to_string(properties.multiProcessorCount) + " SMs driver " +
                       std::to_string(driver) + " runtime " + std::to_string(runtime);
        // The transfer queue's small kernels (transposes of panels) run at high
        // priority: otherwise they wait behind the trailing update's GEMM blocks
        // and the next panel reaches the CPU late (measured: 3.2 ms instead of
        // 0.3 ms for a 16384 x 256 panel on an H200).
        int least_priority = 0, greatest_priority = 0;
        TANDEM_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least_priority, &greatest_priority));
        const int priorities[kQueues] = {least_priority, greatest_priority, greatest_priority};
        for (int q = 0; q < kQueues; ++q)
            TANDEM_CUDA_CHECK(cudaStreamCreateWithPriority(&streams_[q], cudaStreamNonBlocking,
                                                           priorities[q]));
        sentinel_ = DeviceBuffer(256, "context sentinel");
    } catch (...) {
        release();
        throw;
    }
}

// The library handles are made at a queue's first use of them, not with the
// device: each costs milliseconds at a process's first GPU call, and a call
// whose plan is one panel uses only the compute queue's.
cublasHandle_t CudaDevice::blas_handle(Queue q) const {
    const int index = static_cast<int>(q);
    (void)stream(q);  // checks q
    std::lock_guard<std::mutex> lock(handles_mutex_);
    if (handles_[index] == nullptr) {
        DeviceGuard guard(ordinal_);
        cublasHandle_t handle = nullptr;
        TANDEM_CUBLAS_CHECK(cublasCreate(&handle));
        handles_[index] = handle;  // destroyed by release() if a setting below fails
        TANDEM_CUBLAS_CHECK(cublasSetStream(handle, streams_[index]));
        TANDEM_CUBLAS_CHECK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));
        // Plain FP32 arithmetic: TF32 tensor cores would break LAPACK's accuracy bounds.
        TANDEM_CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
    }
    return handles_[index];
}

cusolverDnHandle_t CudaDevice::solver(Queue q) const {
    const int index = static_cast<int>(q);
    (void)stream(q);
    std::lock_guard<std::mutex> lock(handles_mutex_);
    if (solvers_[index] == nullptr) {
        DeviceGuard guard(ordinal_);
        cusolverDnHandle_t handle = nullptr;
        TANDEM_CUSOLVER_CHECK(cusolverDnCreate(&handle));
        solvers_[index] = handle;
        TANDEM_CUSOLVER_CHECK(cusolverDnSetStream(handle, streams_[index]));
    }
    return solvers_[index];
}

std::string CudaDevice::fingerprint() const {
    const char* gemm = gemm_policy_ == GemmKernel::cublas   ? "cublas"
                       : gemm_policy_ == GemmKernel::tandem ? "tandem"
                                                            : "auto";
    const char* panel = panel_method_ == DevicePanelMethod::cusolver    ? "cusolver"
                        : panel_method_ == DevicePanelMethod::recursive ? "recursive"
                                                                        : "auto";
    const char* update = update_precision_ == UpdatePrecision::tf32x3 ? " update=tf32x3"
                         : update_precision_ == UpdatePrecision::tf32 ? " update=tf32"
                         : update_precision_ == UpdatePrecision::bf16 ? " update=bf16"
                                                                      : "";
    return fingerprint_ + " gemm=" + gemm + " panel=" + panel + update;
}

CudaDevice::~CudaDevice() {
    int previous = -1;
    if (cudaGetDevice(&previous) != cudaSuccess || previous == ordinal_ ||
        cudaSetDevice(ordinal_) != cudaSuccess)
        previous = -1;
    release();
    if (previous >= 0) (void)cudaSetDevice(previous);
}

// Frees the buffers once the queues are idle (work in flight may still use them).
void CudaDevice::release_buffers() noexcept {
    for (cudaStream_t s : streams_)
        if (s) (void)cudaStreamSynchronize(s);
    storage_.reset();
    left_factors_.reset();
    left_cols_ = 0;
    for (int s = 0; s < 2; ++s) {
        panel_[s].reset();
        inv_l11_[s].reset();
        panel_inverse_[s].reset();
    }
    inverses_.clear();
    inverse_scratch_.reset();
    slot_ = 0;
    for (int q = 0; q < kQueues; ++q) {
        split_l21_[q].reset();
        split_u12_[q].reset();
        split_of_[q] = {};
    }
    perm_.reset();
    resident_pivots_.reset();
    resident_work_.reset();
    host_matrix_.reset();
    arriving_columns_.reset();
    column_perm_.reset();
    for (DeviceBuffer& buffer : solve_rhs_) buffer.reset();
    solve_perm_.reset();
    kept_rows_ = kept_cols_ = 0;
    perm_folded_ = 0;
    for (int q = 0; q < kQueues; ++q) {
        staging_[q].reset();
        getrf_work_[q].reset();
        getrf_pivots_[q].reset();
    }
    rows_ = local_cols_ = panel_rows_ = staging_capacity_ = 0;
    ld_ = panel_ld_ = 1;
    max_width_ = panel_width_ = 0;
    has_inverse_ = false;
}

bool CudaDevice::context_alive() const noexcept {
    cudaPointerAttributes attributes;
    const bool alive = sentinel_.floats() != nullptr &&
                       cudaPointerGetAttributes(&attributes, sentinel_.floats()) == cudaSuccess &&
                       attributes.type == cudaMemoryTypeDevice;
    (void)cudaGetLastError();
    return alive;
}

void CudaDevice::release() noexcept {
    if (cuda_objects_orphaned()) {  // their context is gone: forget them, free nothing
        for (BounceBuffers& b : bounce_) b.release();
        pinned_cache_.clear();
        pinned_in_use_.clear();
        events_.clear();
        events_used_ = 0;
        copy_events_.clear();
        span_events_.clear();
        for (int q = 0; q < kQueues; ++q) {
            handles_[q] = nullptr;
            solvers_[q] = nullptr;
            streams_[q] = nullptr;
        }
        release_buffers();  // drops the DeviceBuffers' pointers
        sentinel_.reset();
        return;
    }
    release_buffers();
    for (BounceBuffers& b : bounce_) b.release();
    for (const auto& block : pinned_cache_) (void)cudaFreeHost(block.second);
    pinned_cache_.clear();
    for (cudaEvent_t e : events_) (void)cudaEventDestroy(e);
    events_.clear();
    for (cudaEvent_t e : copy_events_) (void)cudaEventDestroy(e);
    copy_events_.clear();
    for (cudaEvent_t e : span_events_) (void)cudaEventDestroy(e);
    span_events_.clear();
    events_used_ = 0;
    for (int q = 0; q < kQueues; ++q) {
        if (handles_[q]) (void)cublasDestroy(handles_[q]);
        if (solvers_[q]) (void)cusolverDnDestroy(solvers_[q]);
        solvers_[q] = nullptr;
        if (streams_[q]) (void)cudaStreamDestroy(streams_[q]);
        handles_[q] = nullptr;
        streams_[q] = nullptr;
    }
    (void)cudaGetLastError();
}

int64_t CudaDevice::free_bytes() const {
    DeviceGuard guard(ordinal_);
    size_t free = 0, total = 0;
    TANDEM_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return static_cast<int64_t>(free);
}

void CudaDevice::allocate(int64_t rows, int64_t local_cols, int max_panel_width,
                          int last_panel_width) {
    DeviceGuard guard(ordinal_);
    if (rows < 0 || local_cols < 0 || max_panel_width < 0 || last_panel_width < 0 ||
        last_panel_width > rows)
        contract_error("allocate", "bad size " + std::to_string(rows) + " x " +
                                       std::to_string(local_cols) + ", panel width " +
                                       std::to_string(max_panel_width) + ", last panel " +
                                       std::to_string(last_panel_width));
    events_used_ = 0;
    origin_ = -1;

    const int64_t ld = round_up(local_cols, kAlignFloats);
    const int64_t panel_ld = round_up(max_panel_width, kAlignFloats);
    // A staging buffer holds whole columns of any block (at most `rows` long) and
    // the width x cols scratch of form_u12; wider blocks go in column chunks.
    // The last panel is factored in it too.
    const int64_t staging_capacity =
        std::max({std::max<int64_t>(rows, 1) * std::max(max_panel_width, 256), int64_t(1) << 20,
                  int64_t(last_panel_width) * last_panel_width});
    const size_t storage_bytes = sizeof(float) * rows * ld;
    const size_t panel_bytes = sizeof(float) * rows * panel_ld;
    const size_t inverse_bytes = sizeof(float) * max_panel_width * panel_ld;
    const size_t inverse_scratch_bytes =
        sizeof(float) * std::max<int64_t>(gpu::unit_lower_inverse_scratch_floats(max_panel_width), 1);
    const size_t staging_bytes = sizeof(float) * staging_capacity;

    // Buffers kept from an earlier call are reused when large enough: a call at
    // small n then costs no cudaMalloc/cudaFree (each synchronizes the device).
    for (cudaStream_t s : streams_) TANDEM_CUDA_CHECK(cudaStreamSynchronize(s));
    slot_ = 0;
    left_cols_ = 0;  // a failed factorization may have left them held; the memory stays
    inverses_.clear();
    const bool fits = storage_.bytes() >= storage_bytes && panel_[0].bytes() >= panel_bytes &&
                      panel_[1].bytes() >= panel_bytes && inv_l11_[0].bytes() >= inverse_bytes &&
                      inv_l11_[1].bytes() >= inverse_bytes &&
                      panel_inverse_[0].bytes() >= inverse_bytes &&
                      panel_inverse_[1].bytes() >= inverse_bytes &&
                      inverse_scratch_.bytes() >= inverse_scratch_bytes && storage_bytes > 0 &&
                      std::all_of(std::begin(staging_), std::end(staging_),
                                  [&](const DeviceBuffer& b) { return b.bytes() >= staging_bytes; });
    if (fits) {
        rows_ = rows;
        local_cols_ = local_cols;
        ld_ = ld;
        max_width_ = max_panel_width;
        panel_ld_ = panel_ld;
        staging_capacity_ = int64_t(staging_bytes / sizeof(float));
        panel_rows_ = panel_width_ = 0;
        has_inverse_ = false;
        ensure_getrf_workspaces(rows, max_panel_width, last_panel_width);
        reserve_split_buffers(rows, local_cols, max_panel_width);
        reset_permutation();
        return;
    }
    release_buffers();  // frees room for the new ones, the left factors' too
    // tf32x3: the split operands of the compute queue's updates and of the
    // transfer queue's look-ahead (reserve_split_buffers).
    const int64_t split_floats =
        update_precision_ == UpdatePrecision::tf32x3
            ? 3 * int64_t(max_panel_width) * (2 * rows + local_cols + max_panel_width)
            : 0;
    const int64_t floats = rows * ld + 2 * (rows * panel_ld + 2 * int64_t(max_panel_width) * panel_ld) +
                           int64_t(inverse_scratch_bytes / sizeof(float)) +
                           kQueues * staging_capacity + split_floats;
    const int64_t needed = floats * int64_t(sizeof(float));
    const int64_t available = free_bytes();
    if (needed + kHeadroomBytes > available)
        throw Error(TANDEM_ERROR_OUT_OF_MEMORY,
                    name_ + ": a " + std::to_string(rows) + " x " + std::to_string(local_cols) +
                        " block of the matrix (panels up to " + std::to_string(max_panel_width) +
                        " wide) needs " + gib(double(needed)) + " of device memory plus " +
                        gib(double(kHeadroomBytes)) + " headroom; " + gib(double(available)) +
                        " is free");

    // Members change only once every allocation has succeeded.
    DeviceBuffer storage(storage_bytes, "matrix storage");
    DeviceBuffer panel0(panel_bytes, "panel workspace");
    DeviceBuffer panel1(panel_bytes, "second panel workspace");
    DeviceBuffer inv_l11_0(inverse_bytes, "inv(L11) workspace");
    DeviceBuffer inv_l11_1(inverse_bytes, "second inv(L11) workspace");
    DeviceBuffer panel_inverse0(inverse_bytes, "panel inverse");
    DeviceBuffer panel_inverse1(inverse_bytes, "second panel inverse");
    DeviceBuffer inverse_scratch(inverse_scratch_bytes, "panel inverse scratch");
    DeviceBuffer staging0(staging_bytes, "compute staging buffer");
    DeviceBuffer staging1(staging_bytes, "transfer staging buffer");
    DeviceBuffer staging2(staging_bytes, "copy staging buffer");
    storage_ = std::move(storage);
    panel_[0] = std::move(panel0);
    panel_[1] = std::move(panel1);
    inv_l11_[0] = std::move(inv_l11_0);
    inv_l11_[1] = std::move(inv_l11_1);
    panel_inverse_[0] = std::move(panel_inverse0);
    panel_inverse_[1] = std::move(panel_inverse1);
    inverse_scratch_ = std::move(inverse_scratch);
    staging_[0] = std::move(staging0);
    staging_[1] = std::move(staging1);
    staging_[2] = std::move(staging2);
    rows_ = rows;
    local_cols_ = local_cols;
    ld_ = ld;
    max_width_ = max_panel_width;
    panel_ld_ = panel_ld;
    staging_capacity_ = staging_capacity;
    ensure_getrf_workspaces(rows, max_panel_width, last_panel_width);
    reserve_split_buffers(rows, local_cols, max_panel_width);
    reset_permutation();
}

void CudaDevice::make_room(size_t bytes) {
    if (left_cols_ == 0 && left_factors_.bytes() > 0 && int64_t(bytes) + kHeadroomBytes > free_bytes())
        left_factors_.reset();
}

void CudaDevice::hold_left_factors(int64_t cols) {
    DeviceGuard guard(ordinal_);
    if (cols < 0) contract_error("hold_left_factors", "cols = " + std::to_string(cols));
    for (cudaStream_t s : streams_) TANDEM_CUDA_CHECK(cudaStreamSynchronize(s));
    left_cols_ = 0;
    if (cols == 0) {
        // Kept for the next call while at least half the memory is free: at
        // 65536 on four H200s each holds 8 GiB, whose cudaMalloc held the
        // upload back 17 ms and whose cudaFree here added some 18 ms to a
        // 1.3 s call (docs/PERFORMANCE.md, "Several GPUs").
        size_t free = 0, total = 0;
        TANDEM_CUDA_CHECK(cudaMemGetInfo(&free, &total));
        if (free < total / 2) left_factors_.reset();
        return;
    }
    const int64_t ld = round_up(cols, kAlignFloats);
    const int64_t bytes = int64_t(sizeof(float)) * std::max<int64_t>(rows_, 1) * ld;
    if (bytes > int64_t(left_factors_.bytes()) &&
        bytes + kHeadroomBytes > free_bytes() + int64_t(left_factors_.bytes()))
        throw Error(TANDEM_ERROR_OUT_OF_MEMORY,
                    name_ + ": " + std::to_string(cols) + " columns of L need " +
                        gib(double(bytes)) + " of device memory plus " +
                        gib(double(kHeadroomBytes)) + " headroom; " + gib(double(free_bytes())) +
                        " is free");
    left_factors_.ensure(size_t(bytes), "left factors");
    left_cols_ = cols;
    left_ld_ = ld;
}

// The split operands at their largest, so that no split buffer grows while
// updates are queued (allocate() has synchronized every queue): the compute
// queue's (step 0's L21 and U12) and the transfer queue's, where several
// devices run the look-ahead (L21 and one block's U12).
void CudaDevice::reserve_split_buffers(int64_t rows, int64_t local_cols, int max_panel_width) {
    if (update_precision_ != UpdatePrecision::tf32x3 || max_panel_width <= 0) return;
    const int64_t width = max_panel_width;
    for (const auto& [q, cols] : {std::pair<Queue, int64_t>{Queue::compute, local_cols},
                                  std::pair<Queue, int64_t>{Queue::transfer, width}}) {
        const int qi = static_cast<int>(q);
        split_l21_[qi].ensure(sizeof(float) * 3 * rows * width, "split L21 (tf32x3 update)");
        split_u12_[qi].ensure(sizeof(float) * 3 * width * std::min(cols, local_cols),
                              "split U12 (tf32x3 update)");
        split_of_[qi] = {};
    }
}

void CudaDevice::reset_permutation() {
    perm_.ensure(sizeof(int) * size_t(std::max<int64_t>(rows_, 1)), "row permutation");
    iota_rows(perm_.ints(), rows_, stream(Queue::compute));
    perm_folded_ = 0;
}

float* CudaDevice::host_alloc(int64_t count) {
    const size_t bytes = sizeof(float) * static_cast<size_t>(std::max<int64_t>(count, 1));
    // cudaHostAlloc costs milliseconds: reuse a block freed by an earlier call
    // when it is large enough but not wastefully so.
    for (size_t i = 0; i < pinned_cache_.size(); ++i) {
        const auto [size, ptr] = pinned_cache_[i];
        if (size >= bytes && size <= 2 * bytes + (size_t(1) << 20)) {
            pinned_cache_.erase(pinned_cache_.begin() + static_cast<std::ptrdiff_t>(i));
            pinned_in_use_[ptr] = size;
            return static_cast<float*>(ptr);
        }
    }
    DeviceGuard guard(ordinal_);
    void* ptr = nullptr;
    // Portable: the scheduler may hand one pinned buffer to several devices.
    TANDEM_CUDA_CHECK(cudaHostAlloc(&ptr, bytes, cudaHostAllocPortable));
    pinned_in_use_[ptr] = bytes;
    return static_cast<float*>(ptr);
}

void CudaDevice::host_free(float* ptr) {
    if (ptr == nullptr) return;
    const auto found = pinned_in_use_.find(ptr);
    if (found == pinned_in_use_.end())
        contract_error("host_free", "pointer was not returned by host_alloc");
    pinned_cache_.emplace_back(found->second, ptr);
    pinned_in_use_.erase(found);
    while (pinned_cache_.size() > kPinnedCacheBlocks) {  // drop the oldest
        DeviceGuard guard(ordinal_);
        TANDEM_CUDA_CHECK(cudaFreeHost(pinned_cache_.front().second));
        pinned_cache_.erase(pinned_cache_.begin());
    }
}

cudaStream_t CudaDevice::stream(Queue q) const {
    const int index = static_cast<int>(q);
    if (index < 0 || index >= kQueues) contract_error("queue", "no queue " + std::to_string(index));
    return streams_[index];
}

Staging CudaDevice::staging(Queue q) const {
    (void)stream(q);  // checks q
    return {staging_[static_cast<int>(q)].floats(), staging_capacity_};
}

void CudaDevice::contract_error(const char* op, const std::string& what) const {
    throw Error(TANDEM_ERROR_INTERNAL, name_ + ": " + op + ": " + what);
}

void CudaDevice::check_block(const char* op, int64_t r0, int64_t c0, int64_t rows,
                             int64_t cols) const {
    if (r0 < 0 || c0 < 0 || rows < 0 || cols < 0 || r0 + rows > rows_ ||
        c0 + cols > local_cols_)
        contract_error(op, "block at (" + std::to_string(r0) + ", " + std::to_string(c0) +
                               ") of " + std::to_string(rows) + " x " + std::to_string(cols) +
                               " is outside the " + std::to_string(rows_) + " x " +
                               std::to_string(local_cols_) + " storage");
}

void CudaDevice::check_pivots(const char* op, int64_t k1, int64_t k2, const int* ipiv) const {
    if (k1 < k2 && ipiv == nullptr) contract_error(op, "ipiv is null");
    for (int64_t k = k1; k < k2; ++k)  // a bad pivot would move memory outside the storage
        if (ipiv[k] < 1 || ipiv[k] > rows_)
            contract_error(op, "ipiv[" + std::to_string(k) + "] = " + std::to_string(ipiv[k]) +
                                   " is outside 1 .. " + std::to_string(rows_));
}

void CudaDevice::check_panel(const char* op, int width, int64_t rows_used) const {
    if (width < 0 || width > panel_width_ || rows_used > panel_rows_)
        contract_error(op, "uses " + std::to_string(rows_used) + " x " + std::to_string(width) +
                               " of a received panel of " + std::to_string(panel_rows_) +
                               " x " + std::to_string(panel_width_));
}

// --- events -------------------------------------------------------------------

cudaEvent_t CudaDevice::event(Event e) const {
    std::lock_guard<std::mutex> lock(events_mutex_);
    if (e < 0 || e >= events_used_)
        contract_error("event", "no event " + std::to_string(e) + " since allocate() (" +
                                    std::to_string(events_used_) + " recorded)");
    return events_[e];
}

Event CudaDevice::record(Queue q) {
    DeviceGuard guard(ordinal_);
    std::lock_guard<std::mutex> lock(events_mutex_);
    if (events_used_ == static_cast<int>(events_.size())) {
        events_.reserve(events_.size() * 2 + 64);  // before creating: push_back cannot throw
        cudaEvent_t created = nullptr;
        TANDEM_CUDA_CHECK(cudaEventCreate(&created));  // with timing, for seconds_at
        events_.push_back(created);
    }
    TANDEM_CUDA_CHECK(cudaEventRecord(events_[events_used_], stream(q)));
    if (origin_ < 0) origin_ = events_used_;
    return events_used_++;
}

void CudaDevice::wait(Queue q, Event e) {
    DeviceGuard guard(ordinal_);
    TANDEM_CUDA_CHECK(cudaStreamWaitEvent(stream(q), event(e), 0));
}

void CudaDevice::synchronize(Event e) {
    DeviceGuard guard(ordinal_);
    TANDEM_CUDA_CHECK(cudaEventSynchronize(event(e)));
}

bool CudaDevice::query(Event e) {
    DeviceGuard guard(ordinal_);
    const cudaError_t status = cudaEventQuery(event(e));
    if (status == cudaErrorNotReady) return false;
    TANDEM_CUDA_CHECK(status);
    return true;
}

void CudaDevice::synchronize() {
    DeviceGuard guard(ordinal_);
    for (cudaStream_t s : streams_) TANDEM_CUDA_CHECK(cudaStreamSynchronize(s));
}

double CudaDevice::seconds_at(Event e) {
    DeviceGuard guard(ordinal_);
    const cudaEvent_t end = event(e);
    const cudaEvent_t origin = event(origin_);
    // Both must have completed for cudaEventElapsedTime; waiting costs nothing if they have.
    TANDEM_CUDA_CHECK(cudaEventSynchronize(origin));
    TANDEM_CUDA_CHECK(cudaEventSynchronize(end));
    float milliseconds = 0.0f;
    TANDEM_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, origin, end));
    return 1e-3 * milliseconds;
}

// One wait for the queues instead of two event waits an event: a timeline's
// events cost some 4 us each through seconds_at, 0.6 us so (H100).
std::vector<double> CudaDevice::seconds_at_each(const std::vector<Event>& events) {
    synchronize();  // every event recorded on this device's queues has completed
    DeviceGuard guard(ordinal_);
    const cudaEvent_t origin = event(origin_);
    std::vector<double> seconds;
    seconds.reserve(events.size());
    for (Event e : events) {
        float milliseconds = 0.0f;
        TANDEM_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, origin, event(e)));
        seconds.push_back(1e-3 * milliseconds);
    }
    return seconds;
}

}  // namespace tandem::gpu
