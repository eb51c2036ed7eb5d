#include "gpu/bounce_buffers.hpp"
#include "gpu/device_buffer.hpp"

#include <algorithm>
#include <string>

#include "gpu/cuda_check.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {

void BounceBuffers::begin(int64_t chunk_floats) {
    if (chunk_floats <= 0 || chunk_floats > kMaxSlotFloats)
        throw Error(TANDEM_ERROR_INTERNAL, "bounce buffers: a chunk of " + std::to_string(chunk_floats) +
                                               " floats (at most " + std::to_string(kMaxSlotFloats) + ")");
    const int64_t slot_floats = std::max(chunk_floats, kSlotFloats);
    if (slot_floats == slot_floats_) return;
    for (cudaEvent_t e : released_) TANDEM_CUDA_CHECK(cudaEventSynchronize(e));
    slot_floats_ = slot_floats;
    slots_ = static_cast<int>(std::min<int64_t>(kMaxSlots, kCapacity / slot_floats));
}

void BounceBuffers::ensure() {
    if (data_ != nullptr) return;
    try {
        void* p = nullptr;
        TANDEM_CUDA_CHECK(cudaHostAlloc(&p, sizeof(float) * kCapacity, cudaHostAllocPortable));
        data_ = static_cast<float*>(p);
        for (cudaEvent_t& e : released_)
            TANDEM_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    } catch (...) {
        release();
        throw;
    }
}

void BounceBuffers::release() noexcept {
    slot_floats_ = 0;
    slots_ = 1;
    if (cuda_objects_orphaned()) {  // the reset freed them
        for (cudaEvent_t& e : released_) e = nullptr;
        data_ = nullptr;
        return;
    }
    for (cudaEvent_t& e : released_) {
        if (e) {
            (void)cudaEventSynchronize(e);
            (void)cudaEventDestroy(e);
        }
        e = nullptr;
    }
    if (data_) (void)cudaFreeHost(data_);
    data_ = nullptr;
}

}  // namespace tandem::gpu
