// Host memory from a device (pinned on a GPU, so that copies can be
// asynchronous), freed on every exit path.
#ifndef TANDEM_SCHEDULER_HOST_BUFFER_HPP
#define TANDEM_SCHEDULER_HOST_BUFFER_HPP

#include <cstdint>

#include "scheduler/device.hpp"

namespace tandem {

class HostBuffer {
public:
    HostBuffer(Device& owner, int64_t count)
        : owner_(owner), data_(owner.host_alloc(count)), count_(count) {}
    ~HostBuffer() {
        try {
            owner_.host_free(data_);
        } catch (...) {  // a destructor must not throw; the block is lost at worst
        }
    }
    HostBuffer(const HostBuffer&) = delete;
    HostBuffer& operator=(const HostBuffer&) = delete;
    float* data() const { return data_; }
    int64_t count() const { return count_; }  // floats

private:
    Device& owner_;
    float* data_;
    int64_t count_;
};

}  // namespace tandem

#endif  // TANDEM_SCHEDULER_HOST_BUFFER_HPP
