#include "gpu/transfer.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "scheduler/spin_wait.hpp"
#include "scheduler/streaming_copy.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/transpose.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {
namespace {

// Smaller pageable blocks take the driver's path: not worth pinned buffers.
constexpr int64_t kBounceMinFloats = int64_t(1) << 16;  // 256 KiB

// Columns per chunk: as many whole columns of `rows` floats as `capacity` holds.
int64_t chunk_columns(int64_t capacity, int64_t rows) {
    if (capacity < rows)
        throw Error(TANDEM_ERROR_INTERNAL, "staging buffer of " + std::to_string(capacity) +
                                               " floats is shorter than a column of " +
                                               std::to_string(rows));
    return capacity / rows;
}

// Columns per chunk of a copy through the bounce buffers: an eighth of the
// block, so that even a small block is a pipeline of several chunks, between
// 1 MiB (each chunk costs a few launches, an event and a parallel region: some
// 10 us) and a slot, 4 MiB (the ring's eight slots then hold 32 MiB in
// flight), at least a column, at most what `capacity` (a staging buffer) holds.
int64_t bounce_chunk_columns(int64_t rows, int64_t cols, int64_t capacity) {
    constexpr int64_t kLeastFloats = int64_t(1) << 18, kMostFloats = BounceBuffers::kSlotFloats;
    const int64_t chunk_floats = std::clamp(rows * cols / 8, kLeastFloats, kMostFloats);
    const int64_t most = chunk_columns(std::min(capacity, BounceBuffers::kMaxSlotFloats), rows);
    return std::clamp(chunk_floats / rows, int64_t(1), most);
}

// Where the "host" block of a copy lives, asked once per copy.
cudaMemoryType memory_type(const void* pointer) {
    cudaPointerAttributes attributes;
    TANDEM_CUDA_CHECK(cudaPointerGetAttributes(&attributes, pointer));
    return attributes.type;
}

// Memory a kernel of this device can address directly: the caller's matrix
// itself when it lives in GPU memory (tandem::sgetrf_gpu).
bool in_device_memory(cudaMemoryType type) {
    return type == cudaMemoryTypeDevice || type == cudaMemoryTypeManaged;
}

// Large pageable blocks go through the pinned bounce buffers.
bool use_bounce(cudaMemoryType type, int64_t rows, int64_t cols) {
    return type == cudaMemoryTypeUnregistered && rows * cols >= kBounceMinFloats &&
           rows <= BounceBuffers::kMaxSlotFloats;
}

// Waits for ready() (spin_until); returns false if `failed` is set first.
template <class Ready>
bool spin_until_or_failed(Ready&& ready, const std::atomic<bool>& failed) {
    bool ok = true;
    spin_until([&] {
        if (ready()) return true;
        ok = !failed.load(std::memory_order_acquire);
        return !ok;
    });
    return ok;
}

// The host's side of a copy of `cols` columns of `rows` floats in chunks of
// `chunk` columns through the ring of pinned slots, by one team of host
// threads in one parallel region. The team's first thread alone calls CUDA:
// it waits until the copy engine has released chunk i's slot and says so;
// the threads then take the chunk's pieces (256 KiB: columns, or part of a
// tall one) one at a time and copy them (copy_piece(i, first_column,
// columns, first_row, rows), within the chunk); once all are copied the
// first thread issues chunk c = i + lead: the copy engine's part,
// move(j, width, slot, rows) for its columns j .. j+width, queued on
// `stream` before the slot's released event. An upload issues
// each chunk after its host copy (lead 0); a download issues the first `lead`
// = slots chunks up front and each later one once the host has drained the
// slot it reuses. A thread that the system holds back delays only the piece
// it took. With a parallel region a chunk (a fork and a join every 4 MiB),
// the regions cost more than the copies wherever the OpenMP runtime stops
// idle threads spinning: with the caller's OpenMP threads at 64 on the
// four-H200 host, two GPUs' uploads moved 23 GB/s each instead of 46
// (docs/PERFORMANCE.md).
template <class Move, class CopyPiece>
void copy_through_ring(int64_t rows, int64_t cols, int64_t chunk, int64_t lead, BounceBuffers& bounce,
                       cudaStream_t stream, Move&& move, CopyPiece&& copy_piece) {
    constexpr int64_t kThreadPieceFloats = int64_t(1) << 16;  // 256 KiB: what a thread takes at a time
    const int64_t chunks = (cols + chunk - 1) / chunk;
    const int64_t parts = (rows + kThreadPieceFloats - 1) / kThreadPieceFloats;  // pieces a column
    const int64_t group = std::max<int64_t>(1, kThreadPieceFloats / std::max<int64_t>(rows, 1));  // columns a piece
    const auto issue = [&](int64_t c) {
        move(c * chunk, std::min(chunk, cols - c * chunk), bounce.slot(c), rows);
        TANDEM_CUDA_CHECK(cudaEventRecord(bounce.released(c), stream));
    };
    for (int64_t c = 0; c < std::min(lead, chunks); ++c) issue(c);
    std::atomic<int64_t> free_slots{0};  // chunks [0, free_slots) may be copied
    std::vector<std::atomic<int64_t>> taken(static_cast<size_t>(chunks)), copied(static_cast<size_t>(chunks));
    for (int64_t i = 0; i < chunks; ++i) {
        taken[static_cast<size_t>(i)].store(0, std::memory_order_relaxed);
        copied[static_cast<size_t>(i)].store(0, std::memory_order_relaxed);
    }
    std::atomic<bool> failed{false};
    std::exception_ptr error;
#pragma omp parallel num_threads(host_copy_threads())
    {
        const bool first = omp_get_thread_num() == 0;
        try {
            for (int64_t i = 0; i < chunks; ++i) {
                if (first) {
                    TANDEM_CUDA_CHECK(cudaEventSynchronize(bounce.released(i)));
                    free_slots.store(i + 1, std::memory_order_release);
                } else {
                    const auto slot_free = [&] { return free_slots.load(std::memory_order_acquire) > i; };
                    if (!spin_until_or_failed(slot_free, failed)) break;
                }
                const int64_t width = std::min(chunk, cols - i * chunk);
                const int64_t pieces = (width + group - 1) / group * parts;
                std::atomic<int64_t>& next = taken[static_cast<size_t>(i)];
                std::atomic<int64_t>& done = copied[static_cast<size_t>(i)];
                for (int64_t p; (p = next.fetch_add(1, std::memory_order_relaxed)) < pieces;) {
                    const int64_t c0 = p / parts * group, r0 = p % parts * kThreadPieceFloats;
                    copy_piece(i, c0, std::min(group, width - c0), r0, std::min(kThreadPieceFloats, rows - r0));
                    done.fetch_add(1, std::memory_order_acq_rel);
                }
                if (!first) continue;
                const auto all_copied = [&] { return done.load(std::memory_order_acquire) == pieces; };
                if (!spin_until_or_failed(all_copied, failed)) break;
                if (i + lead < chunks) issue(i + lead);
            }
        } catch (...) {
            bool none = false;
            if (failed.compare_exchange_strong(none, true)) error = std::current_exception();
        }
    }
    if (error) std::rethrow_exception(error);
}

// Host -> device in column chunks of `chunk`: through the bounce buffers when
// `bounced` (the host copies chunk i into its slot while the copy engine moves
// earlier ones), else straight from the caller's memory. `send(j, width,
// source, source_ld)` queues on `stream` the device's side of chunk j ..
// j+width, whose host columns are at `source`; with the bounce buffers it must
// not queue the next use of the slot either. Into a slot with plain stores,
// which the copy engine may read from the cache: with non-temporal ones an
// upload's pipeline alone moved 5-30% more, but whole factorizations took
// 2-19% longer at n = 2048-8192 (3% less at 16384: tandem-host-transfers,
// docs/PERFORMANCE.md).
template <class Send>
void upload_in_chunks(const float* host, int64_t ldh, int64_t rows, int64_t cols, int64_t chunk,
                      bool bounced, BounceBuffers& bounce, cudaStream_t stream, Send&& send) {
    if (!bounced) {
        for (int64_t j = 0; j < cols; j += chunk) send(j, std::min(chunk, cols - j), host + j * ldh, ldh);
        return;
    }
    bounce.begin(rows * chunk);  // see BounceBuffers::begin: one cut for all but the tallest blocks
    copy_through_ring(
        rows, cols, chunk, 0, bounce, stream, send,
        [&](int64_t i, int64_t c0, int64_t n, int64_t r0, int64_t m) {
            for (int64_t c = c0; c < c0 + n; ++c)
                std::memcpy(bounce.slot(i) + r0 + c * rows, host + r0 + (i * chunk + c) * ldh, sizeof(float) * m);
        });
}

// Device -> host in column chunks, the mirror of upload_in_chunks: `fetch(j,
// width, target, target_ld)` queues the move of chunk j .. j+width into
// `target` (a slot, or the caller's memory). Every slot is given a chunk
// before the host drains the first, and a drained slot takes its next chunk
// at once, so that the copy engine does not wait for the host. The copy
// engine's earlier uses of a slot come before this one on the stream. Into
// the caller's memory with non-temporal stores (streaming_copy.hpp).
template <class Fetch>
void download_in_chunks(float* host, int64_t ldh, int64_t rows, int64_t cols, int64_t chunk,
                        bool bounced, BounceBuffers& bounce, cudaStream_t stream, Fetch&& fetch) {
    if (!bounced) {
        for (int64_t j = 0; j < cols; j += chunk)
            fetch(j, std::min(chunk, cols - j), host + j * ldh, ldh);
        return;
    }
    bounce.begin(rows * chunk);
    copy_through_ring(
        rows, cols, chunk, bounce.slots(), bounce, stream, fetch,
        [&](int64_t i, int64_t c0, int64_t n, int64_t r0, int64_t m) {
            for (int64_t c = c0; c < c0 + n; ++c)
                copy_floats_streaming(host + r0 + (i * chunk + c) * ldh, bounce.slot(i) + r0 + c * rows, m);
        });
}

// Where the host block of a copy lives and how it moves: whether through the
// bounce buffers (allocated here if they are), and in chunks of how many columns.
struct HostSide {
    cudaMemoryType type;
    bool bounced;
    int64_t chunk;
};

HostSide host_side(const float* host, int64_t rows, int64_t cols, int64_t staging_capacity,
                   BounceBuffers& bounce) {
    const cudaMemoryType type = memory_type(host);
    const bool bounced = use_bounce(type, rows, cols);
    if (bounced) bounce.ensure();
    const int64_t chunk = bounced ? bounce_chunk_columns(rows, cols, staging_capacity)
                                  : chunk_columns(staging_capacity, rows);
    return {type, bounced, chunk};
}

}  // namespace

