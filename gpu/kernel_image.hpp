#ifndef TANDEM_GPU_KERNEL_IMAGE_HPP
#define TANDEM_GPU_KERNEL_IMAGE_HPP

namespace tandem::gpu {

// True when CUDA device `ordinal` can run the kernels this library was built
// with. Leaves the caller's current device as it was; never throws.
bool has_kernel_image(int ordinal);

}  // namespace tandem::gpu

#endif
