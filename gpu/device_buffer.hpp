// Owning handle of one cudaMalloc allocation. Freed (without throwing) by the
// destructor or reset(); cudaFree works whichever device is current, so the
// owner need not set its device first.
#ifndef TANDEM_GPU_DEVICE_BUFFER_HPP
#define TANDEM_GPU_DEVICE_BUFFER_HPP

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

namespace tandem::gpu {

// While true, tandem's CUDA objects (allocations, pinned blocks, streams,
// events, library handles) are dropped instead of freed: the context they
// were made in is gone (an application's cudaDeviceReset()) and took them
// with it, and destroying them again can crash inside cuBLAS or cuSOLVER.
// Set only by release_devices(), under its lock, while it destroys the kept
// devices whose context was reset.
bool& cuda_objects_orphaned();

class DeviceBuffer {
public:
    DeviceBuffer() = default;
    // `what` names the buffer in the out-of-memory error, e.g. "matrix storage".
    DeviceBuffer(size_t bytes, const char* what);
    ~DeviceBuffer() { reset(); }

    DeviceBuffer(DeviceBuffer&& other) noexcept
        : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
        if (this != &other) {
            reset();
            ptr_ = std::exchange(other.ptr_, nullptr);
            bytes_ = std::exchange(other.bytes_, 0);
        }
        return *this;
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    void reset() noexcept {
        if (ptr_ && !cuda_objects_orphaned()) (void)cudaFree(ptr_);
        ptr_ = nullptr;
        bytes_ = 0;
    }
    // At least `bytes` from now on: a smaller buffer is freed first (its
    // contents are not kept; the two need not fit together) and replaced.
    void ensure(size_t bytes, const char* what) {
        if (bytes_ >= bytes) return;
        reset();
        *this = DeviceBuffer(bytes, what);
    }
    // Hands the allocation to the caller (who frees it with cudaFree); empty after.
    void* release() noexcept {
        bytes_ = 0;
        return std::exchange(ptr_, nullptr);
    }
    size_t bytes() const { return bytes_; }
    float* floats() const { return static_cast<float*>(ptr_); }
    int* ints() const { return static_cast<int*>(ptr_); }

private:
    void* ptr_ = nullptr;
    size_t bytes_ = 0;
};

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_DEVICE_BUFFER_HPP
