// Several devices, streamed matrix: a host thread of its own (a lasting one:
// HostWorker) that copies the final pieces of the factors into the caller's
// array while the main thread issues the steps. On the main thread these
// copies ran only while it waited for a panel; the short last steps left it
// too little of that, and at n = 65536 on two H200s the last 0.23 s of the
// call were the backlog.
//
// A piece (rows of one device's local columns, final once its event has
// passed) goes down in chunks: device -> a slot of its device's ring of pinned
// scratch -> its columns in A. The chunks of every device are placed as they
// land, by a team whose first thread sends the chunks down and the others
// place them, so that a chunk is read while the copy engine's writes are still
// in the host's cache. A ring of a few slots a device keeps it there: with two
// 32 MiB pieces a device in flight, the placed piece had left the cache, and
// the copy ran at 52 GB/s against 130 from the cache (four H200s,
// docs/PERFORMANCE.md). The thread uses only the devices' copy queues, events
// and downloads, which CudaDevice and the host device allow from a second
// thread while no other thread uses the copy queues (MatrixStream adds pieces
// once its feeders are done); its timeline spans are kept apart and handed
// over by finish().
#ifndef TANDEM_SCHEDULER_FACTOR_COLLECTOR_HPP
#define TANDEM_SCHEDULER_FACTOR_COLLECTOR_HPP

#include <atomic>
#include <chrono>
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
    // Starts the thread. ctx's devices, plan and t0 are read; nothing else of
    // it. Chunks hold at most chunk_floats floats, or one column (tests make
    // them small, so that a few pieces go round the rings many times).
    FactorCollector(const StepContext& ctx, float* a, int64_t lda,
                    int64_t chunk_floats = kChunkFloats);
    // Stops the thread; pieces not yet copied are dropped (the call failed).
    // Chunks may still be on their way into the slots: the caller waits for
    // the devices' queues before the slots' memory is used again (LuSteps).
    ~FactorCollector() { cancel(); }
    FactorCollector(const FactorCollector&) = delete;
    FactorCollector& operator=(const FactorCollector&) = delete;

    // Queue a piece (at most kPieceFloats floats) to be copied out; each
    // device's pieces are sent down in the order they came.
    void add(const FactorPiece& piece);
    // Returns once every piece added has been copied out and the thread has
    // stopped, with its spans appended; rethrows the thread's error.
    void finish(std::vector<DeviceSpan>& spans, std::vector<TimelineSpan>& host_spans);
    // The call failed: the thread stops, copying nothing more into A.
    void cancel();
    // Whether any part of the caller's array has been written.
    bool wrote_output() const { return wrote_.load(); }

    // The most a piece holds: MatrixStream cuts the rows a step makes final
    // into pieces of this size, each a span of the timeline.
    static constexpr int64_t kPieceFloats = int64_t(8) << 20;  // 32 MiB
    // A chunk, and the chunks a device has on their way: a ring of kAhead
    // slots of kChunkFloats (or of one column, if longer). At n = 65536 on
    // four H200s, calls with chunks of 2-8 MiB, 12-16 MiB a device, took
    // 75-160 ms less than calls, in the same process, that placed two 32 MiB
    // pieces a device one after the other; 4 MiB in four slots took 1.23 s
    // against their 1.34 (docs/PERFORMANCE.md).
    static constexpr int64_t kChunkFloats = int64_t(1) << 20;  // 4 MiB
    static constexpr int kAhead = 4;
    // The most threads of the team (one sends the chunks down, the others
    // place them), twice a host copy's: late in the call the pieces come
    // faster than 16 threads place them while the copy engines write the next
    // ones into host memory. With each thread placing whole pieces, on four
    // H100s behind 64 threads the last piece was placed 63-71 ms after the
    // last panel with 32 threads, 88-98 with 16; on four H200s a team of 48
    // left 30-76 ms against 25-28 with 32 (docs/PERFORMANCE.md).
    static constexpr int kMostScatterThreads = 2 * kMostHostCopyThreads;

private:
    // A piece on its way: its columns go down in chunks, in order.
    struct Active {
        FactorPiece piece;
        int64_t arrival;        // order of add()
        int64_t next_col = 0;   // its first column not yet sent down
        int chunks_out = 0;     // sent down and not yet placed
        bool final = false;     // its ready event has passed
        Event begin = -1;       // on the copy queue, before its first chunk
        Event end = -1;         // after its last chunk
        double start = -1.0;    // host seconds: its first chunk landed
    };
    // Rows [r0, r0+rows) x local columns [c0, c0+cols) of `device`, sent
    // down into the slot `from` (column-major, leading dimension rows).
    struct Chunk {
        Active* piece = nullptr;
        int device = 0;
        int64_t r0 = 0, rows = 0, c0 = 0, cols = 0;
        const float* from = nullptr;
        Event landed = -1;
    };
    // A landed chunk, for the placers: each places its share and counts it.
    struct alignas(64) Landed {  // a cache line each: the placers count on it
        Chunk chunk;
        std::atomic<int> placed{0};
    };
    // What the team's threads share within one parallel region.
    struct Team;

    void run();
    void collect();  // run()'s loop
    // Moves every queued piece to its device's list; waits for one first
    // when `block`. False when the call is cancelled.
    bool take_queued(bool block);
    // One parallel region: sends down, and places, the chunks of every piece
    // that is final, until none is left or none is final.
    void place_final_pieces();
    void dispatch(Team& team);                 // the team's first thread
    void place_landed(Team& team, int placer);  // the others
    void retire_placed(Team& team);
    int send_chunks(int d);                   // how many it sent
    int publish_landed(Team& team, int d);    // how many it published
    bool final_piece_waiting();  // of any device, not yet sent down
    bool is_final(int d, Active& piece);  // device d's piece: its ready event has passed
    double host_seconds() const;          // since t0_, for the timeline
    void place_share(const Chunk& c, int64_t begin, int64_t end) const;

    const std::vector<Device*>& devices_;
    const BlockingPlan& plan_;
    std::chrono::steady_clock::time_point t0_;
    float* a_;
    int64_t lda_;
    int64_t chunk_floats_;
    int threads_;  // OpenMP threads of the team

    std::mutex mutex_;
    std::condition_variable added_;
    std::deque<FactorPiece> queue_;  // guarded by mutex_
    bool closed_ = false;            // guarded by mutex_: no more pieces will come
    bool cancelled_ = false;         // guarded by mutex_: drop the rest
    std::atomic<bool> wrote_{false};
    std::exception_ptr error_;  // the thread's, read after join

    // The thread's own state, [device] where indexed so.
    int64_t arrivals_ = 0;
    std::vector<std::deque<Active>> pieces_;  // in order; references stay valid
    std::vector<size_t> sending_;             // pieces_[d][sending_[d]] sends next
    std::vector<std::vector<std::unique_ptr<HostBuffer>>> slots_;  // kAhead each
    std::vector<int> slots_used_, next_slot_;
    std::vector<std::deque<Chunk>> in_flight_;  // sent down, not yet published, in order
    std::vector<Landed> landed_;                // a ring, in the order chunks were published
    std::vector<std::vector<int64_t>> global_column_;  // [device][local column]
    std::vector<DeviceSpan> spans_;
    std::vector<TimelineSpan> host_spans_;

    HostWorker worker_;  // last: started once everything above exists
};

}  // namespace tandem

#endif  // TANDEM_SCHEDULER_FACTOR_COLLECTOR_HPP
