#include "gpu/transfer.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "cpu/streaming_copy.hpp"
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

// Columns per chunk of a copy through the bounce buffers: a quarter of the
// block, so that the host's copy of one chunk overlaps the copy engine's move
// of the next even for a block that one buffer would hold whole (a piece of
// the factors gathered in one chunk moved at 17 GB/s: the copy engine and the
// host took turns); at least 4 MiB (each chunk costs a few launches), at
// most a bounce buffer.
int64_t bounce_chunk_columns(int64_t rows, int64_t cols, int64_t capacity) {
    constexpr int64_t kMinChunkFloats = int64_t(1) << 20;
    const int64_t most = chunk_columns(std::min(capacity, BounceBuffers::kCapacity), rows);
    const int64_t least = std::max<int64_t>(1, kMinChunkFloats / rows);
    return std::clamp((cols + 3) / 4, std::min(least, most), most);
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
           rows <= BounceBuffers::kCapacity;
}

// Column-major block copy on the host (rows x cols), parallel over columns:
// one thread copies at about 10 GB/s, far below the copy engine's rate. Into
// the caller's memory (`streaming`) with non-temporal stores; into a bounce
// buffer with plain ones (measured as fast, and the lines may stay in cache).
void copy_columns(const float* from, int64_t ld_from, float* to, int64_t ld_to, int64_t rows,
                  int64_t cols, bool streaming) {
#pragma omp parallel for schedule(static)
    for (int64_t j = 0; j < cols; ++j) {
        if (streaming)
            copy_floats_streaming(to + j * ld_to, from + j * ld_from, rows);
        else
            std::memcpy(to + j * ld_to, from + j * ld_from, sizeof(float) * rows);
    }
}

}  // namespace

void copy_host_to_row_major(const float* host, int64_t ldh, int64_t rows, int64_t cols,
                            float* dst, int64_t ld_dst, const Staging& staging,
                            BounceBuffers& bounce, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;
    const cudaMemoryType type = memory_type(host);
    if (in_device_memory(type)) {  // no copy engine: one transposing pass
        transpose(host, ldh, rows, cols, dst, ld_dst, stream);
        return;
    }
    const bool bounced = use_bounce(type, rows, cols);
    if (bounced) bounce.ensure();
    const int64_t chunk = bounced ? bounce_chunk_columns(rows, cols, staging.capacity)
                                  : chunk_columns(staging.capacity, rows);
    for (int64_t j = 0, i = 0; j < cols; j += chunk, ++i) {
        const int64_t width = std::min(chunk, cols - j);
        const float* source = host + j * ldh;
        int64_t source_ld = ldh;
        if (bounced) {  // the copy engine is done with this buffer's previous chunk
            float* buffer = bounce.data(i % 2);
            TANDEM_CUDA_CHECK(cudaEventSynchronize(bounce.released(i % 2)));
            copy_columns(source, ldh, buffer, rows, rows, width, false);
            source = buffer;
            source_ld = rows;
        }
        // staging: rows x width column-major, ld = rows
        TANDEM_CUDA_CHECK(cudaMemcpy2DAsync(staging.data, sizeof(float) * rows, source,
                                            sizeof(float) * source_ld, sizeof(float) * rows,
                                            width, cudaMemcpyHostToDevice, stream));
        if (bounced) TANDEM_CUDA_CHECK(cudaEventRecord(bounce.released(i % 2), stream));
        transpose(staging.data, rows, rows, width, dst + j, ld_dst, stream);
    }
}

