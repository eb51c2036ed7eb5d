// Moving the matrix between the caller's array and the devices, overlapped with
// the factorization where the devices allow it.
//
// Eager (Options::stream_matrix off): every block column is uploaded before the
// first step and the factors are gathered after the last, as in the seed design.
// With several devices every block is uploaded at the start, by one host thread
// per device (a feeder). Eager, the first step runs on each block as it arrives
// (LuSteps::trailing_columns: one range a block column, each waiting for its
// block) and the second waits for every block.
//
// Streamed: the matrix is a few GB at the sizes that matter, and copying it
// each way takes as long as a large part of the factorization (pageable host
// memory, about 25 GB/s on the H200 machine). So:
//  * Upload (one device, every panel on it: a catch-up needs all of L on the
//    device, and the host thread that would send the blocks factors the CPU's
//    panels): only the block columns the next steps need are uploaded up
//    front; the rest follow while the device computes. A block arriving after
//    j columns have been factored is brought up to date in one left-looking
//    step (Device::catch_up: its row interchanges, a TRSM with L(0:j, 0:j) and
//    one large product), which costs the flops the skipped right-looking updates
//    would have, in larger and faster products. Until then the steps' swaps and
//    updates leave it out. One device with CPU panels: every block goes up
//    before the first step.
//    Several devices: the feeders send every block in turn, and each block
//    that has arrived goes live between steps or while the host waits for
//    the next panel, caught up in the same way. The first j columns of L are
//    spread over the devices, so while blocks are still arriving every device
//    keeps a copy of them, the left factors
//    (Device::hold_left_factors): each step's panel is added from the
//    device's panel workspace, and the step's row interchanges applied to the
//    columns already there. Their room (left_capacity) is bounded: when the
//    next step would outgrow it, every block goes live at once. With neither
//    a deferred upload nor left factors the devices would wait for the whole
//    matrix after the first step: on four H200s behind one host at n = 32768,
//    for 120 ms of a 404 ms call. When a block goes live depends on the
//    copies' speed, so the factors' last bits may differ from call to call.
//  * Gather: rows [j_k, j_k + w) of every column on the device are final once
//    step k has formed U12 (later steps touch only rows below), and so are rows
//    [0, j) of a block once it has caught up with j columns. Each such piece is
//    copied into the caller's array as soon as it is final and the host is
//    otherwise idle, so the final gather is only the last step's rows. With
//    several devices a piece holds a device's own columns: a host thread of
//    its own (FactorCollector) takes it through pinned memory and puts each
//    column in its place, while this thread issues the steps.
// Order: a block is always read from the caller's array before any piece is
// written to its columns (pieces cover uploaded blocks only, on the same queue).
#ifndef TANDEM_SCHEDULER_MATRIX_STREAM_HPP
#define TANDEM_SCHEDULER_MATRIX_STREAM_HPP

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include "scheduler/factor_collector.hpp"
#include "scheduler/host_workers.hpp"
#include "scheduler/step_context.hpp"

namespace tandem {

class MatrixStream {
public:
    // ipiv: the factorization's global pivots, read by catch-ups (it must grow
    // as the steps run, and not move). streamed: the one-device mode above.
    MatrixStream(StepContext& ctx, float* a, int64_t lda, const std::vector<int>& ipiv,
                 bool streamed);

    // Waits for the upload threads, if any are left (after a failure).
    ~MatrixStream();
    MatrixStream(const MatrixStream&) = delete;
    MatrixStream& operator=(const MatrixStream&) = delete;

