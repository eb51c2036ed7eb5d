// Lets a kernel use more than the default 48 KiB of dynamic shared memory, and
// asks for the largest shared-memory carveout so that the occupancy each kernel
// was tiled for (e.g. two blocks per SM) is not cut by the L1/shared split.
#ifndef TANDEM_GPU_KERNEL_SHARED_MEMORY_HPP
#define TANDEM_GPU_KERNEL_SHARED_MEMORY_HPP

namespace tandem::gpu {

// Sets the attributes of `kernel` (a __global__ function's address) on the
// current device, once per kernel and device; thread-safe. Throws tandem::Error
// naming cudaFuncSetAttribute on failure.
void prepare_kernel_shared_memory(const void* kernel, int shared_bytes);

// What tandem learns and sets once per device about its kernels (these
// attributes, the leaves' cluster sizes, the row moves a launch takes)
// belongs to the device's CUDA context, which an application's
// cudaDeviceReset() destroys. Each such memo is kept with the generation it
// was made in; release_devices() (tandem::release_resources) starts a new
// one, after which every memo is made again.
unsigned kernel_settings_generation();
void forget_kernel_settings();

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_KERNEL_SHARED_MEMORY_HPP
