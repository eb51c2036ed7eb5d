// The OpenMP team that factors a CPU panel (recursive_panel.cpp): how it splits
// the panel's rows, and the flags its threads signal each other with inside the
// base case (panel_base_case.cpp), where a full barrier per column would cost
// more than the column's work.
#ifndef TANDEM_CPU_PANEL_TEAM_HPP
#define TANDEM_CPU_PANEL_TEAM_HPP

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "scheduler/spin_wait.hpp"

namespace tandem {

// Contiguous blocks of a panel's rows, one per thread in thread order, cut on
// cache-line boundaries of the panel's columns (given where column 0 starts), so
// that no two threads write the same line of a column when ld is a multiple of
// 16 floats.
class RowPartition {
public:
    RowPartition(int64_t rows, int size, const float* column0)
        : rows_(rows),
          size_(size),
          shift_(static_cast<int64_t>(reinterpret_cast<uintptr_t>(column0) % kLineBytes /
                                      sizeof(float))),
          units_((rows + shift_ + kLineFloats - 1) / kLineFloats),
          base_(units_ / size),
          extra_(units_ % size) {}

    int size() const { return size_; }
    int64_t begin(int id) const {
        if (id >= size_) return rows_;
        const int64_t unit = id * base_ + (id < extra_ ? id : extra_);
        return unit * kLineFloats - shift_ < 0 ? 0 : std::min(rows_, unit * kLineFloats - shift_);
    }
    int64_t end(int id) const { return begin(id + 1); }
    // The thread whose block holds `row` (0 <= row < rows).
    int owner(int64_t row) const {
        const int64_t unit = (row + shift_) / kLineFloats;
        const int64_t long_units = extra_ * (base_ + 1);  // the first `extra` blocks hold base + 1
        return static_cast<int>(unit < long_units ? unit / (base_ + 1)
                                                  : extra_ + (unit - long_units) / base_);
    }

private:
    static constexpr int64_t kLineBytes = 64;
    static constexpr int64_t kLineFloats = kLineBytes / sizeof(float);
    int64_t rows_;
    int size_;
    int64_t shift_;  // rows from the line boundary before row 0 to row 0
    int64_t units_;  // lines of a column, counting the partial ones at both ends
    int64_t base_;
    int64_t extra_;
};

// One thread of the team: it owns rows [begin, end) of the panel.
struct TeamMember {
    const RowPartition* partition;
    int id;
    int64_t begin;
    int64_t end;

    int size() const { return partition->size(); }
};

// Flags one thread publishes (monotonically increasing values) and others wait
// for, spinning (spin_until).
inline void publish(std::atomic<int64_t>& flag, int64_t value) {
    flag.store(value, std::memory_order_release);
}

inline void wait_until_at_least(const std::atomic<int64_t>& flag, int64_t value) {
    spin_until([&] { return flag.load(std::memory_order_acquire) >= value; });
}

// A flag on its own cache line.
struct alignas(64) SyncFlag {
    std::atomic<int64_t> value{-1};
};

}  // namespace tandem

#endif
