// The CudaDevice calls that factor a column-major matrix rather than this
// device's row-major storage: the caller's in GPU memory (sgetrf_gpu, in place)
// or a copy of the caller's host matrix (sgetrf's one-panel plans), with
// tandem's recursive panel or cuSOLVER's getrf. Their solves are in
// cuda_device_solve.cpp.
#include <algorithm>
#include <chrono>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "gpu/cuda_check.hpp"
#include "gpu/cuda_device.hpp"
#include "gpu/cusolver_getrf.hpp"
#include "gpu/gemm.hpp"
#include "gpu/panel_leaf.hpp"
#include "gpu/permute_rows.hpp"
#include "gpu/recursive_panel.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {
namespace {

// A matrix's rows are sent back in pieces of at least this many rows (a
// sixteenth, at least 128): each piece costs its own copies and waits.
int64_t least_rows_returned(int64_t n) { return std::max<int64_t>(n / 16, 128); }

// Copies the pivots and the info after them (pivots_and_info.size() ints,
// room the caller made) from the device into ipiv once the work on `s` has
// run; returns the info.
int pivots_to_host(const int* device_pivots, std::vector<int>& pivots_and_info, int* ipiv,
                   cudaStream_t s) {
    TANDEM_CUDA_CHECK(cudaMemcpyAsync(pivots_and_info.data(), device_pivots,
                                      sizeof(int) * pivots_and_info.size(), cudaMemcpyDeviceToHost,
                                      s));
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(s));
    std::copy(pivots_and_info.begin(), pivots_and_info.end() - 1, ipiv);
    return pivots_and_info.back();
}

// A failure while the factors were being copied into the caller's A, said
// so. Never an out-of-memory code: that would let the caller fall back to the
// CPU, which would factor the half-written A.
[[noreturn]] void throw_copying_factors(const Error& e, const char* ipiv_state) {
    const int code = e.code() == TANDEM_ERROR_OUT_OF_MEMORY ? TANDEM_ERROR_DEVICE : e.code();
    throw Error(code, std::string(e.what()) +
                          " (the factors were being copied into A: A is partially overwritten" +
                          ipiv_state + ")");
}

}  // namespace

int* CudaDevice::resident_pivots(int64_t count) {
    const size_t bytes = sizeof(int) * static_cast<size_t>(count);
    resident_pivots_.ensure(bytes, "pivots of the _gpu routines");
    return resident_pivots_.ints();
}

int CudaDevice::factor_column_major(int64_t m, int64_t n, float* a, int64_t lda, int* ipiv) {
    DeviceGuard guard(ordinal_);
    const int64_t k = std::min(m, n);
    if (m == 0 || n == 0) return 0;
    if (a == nullptr || ipiv == nullptr || lda < m)
        contract_error("factor_column_major", "a or ipiv null, or lda < m");
    // cuBLAS and cuSOLVER take int sizes: checked before either route touches A.
    blas_int(m, "m");
    blas_int(n, "n");
    blas_int(lda, "lda");
    const cudaStream_t s = stream(Queue::compute);
    int* device_pivots = nullptr;  // k pivots, then the info
    if (n <= m && use_recursive_panel(m, n, true)) {
        device_pivots = resident_pivots(k + panel_scratch_ints(m, static_cast<int>(n)));
        factor_recursively(Queue::compute, a, lda, true, m, static_cast<int>(n), device_pivots);
    } else {
        device_pivots = resident_pivots(k + 1);
        cusolver_getrf(solver(Queue::compute), m, n, a, lda, resident_work_,
                       "sgetrf_gpu's cuSOLVER workspace", device_pivots, device_pivots + k);
    }
    std::vector<int> pivots_and_info(static_cast<size_t>(k + 1));
    const int info = pivots_to_host(device_pivots, pivots_and_info, ipiv, s);
    if (info < 0)  // cuSOLVER's; the recursive panel reports none
        throw Error(TANDEM_ERROR_DEVICE, name_ + ": cusolverDnSgetrf rejected argument " +
                                             std::to_string(-info));
    return info;
}

