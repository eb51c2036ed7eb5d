// Whether this build's GPU code can run on a device: the library is compiled
// for CMAKE_CUDA_ARCHITECTURES (sm_90 by default) only, and on another GPU the
// first launch would fail with "no kernel image". Asking for a kernel's
// attributes answers that without launching anything.
#include "gpu/kernel_image.hpp"

#include <cuda_runtime.h>

namespace tandem::gpu {
namespace {

__global__ void kernel_image_probe() {}

}  // namespace

bool has_kernel_image(int ordinal) {
    int previous = -1;
    if (cudaGetDevice(&previous) != cudaSuccess) previous = -1;
    bool usable = false;
    if (cudaSetDevice(ordinal) == cudaSuccess) {
        cudaFuncAttributes attributes;
        usable = cudaFuncGetAttributes(&attributes, kernel_image_probe) == cudaSuccess;
    }
    if (previous >= 0) (void)cudaSetDevice(previous);
    (void)cudaGetLastError();  // a refusal here is an answer, not an error to report later
    return usable;
}

}  // namespace tandem::gpu
