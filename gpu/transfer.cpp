#include "gpu/transfer.hpp"

#include <algorithm>
#include <string>

#include "gpu/cuda_check.hpp"
#include "gpu/transpose.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {
namespace {

// Columns per chunk: as many whole columns of `rows` floats as the staging buffer holds.
int64_t chunk_columns(const Staging& staging, int64_t rows) {
    if (staging.capacity < rows)
        throw Error(TANDEM_ERROR_INTERNAL, "staging buffer of " +
                                               std::to_string(staging.capacity) +
                                               " floats is shorter than a column of " +
                                               std::to_string(rows));
    return staging.capacity / rows;
}

}  // namespace

void copy_host_to_row_major(const float* host, int64_t ldh, int64_t rows, int64_t cols,
                            float* dst, int64_t ld_dst, const Staging& staging,
                            cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;
    const int64_t chunk = chunk_columns(staging, rows);
    for (int64_t j = 0; j < cols; j += chunk) {
        const int64_t width = std::min(chunk, cols - j);
        // staging: rows x width column-major, ld = rows
        TANDEM_CUDA_CHECK(cudaMemcpy2DAsync(staging.data, sizeof(float) * rows, host + j * ldh,
                                            sizeof(float) * ldh, sizeof(float) * rows, width,
                                            cudaMemcpyHostToDevice, stream));
        transpose(staging.data, rows, rows, width, dst + j, ld_dst, stream);
    }
}

void copy_row_major_to_host(const float* src, int64_t ld_src, int64_t rows, int64_t cols,
                            float* host, int64_t ldh, const Staging& staging,
                            cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;
    const int64_t chunk = chunk_columns(staging, rows);
    for (int64_t j = 0; j < cols; j += chunk) {
        const int64_t width = std::min(chunk, cols - j);
        // src columns j .. j+width, read as column-major, are a width x rows matrix.
        transpose(src + j, ld_src, width, rows, staging.data, rows, stream);
        TANDEM_CUDA_CHECK(cudaMemcpy2DAsync(host + j * ldh, sizeof(float) * ldh, staging.data,
                                            sizeof(float) * rows, sizeof(float) * rows, width,
                                            cudaMemcpyDeviceToHost, stream));
    }
}

}  // namespace tandem::gpu