// A block that fits the staging buffer is transposed in one kernel, after its
// last chunk has arrived there (uploads) or before the first chunk leaves
// (downloads), rather than one kernel a chunk: a kernel on the copy queue
// starts only as blocks of the trailing update's SGEMM finish, and the copy
// engine waits for it. In an n = 32768 factorization from host memory (H200)
// the gathers took 206 ms of the host's time instead of 264, the uploads 122
// ms of the copy queue's instead of 188 (docs/ALGORITHM.md).
void copy_host_to_row_major(const float* host, int64_t ldh, int64_t rows, int64_t cols,
                            float* dst, int64_t ld_dst, const Staging& staging,
                            BounceBuffers& bounce, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;
    if (in_device_memory(memory_type(host))) {  // no copy engine: one transposing pass
        transpose(host, ldh, rows, cols, dst, ld_dst, stream);
        return;
    }
    const HostSide side = host_side(host, rows, cols, staging.capacity, bounce);
    const bool whole = rows * cols <= staging.capacity;
    upload_in_chunks(host, ldh, rows, cols, side.chunk, side.bounced, bounce, stream,
                     [&](int64_t j, int64_t width, const float* source, int64_t source_ld) {
                         // staging: rows x width column-major, ld = rows (the whole
                         // block's columns at their own place when it fits)
                         float* const stage = whole ? staging.data + j * rows : staging.data;
                         TANDEM_CUDA_CHECK(cudaMemcpy2DAsync(
                             stage, sizeof(float) * rows, source, sizeof(float) * source_ld,
                             sizeof(float) * rows, width, cudaMemcpyHostToDevice, stream));
                         if (!whole) transpose(stage, rows, rows, width, dst + j, ld_dst, stream);
                     });
    if (whole) transpose(staging.data, rows, rows, cols, dst, ld_dst, stream);
}

