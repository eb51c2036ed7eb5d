// Pinned host memory through which the transposing copies move data from and
// to PAGEABLE host memory (the caller's matrix): the driver's own pageable path
// moves only 7-10 GB/s on the H100 and H200 hosts, against about 54 GB/s from
// pinned memory. A copy goes in chunks through a ring of slots: the host fills
// (or drains) one slot while the copy engine fills (or drains) others. A
// gather with two slots left the copy engine waiting for the host: a 16 MiB
// row piece of the factors came back at 20 GB/s, 25 with the ring (H100,
// tandem-host-transfers; the copy engine alone moves 54, the host's side 77).
// Allocated on first use, kept until release().
#ifndef TANDEM_GPU_BOUNCE_BUFFERS_HPP
#define TANDEM_GPU_BOUNCE_BUFFERS_HPP

#include <cuda_runtime.h>

#include <cstdint>

namespace tandem::gpu {

class BounceBuffers {
public:
    static constexpr int64_t kCapacity = int64_t(8) << 20;  // floats in all (32 MiB)
    static constexpr int kMaxSlots = 8;
    // The largest slot: two slots at least, so that the host and the copy
    // engine can work at the same time.
    static constexpr int64_t kMaxSlotFloats = kCapacity / 2;
    // The usual slot: every chunk of up to 4 MiB, so that copies of blocks of
    // different shapes one after another keep one cut and never wait.
    static constexpr int64_t kSlotFloats = kCapacity / kMaxSlots;

    BounceBuffers() = default;
    ~BounceBuffers() { release(); }
    BounceBuffers(const BounceBuffers&) = delete;
    BounceBuffers& operator=(const BounceBuffers&) = delete;

    // Allocates the memory and the slots' events on the current device if not done yet.
    void ensure();
    void release() noexcept;

    // A copy in chunks of at most `chunk_floats` (at most kMaxSlotFloats)
    // begins. The ring is cut into kMaxSlots slots of kSlotFloats, or for a
    // chunk larger than that (one column of more than kSlotFloats rows) into
    // slots of the chunk's size. A copy cut differently from the one before it
    // first waits until the copy engine is done with the whole ring: an upload
    // returns while its last slots are still being read, and a slot of the new
    // cut may overlap several of the old.
    void begin(int64_t chunk_floats);
    int slots() const { return slots_; }
    // Chunk i of the copy: its slot, and the event recorded on the stream after
    // the copy engine's last use of that slot (the host synchronizes on it
    // before touching the slot again).
    float* slot(int64_t i) const { return data_ + (i % slots_) * slot_floats_; }
    cudaEvent_t released(int64_t i) const { return released_[i % slots_]; }

private:
    float* data_ = nullptr;
    cudaEvent_t released_[kMaxSlots] = {};
    int64_t slot_floats_ = 0;  // the current cut (0: none yet)
    int slots_ = 1;
};

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_BOUNCE_BUFFERS_HPP