bool CudaDevice::hides_host_copies(int64_t m, int64_t n) const {
    DeviceGuard guard(ordinal_);  // the leaves' reach is this GPU's
    return n <= m && !overlapped_parts(m, n).empty() && use_recursive_panel(m, n, true);
}

bool CudaDevice::reserve_overlap_buffers(int64_t m, int64_t n, int64_t first) {
    try {
        make_room(sizeof(float) * static_cast<size_t>(m * (n - first)));
        arriving_columns_.ensure(sizeof(float) * static_cast<size_t>(m * (n - first)),
                                 "the columns that arrive during the factorization");
        column_perm_.ensure(sizeof(int) * static_cast<size_t>(m),
                            "the interchanges of a part's columns");
        return true;
    } catch (const Error& e) {
        if (e.code() != TANDEM_ERROR_OUT_OF_MEMORY) throw;
        arriving_columns_.reset();
        column_perm_.reset();
        return false;
    }
}

int CudaDevice::factor_host_column_major(int64_t m, int64_t n, float* a, int64_t lda, int* ipiv) {
    host_call_entered_ = std::chrono::steady_clock::now();  // the timeline's origin
    DeviceGuard guard(ordinal_);
    if (m == 0 || n == 0) return 0;
    if (a == nullptr || ipiv == nullptr || lda < m)
        contract_error("factor_host_column_major", "a or ipiv null, or lda < m");
    kept_rows_ = kept_cols_ = 0;
    host_call_hid_copies_ = false;
    host_call_spans_.clear();
    make_room(sizeof(float) * static_cast<size_t>(m * n));
    host_matrix_.ensure(sizeof(float) * static_cast<size_t>(m * n), "column-major copy of the matrix");
    // Beside the factorization where its buffers fit; else before and after it.
    if (hides_host_copies(m, n)) {
        const std::vector<int64_t> parts = overlapped_parts(m, n);
        if (reserve_overlap_buffers(m, n, parts.front())) {
            const int info = factor_host_overlapped(m, n, parts, a, lda, ipiv);
            kept_rows_ = m;
            kept_cols_ = n;
            host_call_hid_copies_ = true;
            return info;
        }
    }
    float* const d_a = host_matrix_.floats();
    const cudaStream_t s = stream(Queue::compute);
    BounceBuffers& buffers = bounce(Queue::compute);
    copy_host_to_columns(a, lda, m, n, d_a, m, buffers, s);
    const int info = factor_column_major(m, n, d_a, m, ipiv);  // synchronous
    try {
        copy_columns_to_host(d_a, m, m, n, a, lda, buffers, s);
        TANDEM_CUDA_CHECK(cudaStreamSynchronize(s));
    } catch (const Error& e) {
        throw_copying_factors(e, "; ipiv holds the pivots");
    }
    kept_rows_ = m;
    kept_cols_ = n;
    return info;
}

cudaEvent_t CudaDevice::copy_event(size_t i) {
    while (copy_events_.size() <= i) {
        copy_events_.reserve(copy_events_.size() + 8);  // before creating: push_back cannot throw
        cudaEvent_t created = nullptr;
        TANDEM_CUDA_CHECK(cudaEventCreateWithFlags(&created, cudaEventDisableTiming));
        copy_events_.push_back(created);
    }
    return copy_events_[i];
}

cudaEvent_t CudaDevice::span_event(size_t i) {
    while (span_events_.size() <= i) {
        span_events_.reserve(span_events_.size() + 16);  // before creating: push_back cannot throw
        cudaEvent_t created = nullptr;
        TANDEM_CUDA_CHECK(cudaEventCreate(&created));  // timed
        span_events_.push_back(created);
    }
    return span_events_[i];
}

