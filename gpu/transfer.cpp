#include "gpu/transfer.hpp"

#include <algorithm>
#include <cstring>
#include <string>

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

// Column-major block copy on the host (rows x cols), parallel over columns:
// one thread copies at about 10 GB/s, far below the copy engine's rate. Into
// the caller's memory (`streaming`) with non-temporal stores; into a bounce
// buffer with plain ones, which the copy engine may read from the cache: with
// non-temporal ones an upload's pipeline alone moved 5-30% more, but whole
// factorizations took 2-19% longer at n = 2048-8192 (3% less at 16384:
// tandem-host-transfers, docs/PERFORMANCE.md).
void copy_columns(const float* from, int64_t ld_from, float* to, int64_t ld_to, int64_t rows,
                  int64_t cols, bool streaming) {
#pragma omp parallel for schedule(static) num_threads(host_copy_threads())
    for (int64_t j = 0; j < cols; ++j) {
        if (streaming)
            copy_floats_streaming(to + j * ld_to, from + j * ld_from, rows);
        else
            std::memcpy(to + j * ld_to, from + j * ld_from, sizeof(float) * rows);
    }
}

// Host -> device in column chunks of `chunk`: through the bounce buffers when
// `bounced` (the host copies chunk i into its slot while the copy engine moves
// earlier ones), else straight from the caller's memory. `send(j, width,
// source, source_ld)` queues on `stream` the device's side of chunk j ..
// j+width, whose host columns are at `source`; with the bounce buffers it must
// not queue the next use of the slot either.
template <class Send>
void upload_in_chunks(const float* host, int64_t ldh, int64_t rows, int64_t cols, int64_t chunk,
                      bool bounced, BounceBuffers& bounce, cudaStream_t stream, Send&& send) {
    if (bounced) bounce.begin(rows * chunk);  // see BounceBuffers::begin: one cut for all but the tallest blocks
    for (int64_t j = 0, i = 0; j < cols; j += chunk, ++i) {
        const int64_t width = std::min(chunk, cols - j);
        const float* source = host + j * ldh;
        int64_t source_ld = ldh;
        if (bounced) {  // the copy engine is done with this slot's previous chunk
            float* slot = bounce.slot(i);
            TANDEM_CUDA_CHECK(cudaEventSynchronize(bounce.released(i)));
            copy_columns(source, ldh, slot, rows, rows, width, false);
            source = slot;
            source_ld = rows;
        }
        send(j, width, source, source_ld);
        if (bounced) TANDEM_CUDA_CHECK(cudaEventRecord(bounce.released(i), stream));
    }
}

// Device -> host in column chunks, the mirror of upload_in_chunks: `fetch(j,
// width, target, target_ld)` queues the move of chunk j .. j+width into
// `target` (a slot, or the caller's memory). Every slot is given a chunk
// before the host drains the first, and a drained slot takes its next chunk
// at once, so that the copy engine does not wait for the host.
template <class Fetch>
void download_in_chunks(float* host, int64_t ldh, int64_t rows, int64_t cols, int64_t chunk,
                        bool bounced, BounceBuffers& bounce, cudaStream_t stream, Fetch&& fetch) {
    if (!bounced) {
        for (int64_t j = 0; j < cols; j += chunk)
            fetch(j, std::min(chunk, cols - j), host + j * ldh, ldh);
        return;
    }
    const int64_t chunks = (cols + chunk - 1) / chunk;
    bounce.begin(rows * chunk);
    const int64_t slots = bounce.slots();
    // The copy engine's earlier uses of a slot come before this one on the
    // stream, and the host has drained each slot before it is given a chunk.
    auto issue = [&](int64_t i) {
        const int64_t j = i * chunk;
        fetch(j, std::min(chunk, cols - j), bounce.slot(i), rows);
        TANDEM_CUDA_CHECK(cudaEventRecord(bounce.released(i), stream));
    };
    for (int64_t i = 0; i < std::min(slots, chunks); ++i) issue(i);
    for (int64_t i = 0; i < chunks; ++i) {
        const int64_t j = i * chunk, width = std::min(chunk, cols - j);
        TANDEM_CUDA_CHECK(cudaEventSynchronize(bounce.released(i)));
        copy_columns(bounce.slot(i), rows, host + j * ldh, ldh, rows, width, true);
        if (i + slots < chunks) issue(i + slots);
    }
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
