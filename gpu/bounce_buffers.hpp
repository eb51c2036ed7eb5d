// Two pinned host buffers through which the transposing copies move data from
// and to PAGEABLE host memory (the caller's matrix). The host fills (or drains)
// one while the copy engine drains (or fills) the other; the driver's own
// pageable path moves only 7-9 GB/s on an H200 host, against about 55 GB/s
// from pinned memory. Allocated on first use, kept until release().
#ifndef TANDEM_GPU_BOUNCE_BUFFERS_HPP
#define TANDEM_GPU_BOUNCE_BUFFERS_HPP

#include <cuda_runtime.h>

#include <cstdint>

namespace tandem::gpu {

class BounceBuffers {
public:
    static constexpr int64_t kCapacity = int64_t(4) << 20;  // floats per buffer (16 MiB)

    BounceBuffers() = default;
    ~BounceBuffers() { release(); }
    BounceBuffers(const BounceBuffers&) = delete;
    BounceBuffers& operator=(const BounceBuffers&) = delete;

    // Allocates the buffers and their events on the current device if not done yet.
    void ensure();
    void release() noexcept;

    float* data(int i) const { return data_[i]; }
    // Recorded on the stream after the copy engine's last use of buffer i; the
    // host synchronizes on it before touching buffer i again.
    cudaEvent_t released(int i) const { return released_[i]; }

private:
    float* data_[2] = {};
    cudaEvent_t released_[2] = {};
};

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_BOUNCE_BUFFERS_HPP