// The recursive panel on the whole matrix, split at the `bounds` columns
// (LAPACK's sgetrf2 splits at the middle; any split gives the same factors):
// - A(:, 0:b1) goes up first, and is factored while the host sends the next
//   part, A(:, b1:b2), into a buffer of its own;
// - each later part is gathered into place through the interchanges of the
//   columns before it (one permutation) and factored, its interchanges kept
//   within the columns that have arrived, while the next part goes up;
// - the last part's interchanges reach every column: rows [0, r) are final once
//   the solve of a node on the matrix's right edge is done, and go back while
//   the later nodes run.
// Upload and download are on the copy queue, the factorization on the
// compute queue; the host reads each part's pivots between the two uploads.
// The caller's A is only read until the first rows go back. The buffers are
// reserved (reserve_overlap_buffers).
int CudaDevice::factor_host_overlapped(int64_t m, int64_t n, const std::vector<int64_t>& bounds,
                                       float* a, int64_t lda, int* ipiv) {
    blas_int(m, "m");
    blas_int(n, "n");
    blas_int(lda, "lda");
    const cudaStream_t s = stream(Queue::compute), c = stream(Queue::copy);
    BounceBuffers& ring = bounce(Queue::copy);
    float* const d_a = host_matrix_.floats();
    const int64_t first = bounds.front();
    const int64_t scratch = panel_scratch_ints(m, static_cast<int>(n));
    int* const device_pivots = resident_pivots(n + scratch);
    int* const info = device_pivots + n;
    const int width = static_cast<int>(n);
    const DevicePanel whole{d_a, m, true, m, width, device_pivots, info, info + 1, panel_move_lists(m, width)};
    const SubtractProduct subtract = panel_product(Queue::compute, m, true);
    std::vector<std::pair<int64_t, cudaEvent_t>> final_rows;
    std::vector<int> pivots_and_info(static_cast<size_t>(n + 1));  // made before A is written
    size_t events = 0;
    auto mark = [&](cudaStream_t on) {
        const cudaEvent_t e = copy_event(events++);
        TANDEM_CUDA_CHECK(cudaEventRecord(e, on));
        return e;
    };
    // The timeline (last_host_call_spans): timed events around each part's
    // upload and factorization and each piece's download, read once all ran.
    struct QueuedSpan {
        bool on_copy_queue;
        const char* phase;
        int step;
        cudaEvent_t begin, end;
    };
    std::vector<QueuedSpan> queued;
    size_t stamps = 0;
    auto stamp = [&](cudaStream_t on) {
        const cudaEvent_t e = span_event(stamps++);
        TANDEM_CUDA_CHECK(cudaEventRecord(e, on));
        return e;
    };
    const cudaEvent_t origin = stamp(c);
    const double origin_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - host_call_entered_).count();

    try {
        // A(:, 0:b1) up, then factored on the compute queue.
        copy_host_to_columns(a, lda, m, first, d_a, m, ring, c);
        queued.push_back({true, "upload", 0, origin, stamp(c)});
        TANDEM_CUDA_CHECK(cudaStreamWaitEvent(s, mark(c), 0));
        TANDEM_CUDA_CHECK(cudaMemsetAsync(info, 0, sizeof(int), s));
        DevicePanel arrived_part = whole;
        arrived_part.width = static_cast<int>(first);
        const cudaEvent_t first_begin = stamp(s);
        factor_panel_recursive(arrived_part, blas(Queue::compute), subtract);
        queued.push_back({false, "panel", 0, first_begin, stamp(s)});
        const int64_t least_rows = least_rows_returned(n);
        for (size_t k = 0; k < bounds.size(); ++k) {
            const int64_t done = bounds[k], next = k + 1 < bounds.size() ? bounds[k + 1] : n;
            // A(:, done:next) up into the arriving buffer while A(:, 0:done) is factored.
            float* const arriving = arriving_columns_.floats() + (done - first) * m;
            const cudaEvent_t upload_begin = stamp(c);
            copy_host_to_columns(a + done * lda, lda, m, next - done, arriving, m, ring, c);
            queued.push_back({true, "upload", static_cast<int>(k + 1), upload_begin, stamp(c)});
            const cudaEvent_t arrived = mark(c);
            // A(:, done:next) = P A(:, done:next), P the interchanges of columns 0:done.
            TANDEM_CUDA_CHECK(cudaMemcpyAsync(ipiv, device_pivots, sizeof(int) * done,
                                              cudaMemcpyDeviceToHost, s));
            TANDEM_CUDA_CHECK(cudaStreamSynchronize(s));
            const std::vector<int> perm =
                fold_pivots(ipiv, done, m, name_ + ": the device panel", true);
            int* const device_perm = column_perm_.ints();  // the last part's gather has run
            TANDEM_CUDA_CHECK(cudaMemcpyAsync(device_perm, perm.data(), sizeof(int) * perm.size(),
                                              cudaMemcpyHostToDevice, s));
            TANDEM_CUDA_CHECK(cudaStreamWaitEvent(s, arrived, 0));
            const cudaEvent_t part_begin = stamp(s);
            permute_rows(arriving, m, d_a + done * m, m, m, next - done, device_perm, false, s);
            // U12, A22 and the right part of A(:, 0:next); in the last part,
            // rows [0, r) marked as they are final.
            arrived_part.width = static_cast<int>(next);
            RowsFinal rows_final = nullptr;
            if (next == n)
                rows_final = [&](int64_t r) {
                    const int64_t returned = final_rows.empty() ? 0 : final_rows.back().first;
                    if (r - returned >= least_rows) final_rows.emplace_back(r, mark(s));
                };
            finish_panel_recursive(arrived_part, static_cast<int>(done), blas(Queue::compute),
                                   subtract, rows_final);
            queued.push_back({false, "panel", static_cast<int>(k + 1), part_begin, stamp(s)});
        }
        final_rows.emplace_back(m, mark(s));
        // What the returning rows' spans need, made while A is still untouched:
        // from here on only a CUDA error may interrupt the copies into A.
        queued.reserve(queued.size() + final_rows.size());
        span_event(stamps + 2 * final_rows.size() - 1);  // the last the downloads stamp
    } catch (...) {
        // A untouched; no queued copy may read it, or write the buffers, after this returns.
        (void)cudaStreamSynchronize(c);
        (void)cudaStreamSynchronize(s);
        throw;
    }

    try {  // the rows of the factors back into A, each piece once it is final
        int64_t done = 0;
        int piece = 0;
        for (const auto& [r, e] : final_rows) {
            TANDEM_CUDA_CHECK(cudaStreamWaitEvent(c, e, 0));
            const cudaEvent_t piece_begin = stamp(c);
            copy_columns_to_host(d_a + done, m, r - done, n, a + done, lda, ring, c);
            queued.push_back({true, "download", piece++, piece_begin, stamp(c)});
            done = r;
        }
        TANDEM_CUDA_CHECK(cudaStreamSynchronize(c));
        const int result = pivots_to_host(device_pivots, pivots_and_info, ipiv, s);
        // The factors are in A: a timeline CUDA cannot read, or memory cannot
        // hold, is left out, not an error.
        try {
            for (const QueuedSpan& q : queued) {
                float begin_ms = 0.0f, end_ms = 0.0f;
                if (cudaEventElapsedTime(&begin_ms, origin, q.begin) != cudaSuccess ||
                    cudaEventElapsedTime(&end_ms, origin, q.end) != cudaSuccess) {
                    host_call_spans_.clear();
                    (void)cudaGetLastError();  // so that no later check reports it
                    break;
                }
                host_call_spans_.push_back({name_ + (q.on_copy_queue ? " copy" : " compute"),
                                            q.phase, q.step, origin_seconds + 1e-3 * begin_ms,
                                            origin_seconds + 1e-3 * end_ms});
            }
        } catch (const std::bad_alloc&) {
            host_call_spans_.clear();
        }
        return result;
    } catch (const Error& e) {
        (void)cudaStreamSynchronize(c);
        throw_copying_factors(e, "; ipiv holds the pivots of the columns before the last part");
    }
}

}  // namespace tandem::gpu