void copy_row_major_to_host(const float* src, int64_t ld_src, int64_t rows, int64_t cols,
                            float* host, int64_t ldh, const Staging& staging,
                            BounceBuffers& bounce, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;
    if (in_device_memory(memory_type(host))) {  // src's columns, read as column-major, are a cols x rows matrix
        transpose(src, ld_src, cols, rows, host, ldh, stream);
        return;
    }
    const HostSide side = host_side(host, rows, cols, staging.capacity, bounce);
    const bool whole = rows * cols <= staging.capacity;
    if (whole) transpose(src, ld_src, cols, rows, staging.data, rows, stream);
    download_in_chunks(host, ldh, rows, cols, side.chunk, side.bounced, bounce, stream,
                       [&](int64_t j, int64_t width, float* target, int64_t target_ld) {
                           // src columns j .. j+width, read as column-major, are a width x rows matrix.
                           const float* stage = whole ? staging.data + j * rows : staging.data;
                           if (!whole)
                               transpose(src + j, ld_src, width, rows, staging.data, rows, stream);
                           TANDEM_CUDA_CHECK(cudaMemcpy2DAsync(
                               target, sizeof(float) * target_ld, stage, sizeof(float) * rows,
                               sizeof(float) * rows, width, cudaMemcpyDeviceToHost, stream));
                       });
}

