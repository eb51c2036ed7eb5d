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

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_KERNEL_SHARED_MEMORY_HPP
