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
    const int64_t chunk = chunk_columns(
        bounced ? std::min(staging.capacity, BounceBuffers::kCapacity) : staging.capacity, rows);
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
    const int64_t chunk = chunk_columns(
        bounced ? std::min(staging.capacity, BounceBuffers::kCapacity) : staging.capacity, rows);
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

}  // namespace tandem::gpu