    // Uploads every block, or the first when uploads are deferred. With
    // several devices (eager) the uploads run on host threads of their own
    // after this returns: see arriving().
    void start();
    // Several devices, eager: blocks are still being uploaded. Device work on
    // block b must then wait for arrival(b) on its queue; join_feeders() ends this.
    bool arriving() const { return !feeding_ && !arrivals_.empty(); }
    // The event after block b's upload on its device, once issued (waits for it).
    Event arrival(int64_t b);
    // Waits for the upload threads; every queue then waits for every block.
    void join_feeders();
    // Blocks [0, live_blocks()) are on their devices; columns from
    // live_end_column() on are not (n when every block is).
    int64_t live_blocks() const { return live_; }
    int64_t live_end_column() const;
    // Uploads blocks until `count` are live, each brought up to date with the
    // first j factored columns (their row interchanges in ipiv[0 .. j)).
    // Several devices, streamed: waits for blocks until `count` are live, or
    // every block when the left factors could not grow past the panel at j.
    void ensure_live(int64_t count, int64_t j, int step);
    // Several devices, streamed: every further block that has arrived goes
    // live, caught up to j (or, as ensure_live, every block).
    void take_arrived(int64_t j, int step);
    // Several devices, streamed: some blocks have not gone live yet.
    bool blocks_to_come() const { return feeding_ && live_ < ctx_.plan.blocks(); }
    // Only while blocks_to_come(): waits until the next block to go live has
    // arrived or a feeder failed (true: take_arrived then takes it or
    // throws), or for at most `at_most` (false).
    bool wait_for_next_block(std::chrono::microseconds at_most);
    // Several devices, streamed, while blocks are not all live: after step
    // k's interchanges of the columns left of its panel, every device applies
    // them to its left factors and keeps panel k (in its panel workspace) in
    // them. Issued on the compute queues.
    void keep_left_factors(int64_t k);
    // Rows [r0, r0 + rows) of every device's live columns are final once the
    // work issued so far on its compute queue is done: gather them when the
    // host is free.
    void rows_final(int64_t r0, int64_t rows, int step);
    // One unit of host work: the next block is uploaded (caught up to j), or
    // else a final piece (at most kGatherFloats) whose event has completed is
    // copied out. Returns false when there was nothing to do.
    bool advance(int64_t j, int step);
    // Only the upload part of advance().
    bool upload_next(int64_t j, int step);
    // After the last step (kmax columns factored): the remaining blocks, the
    // rows below kmax and every pending piece; returns with the devices idle
    // and the factors in the caller's array.
    void finish(int64_t kmax);
    // After a failure: nothing more is copied into the caller's array.
    void abandon() {
        if (collector_) collector_->cancel();
    }
    // Whether any part of the caller's array has been written.
    bool wrote_output() const { return wrote_ || (collector_ && collector_->wrote_output()); }

private:
    using Piece = FactorPiece;
    // One device's gathers (on the main thread): under 1 ms of copying each.
    static constexpr int64_t kGatherFloats = int64_t(4) << 20;  // 16 MiB
    // Several devices: device d's blocks in order (run on a lasting thread;
    // with wait_for_first_block, once the first panel's block is up unless
    // it is d's own).
    void feed(int d, int threads, bool wait_for_first_block);
    // Several devices, streamed: block b live, waiting for it and caught up to j.
    void take_live(int64_t b, int64_t j, int step);
    // Block b (live on its owner) brought up to date with the first j
    // columns, its rows above j then final (a piece to gather).
    void catch_up_block(int64_t b, int64_t j, int step);
    bool arrived(int64_t b);  // its upload has been issued (or a feeder failed)
    bool left_factors_grow_past(int64_t j) const;
    void upload_block(int64_t b, int64_t j, int step);  // issue_upload, timed on the host
    void issue_upload(int64_t b, int64_t j, int step);
    void add_piece(const Piece& piece);
    // A piece in parts that each fit one gather (the collector's scratch, or
    // kGatherFloats on this thread).
    std::vector<Piece> split_piece(const Piece& piece) const;
    // One part to whoever copies it out: held until the feeders are done,
    // the collector, or pending_.
    void queue_part(const Piece& part);
    // One device: the front pending piece straight into A (blocks the host).
    void copy_out_front();

    StepContext& ctx_;
    float* a_;
    int64_t lda_;
    const std::vector<int>& ipiv_;
    bool defer_uploads_;  // streamed, one device
    bool stream_gathers_;  // streamed
    // Several devices, streamed: blocks go live as they arrive; the left
    // factors hold up to left_capacity_ columns, left_kept_ so far.
    bool feeding_ = false;
    int64_t left_capacity_ = 0;
    int64_t left_kept_ = 0;
    int64_t live_ = 0;
    std::deque<Piece> pending_;  // one device: final, not yet copied out
    // Several devices, streamed: pieces final while the feeders still upload.
    // A gather and an upload on one device's copy queue, issued from two
    // threads, would interleave their halves through its one staging buffer:
    // the collector takes them once the feeders are done.
    std::vector<Piece> held_;
    // The upload threads (several devices) and what they publish.
    std::vector<HostWorker> feeders_;
    std::mutex feed_mutex_;
    std::condition_variable fed_;
    std::vector<Event> arrivals_;              // per block, -1 until issued (feed_mutex_)
    std::vector<std::exception_ptr> feed_errors_;  // per device (feed_mutex_)
    bool feed_failed_ = false;                     // (feed_mutex_)
    double feed_start_ = 0.0, feed_end_ = 0.0;     // host seconds, for the timeline (feed_mutex_)
    std::vector<std::vector<DeviceSpan>> feed_spans_;  // per device, that thread's own
    std::unique_ptr<FactorCollector> collector_;  // several devices, streamed
    bool wrote_ = false;
};

}  // namespace tandem

#endif  // TANDEM_SCHEDULER_MATRIX_STREAM_HPP