void copy_row_major_to_host(const float* src, int64_t ld_src, int64_t rows, int64_t cols,
                            float* host, int64_t ldh, const Staging& staging,
                            BounceBuffers& bounce, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;
    const cudaMemoryType type = memory_type(host);
    if (in_device_memory(type)) {  // src's columns, read as column-major, are a cols x rows matrix
        transpose(src, ld_src, cols, rows, host, ldh, stream);
        return;
    }
    const bool bounced = use_bounce(type, rows, cols);
    if (bounced) bounce.ensure();
    const int64_t chunk = bounced ? bounce_chunk_columns(rows, cols, staging.capacity)
                                  : chunk_columns(staging.capacity, rows);
    // The host drains chunk i-1 from its bounce buffer while the device produces chunk i.
    auto drain = [&](int64_t i) {
        const int64_t j = i * chunk, width = std::min(chunk, cols - j);
        TANDEM_CUDA_CHECK(cudaEventSynchronize(bounce.released(i % 2)));
        copy_columns(bounce.data(i % 2), rows, host + j * ldh, ldh, rows, width, true);
    };
    int64_t i = 0;
    for (int64_t j = 0; j < cols; j += chunk, ++i) {
        const int64_t width = std::min(chunk, cols - j);
        // src columns j .. j+width, read as column-major, are a width x rows matrix.
        transpose(src + j, ld_src, width, rows, staging.data, rows, stream);
        float* target = bounced ? bounce.data(i % 2) : host + j * ldh;
        const int64_t target_ld = bounced ? rows : ldh;
        TANDEM_CUDA_CHECK(cudaMemcpy2DAsync(target, sizeof(float) * target_ld, staging.data,
                                            sizeof(float) * rows, sizeof(float) * rows, width,
                                            cudaMemcpyDeviceToHost, stream));
        if (bounced) {
            TANDEM_CUDA_CHECK(cudaEventRecord(bounce.released(i % 2), stream));
            if (i > 0) drain(i - 1);
        }
    }
    if (bounced) drain(i - 1);
}

void copy_host_to_columns(const float* host, int64_t ldh, int64_t rows, int64_t cols, float* dst,
                          int64_t ld_dst, BounceBuffers& bounce, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;
    const bool bounced = use_bounce(memory_type(host), rows, cols);
    if (!bounced) {  // pinned, device or small: one copy
        TANDEM_CUDA_CHECK(cudaMemcpy2DAsync(dst, sizeof(float) * ld_dst, host, sizeof(float) * ldh,
                                            sizeof(float) * rows, cols, cudaMemcpyDefault, stream));
        return;
    }
    bounce.ensure();
    const int64_t chunk = bounce_chunk_columns(rows, cols, BounceBuffers::kCapacity);
    for (int64_t j = 0, i = 0; j < cols; j += chunk, ++i) {
        const int64_t width = std::min(chunk, cols - j);
        float* buffer = bounce.data(i % 2);
        TANDEM_CUDA_CHECK(cudaEventSynchronize(bounce.released(i % 2)));
        copy_columns(host + j * ldh, ldh, buffer, rows, rows, width, false);
        TANDEM_CUDA_CHECK(cudaMemcpy2DAsync(dst + j * ld_dst, sizeof(float) * ld_dst, buffer,
                                            sizeof(float) * rows, sizeof(float) * rows, width,
                                            cudaMemcpyHostToDevice, stream));
        TANDEM_CUDA_CHECK(cudaEventRecord(bounce.released(i % 2), stream));
    }
}

void copy_columns_to_host(const float* src, int64_t ld_src, int64_t rows, int64_t cols,
                          float* host, int64_t ldh, BounceBuffers& bounce, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;
    const bool bounced = use_bounce(memory_type(host), rows, cols);
    if (!bounced) {
        TANDEM_CUDA_CHECK(cudaMemcpy2DAsync(host, sizeof(float) * ldh, src, sizeof(float) * ld_src,
                                            sizeof(float) * rows, cols, cudaMemcpyDefault, stream));
        return;
    }
    bounce.ensure();
    const int64_t chunk = bounce_chunk_columns(rows, cols, BounceBuffers::kCapacity);
    // The host drains chunk i-1 while the copy engine fills chunk i.
    auto drain = [&](int64_t i) {
        const int64_t j = i * chunk, width = std::min(chunk, cols - j);
        TANDEM_CUDA_CHECK(cudaEventSynchronize(bounce.released(i % 2)));
        copy_columns(bounce.data(i % 2), rows, host + j * ldh, ldh, rows, width, true);
    };
    int64_t i = 0;
    for (int64_t j = 0; j < cols; j += chunk, ++i) {
        const int64_t width = std::min(chunk, cols - j);
        TANDEM_CUDA_CHECK(cudaMemcpy2DAsync(bounce.data(i % 2), sizeof(float) * rows,
                                            src + j * ld_src, sizeof(float) * ld_src,
                                            sizeof(float) * rows, width, cudaMemcpyDeviceToHost,
                                            stream));
        TANDEM_CUDA_CHECK(cudaEventRecord(bounce.released(i % 2), stream));
        if (i > 0) drain(i - 1);
    }
    drain(i - 1);
}

}  // namespace tandem::gpu
