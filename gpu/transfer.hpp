// Transposing copies between host column-major blocks and device row-major
// storage, through a device staging buffer:
//   upload:   host (col-major) --cudaMemcpy2DAsync--> staging (col-major) --transpose--> device (row-major)
//   download: device (row-major) --transpose--> staging (col-major) --cudaMemcpy2DAsync--> host
// A block wider than the staging buffer goes in column chunks. Chunks reuse
// the staging buffer one after another, which is safe because every step of a
// copy is issued on the same (in-order) stream; the staging buffer must not be
// used on any other stream meanwhile.
#ifndef TANDEM_GPU_TRANSFER_HPP
#define TANDEM_GPU_TRANSFER_HPP

#include <cuda_runtime.h>

#include <cstdint>

namespace tandem::gpu {

struct Staging {
    float* data;       // device memory
    int64_t capacity;  // floats; at least the row count of any block copied through it
};

// dst[i * ld_dst + j] = host[i + j * ldh] for i < rows, j < cols. Asynchronous on
// `stream`: host must stay unchanged until the stream has passed this point.
void copy_host_to_row_major(const float* host, int64_t ldh, int64_t rows, int64_t cols,
                            float* dst, int64_t ld_dst, const Staging& staging,
                            cudaStream_t stream);

// host[i + j * ldh] = src[i * ld_src + j] for i < rows, j < cols. Asynchronous on
// `stream` (for pinned host memory): host is written once the stream passes this point.
void copy_row_major_to_host(const float* src, int64_t ld_src, int64_t rows, int64_t cols,
                            float* host, int64_t ldh, const Staging& staging,
                            cudaStream_t stream);

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_TRANSFER_HPP
