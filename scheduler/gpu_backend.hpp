// What the rest of tandem asks of the GPU backend, besides the device
// interface (scheduler/device.hpp). gpu/cuda_backend.cpp implements it with
// CUDA; a build without CUDA links gpu/without_cuda.cpp instead, which finds no
// GPU and says why. Nothing here has a CUDA type in it.
#ifndef TANDEM_SCHEDULER_GPU_BACKEND_HPP
#define TANDEM_SCHEDULER_GPU_BACKEND_HPP

#include <mutex>
#include <string>

#include "scheduler/device.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {

// Number of usable CUDA devices; 0 when there is no driver, no device, or no
// CUDA backend in this build.
int device_count();

// Why no device is usable (the failing call and its message), "" if one is.
std::string unavailable_reason();

// The ordinal of the CUDA device whose memory holds `pointer` (device or
// managed memory), or -1 for host memory (pageable, pinned or unknown to CUDA).
int memory_device(const void* pointer);

// Whether `pointer` is device memory that the host cannot dereference (not
// managed memory, which it can).
bool is_device_only_memory(const void* pointer);

// Waits for all work issued to CUDA device `ordinal` so far (by anyone in
// this process): sgetrf_gpu starts only after the caller's writes to A.
void synchronize_device(int ordinal);

// The process's devices, one per CUDA ordinal, made on first use and kept
// (streams, handles, pinned buffers and device memory large enough for the
// next call), so that a call at small n pays no set-up. Calls from several
// threads take turns: hold lock_devices() while using them.
std::unique_lock<std::mutex> lock_devices();
// How a kept device computes: Options' GPU knobs.
struct GpuSettings {
    GemmKernel gemm = GemmKernel::automatic;         // the updates' SGEMM
    UpdatePrecision update = UpdatePrecision::fp32;  // and their arithmetic
    DevicePanelMethod panel = DevicePanelMethod::automatic;
    std::string cache_dir;  // where the SGEMM tuning table is cached
};
// The kept device of `ordinal`, set to compute as `settings` says. Requires
// lock_devices().
Device& kept_device(int ordinal, const GpuSettings& settings);
// Frees the kept devices and the library handles kept beside them
// (tandem::release_resources).
void release_devices();

}  // namespace tandem::gpu

#endif  // TANDEM_SCHEDULER_GPU_BACKEND_HPP
