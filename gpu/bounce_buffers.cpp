#include "gpu/bounce_buffers.hpp"
#include "gpu/device_buffer.hpp"

#include "gpu/cuda_check.hpp"

namespace tandem::gpu {

void BounceBuffers::ensure() {
    if (data_[0] != nullptr) return;
    try {
        for (int i = 0; i < 2; ++i) {
            void* p = nullptr;
            TANDEM_CUDA_CHECK(cudaHostAlloc(&p, sizeof(float) * kCapacity, cudaHostAllocPortable));
            data_[i] = static_cast<float*>(p);
            TANDEM_CUDA_CHECK(cudaEventCreateWithFlags(&released_[i], cudaEventDisableTiming));
        }
    } catch (...) {
        release();
        throw;
    }
}

void BounceBuffers::release() noexcept {
    if (cuda_objects_orphaned()) {  // the reset freed them
        for (int i = 0; i < 2; ++i) {
            released_[i] = nullptr;
            data_[i] = nullptr;
        }
        return;
    }
    for (int i = 0; i < 2; ++i) {
        if (released_[i]) {
            (void)cudaEventSynchronize(released_[i]);
            (void)cudaEventDestroy(released_[i]);
        }
        if (data_[i]) (void)cudaFreeHost(data_[i]);
        released_[i] = nullptr;
        data_[i] = nullptr;
    }
}

}  // namespace tandem::gpu
