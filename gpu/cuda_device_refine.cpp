// What the refined solve (sgesv_refined) asks of a GPU besides the LU and its
// solves: its own arrays, copies, and products with A in double.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gpu/cuda_check.hpp"
#include "gpu/cuda_device.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/refinement_kernels.hpp"
#include "gpu/transfer.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {

float* CudaDevice::allocate_matrix(int64_t count) {
    DeviceGuard guard(ordinal_);
    const size_t bytes = sizeof(float) * static_cast<size_t>(std::max<int64_t>(count, 1));
    make_room(bytes);
    return static_cast<float*>(DeviceBuffer(bytes, "refined solve's matrix").release());
}

// As DeviceBuffer frees: on whichever device is current, and not at all once
// the context is gone (cuda_objects_orphaned).
void CudaDevice::free_matrix(float* p) noexcept {
    if (p != nullptr && !cuda_objects_orphaned()) (void)cudaFree(p);
}

void CudaDevice::copy_matrix(int64_t rows, int64_t cols, const float* src, int64_t lds, float* dst,
                             int64_t ldd) {
    DeviceGuard guard(ordinal_);
    if (rows <= 0 || cols <= 0) return;
    const cudaStream_t s = stream(Queue::compute);
    // Pageable host blocks go through the pinned bounce buffers, as the
    // factorization's own copies do (transfer.hpp).
    cudaPointerAttributes target;
    TANDEM_CUDA_CHECK(cudaPointerGetAttributes(&target, dst));
    if (target.type == cudaMemoryTypeDevice || target.type == cudaMemoryTypeManaged)
        copy_host_to_columns(src, lds, rows, cols, dst, ldd, bounce(Queue::compute), s);
    else
        copy_columns_to_host(src, lds, rows, cols, dst, ldd, bounce(Queue::compute), s);
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(s));
}

void CudaDevice::multiply_in_double(int64_t n, int64_t k, const float* a, int64_t lda,
                                    const double* z, double* y) {
    DeviceGuard guard(ordinal_);
    if (n <= 0 || k <= 0) return;
    const cudaStream_t s = stream(Queue::compute);
    // Z and Y side by side, as many columns at a time as 64 MB holds (at least one).
    const int64_t per_column = 2 * n * int64_t(sizeof(double));
    const int64_t chunk = std::clamp<int64_t>((int64_t(64) << 20) / per_column, 1, std::min<int64_t>(k, 65535));
    refine_vectors_.ensure(static_cast<size_t>(chunk * per_column), "refinement vectors");
    double* dz = static_cast<double*>(static_cast<void*>(refine_vectors_.floats()));
    double* dy = dz + chunk * n;
    for (int64_t c = 0; c < k; c += chunk) {
        const int64_t cols = std::min(chunk, k - c);
        TANDEM_CUDA_CHECK(cudaMemcpyAsync(dz, z + c * n, sizeof(double) * n * cols,
                                          cudaMemcpyDefault, s));
        gpu::multiply_in_double(s, n, cols, a, lda, dz, dy);
        TANDEM_CUDA_CHECK(cudaMemcpyAsync(y + c * n, dy, sizeof(double) * n * cols,
                                          cudaMemcpyDefault, s));
        TANDEM_CUDA_CHECK(cudaStreamSynchronize(s));
    }
}

double CudaDevice::norm_inf(int64_t n, const float* a, int64_t lda) {
    DeviceGuard guard(ordinal_);
    if (n <= 0) return 0.0;
    const cudaStream_t s = stream(Queue::compute);
    refine_vectors_.ensure(sizeof(double) * static_cast<size_t>(n), "refinement vectors");
    double* sums = static_cast<double*>(static_cast<void*>(refine_vectors_.floats()));
    row_abs_sums(s, n, a, lda, sums);
    std::vector<double> host(static_cast<size_t>(n));
    TANDEM_CUDA_CHECK(cudaMemcpyAsync(host.data(), sums, sizeof(double) * n, cudaMemcpyDeviceToHost, s));
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(s));
    double norm = 0.0;
    for (const double v : host) {
        if (std::isnan(v)) return v;
        norm = std::max(norm, v);
    }
    return norm;
}

}  // namespace tandem::gpu
