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

// A Device on CUDA device `ordinal` (its own streams, events, cuBLAS handle).
// Every method sets the CUDA device it needs and restores the caller's.
std::unique_ptr<Device> make_cuda_device(int ordinal);

// Sets which SGEMM a device made by make_cuda_device uses (Options::gemm) and
// where its tuning table is cached.
void set_gemm_policy(Device& cuda_device, GemmKernel kernel, const std::string& cache_dir);

}  // namespace tandem::gpu

#endif