void copy_host_to_columns(const float* host, int64_t ldh, int64_t rows, int64_t cols, float* dst,
                          int64_t ld_dst, BounceBuffers& bounce, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;
    // No staging: through the bounce buffers in their chunks, else the whole block at once.
    const HostSide side = host_side(host, rows, cols, std::max(rows * cols, rows), bounce);
    upload_in_chunks(host, ldh, rows, cols, side.chunk, side.bounced, bounce, stream,
                     [&](int64_t j, int64_t width, const float* source, int64_t source_ld) {
                         TANDEM_CUDA_CHECK(cudaMemcpy2DAsync(
                             dst + j * ld_dst, sizeof(float) * ld_dst, source,
                             sizeof(float) * source_ld, sizeof(float) * rows, width,
                             cudaMemcpyDefault, stream));
                     });
}

void copy_columns_to_host(const float* src, int64_t ld_src, int64_t rows, int64_t cols,
                          float* host, int64_t ldh, BounceBuffers& bounce, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;
    const HostSide side = host_side(host, rows, cols, std::max(rows * cols, rows), bounce);
    download_in_chunks(host, ldh, rows, cols, side.chunk, side.bounced, bounce, stream,
                       [&](int64_t j, int64_t width, float* target, int64_t target_ld) {
                           TANDEM_CUDA_CHECK(cudaMemcpy2DAsync(
                               target, sizeof(float) * target_ld, src + j * ld_src,
                               sizeof(float) * ld_src, sizeof(float) * rows, width,
                               cudaMemcpyDefault, stream));
                       });
}

}  // namespace tandem::gpu
