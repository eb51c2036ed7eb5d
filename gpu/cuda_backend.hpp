// Entry points of the CUDA backend for the rest of tandem. This header has no
// CUDA types in it: src/ includes it (under TANDEM_HAVE_CUDA) without CUDA headers.
#ifndef TANDEM_GPU_CUDA_BACKEND_HPP
#define TANDEM_GPU_CUDA_BACKEND_HPP

#include <memory>
#include <string>

#include "scheduler/device.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {

// Number of usable CUDA devices; 0 when there is no driver or no device.
int device_count();

// Why no device is usable (the failing call and its message), "" if one is.
std::string unavailable_reason();

// The ordinal of the CUDA device whose memory holds `pointer` (device or
// managed memory), or -1 for host memory (pageable, pinned or unknown to CUDA).
int memory_device(const void* pointer);

// Waits for all work issued to CUDA device `ordinal` so far (by anyone in
// this process): sgetrf_gpu starts only after the caller's writes to A.
void synchronize_device(int ordinal);

// sgetrs_gpu on a device made by make_cuda_device: see CudaDevice::solve_column_major.
void solve_column_major(Device& cuda_device, char trans, int64_t n, int64_t nrhs, const float* a,
                        int64_t lda, const int* ipiv, float* b, int64_t ldb);

// Whether `pointer` is device memory that the host cannot dereference (not
// managed memory, which it can).
bool is_device_only_memory(const void* pointer);

// sgetrf_gpu's single-panel plan on a device made by make_cuda_device: see
// CudaDevice::factor_column_major.
int factor_column_major(Device& cuda_device, int64_t m, int64_t n, float* a, int64_t lda, int* ipiv);

// sgetrf on a host matrix whose plan is one device panel, and the solve with
// the factors it leaves on the GPU: see CudaDevice::factor_host_column_major
// and CudaDevice::solve_kept_factors.
int factor_host_column_major(Device& cuda_device, int64_t m, int64_t n, float* a, int64_t lda,
                             int* ipiv);
void solve_kept_factors(Device& cuda_device, char trans, int64_t n, int64_t nrhs, const int* ipiv,
                        float* b, int64_t ldb);

// A Device on CUDA device `ordinal` (its own streams, events, cuBLAS handle).
// Every method sets the CUDA device it needs and restores the caller's.
std::unique_ptr<Device> make_cuda_device(int ordinal);

// Sets which SGEMM a device made by make_cuda_device uses (Options::gemm) and
// where its tuning table is cached.
void set_gemm_policy(Device& cuda_device, GemmKernel kernel, const std::string& cache_dir);
// How the device factors its panels (Options::device_panel).
void set_panel_method(Device& cuda_device, DevicePanelMethod method);

// Frees the library handles kept beside the devices, one per GPU (cuBLASLt's,
// for the SGEMM menu); tandem::release_resources calls it with the devices gone.
void release_shared_handles();

}  // namespace tandem::gpu

#endif
