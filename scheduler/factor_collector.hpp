// Several devices, streamed matrix: a host thread of its own (a lasting one:
// HostWorker) that copies the final pieces of the factors into the caller's
// array while the main thread issues the steps. On the main thread these
// copies ran only while it waited for a panel; the short last steps left it
// too little of that, and at n = 65536 on two H200s the last 0.23 s of the
// call were the backlog.
//
// A piece (rows of one device's local columns, final once its event has
// passed) goes device -> pinned scratch (kSlots per device, so that the copy
// engine fetches one piece while the thread places the last) -> its columns in
// A. The thread uses only the devices' copy queues, events and downloads, which
// CudaDevice and the host device allow from a second thread while no other
// thread uses the copy queues (MatrixStream adds pieces once its feeders are
// done); its timeline spans are kept apart and handed over by finish().
#ifndef TANDEM_SCHEDULER_FACTOR_COLLECTOR_HPP
#define TANDEM_SCHEDULER_FACTOR_COLLECTOR_HPP

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include "scheduler/host_buffer.hpp"
#include "scheduler/host_workers.hpp"
#include "scheduler/step_context.hpp"
#include "scheduler/streaming_copy.hpp"

namespace tandem {

// Rows [r0, r0+rows) x local columns [c0, c0+cols) of device `device`, final
// once `ready` (an event of that device) has passed; `step` for the timeline.
struct FactorPiece {
    int device;
    Event ready;
    int64_t r0, rows, c0, cols;
    int step;
};

class FactorCollector {
public:
    // Starts the thread. ctx's devices, plan and t0 are read; nothing else of it.
    FactorCollector(const StepContext& ctx, float* a, int64_t lda);
    // Stops the thread; pieces not yet copied are dropped (the call failed).
    ~FactorCollector() { cancel(); }
    FactorCollector(const FactorCollector&) = delete;
    FactorCollector& operator=(const FactorCollector&) = delete;

    // Queue a piece (at most kPieceFloats floats) to be copied out in order.
    void add(const FactorPiece& piece);
    // Returns once every piece added has been copied out and the thread has
    // stopped, with its spans appended; rethrows the thread's error.
    void finish(std::vector<DeviceSpan>& spans, std::vector<TimelineSpan>& host_spans);
    // The call failed: the thread stops, copying nothing more into A.
    void cancel();
    // Whether any part of the caller's array has been written.
    bool wrote_output() const { return wrote_.load(); }

    // The most a piece holds. Each piece costs the thread a wait for its
    // download and a parallel region for its scatter; fewer, larger pieces
    // kept up better with the last steps, whose rows come fastest: at
    // n = 65536 on two H200s (tandem-bench lu --gpus 2 --baselines 0,
    // alternating processes, 2026-11-27) the backlog after the last panel
    // was 16-21 ms with 32 MiB, 42-45 with 64, 48-58 with 16 and 110-197
    // with 2-4 MiB pieces in more slots (docs/PERFORMANCE.md).
    static constexpr int64_t kPieceFloats = int64_t(8) << 20;  // 32 MiB
    // The most threads of the scatter, twice a host copy's: late in the call
    // the pieces come faster than 16 threads place them while the copy
    // engines write the next ones into host memory. On four H100s behind 64
    // threads, the last piece was placed 63-71 ms after the last panel with
    // 32 threads, 88-98 with 16; on four H200s a team of 48 left 30-76 ms
    // against 25-28 with 32 (docs/PERFORMANCE.md).
    static constexpr int kMostScatterThreads = 2 * kMostHostCopyThreads;

private:
    struct Fetch {  // a piece on its way through scratch slot `slot` of its device
        FactorPiece piece;
        int slot;
        Event copied;  // after its download
    };
    static constexpr int kSlots = 2;

    void run();
    void collect();  // run()'s loop
    // The next piece, if any: waits for one when `block` (or until closed).
    bool next_piece(FactorPiece& piece, bool block);
    int free_slot(int device) const;  // -1 if none
    void fetch(const FactorPiece& piece, int slot);
    void place_oldest();
    void scatter(int d, const float* from, int64_t r0, int64_t rows, int64_t c0, int64_t cols);

    const std::vector<Device*>& devices_;
    const BlockingPlan& plan_;
    std::chrono::steady_clock::time_point t0_;
    float* a_;
    int64_t lda_;
    int threads_;  // OpenMP threads of the scatter (the team of each piece)

    std::mutex mutex_;
    std::condition_variable added_;
    std::deque<FactorPiece> queue_;  // guarded by mutex_
    bool closed_ = false;            // guarded by mutex_: no more pieces will come
    bool cancelled_ = false;         // guarded by mutex_: drop the rest
    std::atomic<bool> wrote_{false};
    std::exception_ptr error_;  // the thread's, read after join

    // The thread's own state.
    std::vector<std::vector<std::unique_ptr<HostBuffer>>> scratch_;  // [device][slot]
    std::vector<std::vector<bool>> slot_busy_;
    std::deque<Fetch> fetched_;
    std::vector<int64_t> targets_;  // scatter(): the global column of each piece column
    std::vector<DeviceSpan> spans_;
    std::vector<TimelineSpan> host_spans_;

    HostWorker worker_;  // last: started once everything above exists
};

}  // namespace tandem

#endif  // TANDEM_SCHEDULER_FACTOR_COLLECTOR_HPP
