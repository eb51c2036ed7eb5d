// Transposing copies between host column-major blocks and device row-major
// storage, through a device staging buffer:
//   upload:   host (col-major) --copy engine--> staging (col-major) --transpose--> device (row-major)
//   download: device (row-major) --transpose--> staging (col-major) --copy engine--> host
// Blocks wider than the staging buffer go in column chunks, one after another
// through the same staging buffer: safe because every step of a copy is issued
// on the same in-order stream. The staging and bounce buffers must not be used
// on any other stream.
//
// A "host" block that is in fact in GPU memory (the caller's matrix of
// tandem::sgetrf_gpu) is transposed in one kernel, without staging.
// Pinned host memory is copied directly and asynchronously. Large PAGEABLE
// blocks go through the pinned bounce buffers, the host copying one chunk while
// the copy engine moves the previous one; such a call returns once the host
// side is done with the caller's memory (as the driver's pageable path does).
#ifndef TANDEM_GPU_TRANSFER_HPP
#define TANDEM_GPU_TRANSFER_HPP

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/bounce_buffers.hpp"

namespace tandem::gpu {

struct Staging {
    float* data;       // device memory
    int64_t capacity;  // floats; at least the row count of any block copied through it
};

// dst[i * ld_dst + j] = host[i + j * ldh] for i < rows, j < cols, on `stream`.
// Pinned host memory must stay unchanged until the stream has passed this point.
void copy_host_to_row_major(const float* host, int64_t ldh, int64_t rows, int64_t cols,
                            float* dst, int64_t ld_dst, const Staging& staging,
                            BounceBuffers& bounce, cudaStream_t stream);

// host[i + j * ldh] = src[i * ld_src + j] for i < rows, j < cols, on `stream`.
// Pinned host memory is written once the stream passes this point; pageable
// memory before this returns.
void copy_row_major_to_host(const float* src, int64_t ld_src, int64_t rows, int64_t cols,
                            float* host, int64_t ldh, const Staging& staging,
                            BounceBuffers& bounce, cudaStream_t stream);

// The same copies without the transposition, for a device matrix that stays
// column-major (the host-memory route whose plan is one panel over the whole
// matrix): dst[i + j * ld_dst] = host[i + j * ldh]. Only the copy engine works
// on the device: no kernel is queued, so nothing waits for free SMs.
void copy_host_to_columns(const float* host, int64_t ldh, int64_t rows, int64_t cols, float* dst,
                          int64_t ld_dst, BounceBuffers& bounce, cudaStream_t stream);
// host[i + j * ldh] = src[i + j * ld_src]; written as copy_row_major_to_host writes.
void copy_columns_to_host(const float* src, int64_t ld_src, int64_t rows, int64_t cols,
                          float* host, int64_t ldh, BounceBuffers& bounce, cudaStream_t stream);

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_TRANSFER_HPP
