#include "scheduler/factor_collector.hpp"

#include <omp.h>

#include <algorithm>
#include <thread>

#include "scheduler/spin_wait.hpp"
#include "scheduler/streaming_copy.hpp"

namespace tandem {
namespace {

// A wait of about kPause that leaves the core to any thread that needs it
// (a placer, where the team outnumbers the free cores); a sleep would take
// tens of microseconds more.
constexpr std::chrono::microseconds kPause{5};

void pause_briefly() {
    const auto until = std::chrono::steady_clock::now() + kPause;
    while (std::chrono::steady_clock::now() < until) std::this_thread::yield();
}

}  // namespace

// Landed chunks are published to the placers through `published` (a count
// of landed_'s ring); `over` says that no more will come in this region.
struct FactorCollector::Team {
    std::atomic<int64_t> published{0};
    std::atomic<bool> over{false};
    int placers = 0;      // the threads other than the first; 0: the first places too
    int64_t retired = 0;  // published chunks placed and their slots freed (the first thread's)
    std::exception_ptr error;
};

FactorCollector::FactorCollector(const StepContext& ctx, float* a, int64_t lda, int64_t chunk_floats)
    : devices_(ctx.devices),
      plan_(ctx.plan),
      t0_(ctx.t0),
      a_(a),
      lda_(lda),
      chunk_floats_(std::max<int64_t>(1, chunk_floats)),
      // Half the host's threads, at most kMostScatterThreads: the scatter
      // reaches its rate with 16 of the two-H200 machine's 32 (the probe), and
      // the main thread keeps the rest.
      threads_(std::clamp(omp_get_max_threads() / 2, 1, kMostScatterThreads)),
      pieces_(ctx.devices.size()),
      sending_(ctx.devices.size(), 0),
      slots_(ctx.devices.size()),
      slots_used_(ctx.devices.size(), 0),
      next_slot_(ctx.devices.size(), 0),
      in_flight_(ctx.devices.size()),
      // Chunks landed and not yet placed hold a slot each: never more than this.
      landed_(ctx.devices.size() * kAhead + 1),
      global_column_(ctx.devices.size()) {
    // The slots are allocated here, on the caller's thread: a device's pinned
    // memory cache is not shared between threads.
    for (size_t d = 0; d < devices_.size(); ++d) {
        const int device = static_cast<int>(d);
        const int64_t local_cols = plan_.local_begin(device, plan_.cols());
        std::vector<int64_t>& global = global_column_[d];
        global.resize(static_cast<size_t>(local_cols));
        for (int64_t b : plan_.blocks_of(device)) {
            const int64_t local = plan_.local_begin(device, plan_.block_begin(b));
            for (int64_t c = 0; c < plan_.block_width(b); ++c)
                global[static_cast<size_t>(local + c)] = plan_.block_begin(b) + c;
        }
        const int64_t slot = std::max<int64_t>(
            1, std::min(std::max(chunk_floats_, plan_.rows()), plan_.rows() * local_cols));
        for (int i = 0; i < kAhead; ++i)
            slots_[d].push_back(std::make_unique<HostBuffer>(*devices_[d], slot));
    }
    worker_ = HostWorker([this] { run(); });
}

void FactorCollector::cancel() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        cancelled_ = closed_ = true;
    }
    added_.notify_all();
    if (worker_.joinable()) worker_.join();
}

void FactorCollector::add(const FactorPiece& piece) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        queue_.push_back(piece);
    }
    added_.notify_one();
}

void FactorCollector::finish(std::vector<DeviceSpan>& spans, std::vector<TimelineSpan>& host_spans) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        closed_ = true;
    }
    added_.notify_all();
    if (worker_.joinable()) worker_.join();
    spans.insert(spans.end(), spans_.begin(), spans_.end());
    host_spans.insert(host_spans.end(), host_spans_.begin(), host_spans_.end());
    if (error_) std::rethrow_exception(error_);
}

void FactorCollector::run() {
    try {
        omp_set_num_threads(threads_);
        collect();
    } catch (...) {
        error_ = std::current_exception();
        // Later pieces would land after a hole: drop them (the caller learns of
        // the error, and that A is partially written, from finish()).
        std::lock_guard<std::mutex> lock(mutex_);
        queue_.clear();
    }
}

void FactorCollector::collect() {
    for (;;) {
        const bool none_taken = std::all_of(pieces_.begin(), pieces_.end(),
                                            [](const std::deque<Active>& list) { return list.empty(); });
        if (!take_queued(none_taken)) return;  // cancelled
        // The oldest piece not yet sent down; none: closed, and all placed.
        const Active* oldest = nullptr;
        for (size_t d = 0; d < pieces_.size(); ++d)
            if (sending_[d] < pieces_[d].size()) {
                const Active& next = pieces_[d][sending_[d]];
                if (oldest == nullptr || next.arrival < oldest->arrival) oldest = &next;
            }
        if (oldest == nullptr) return;
        // Wait for it without the team: early in the call the steps come
        // milliseconds apart, and a waiting team would spin all that time.
        devices_[oldest->piece.device]->synchronize(oldest->piece.ready);
        place_final_pieces();
    }
}

bool FactorCollector::take_queued(bool block) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (block) added_.wait(lock, [&] { return !queue_.empty() || closed_; });
    if (cancelled_) return false;
    for (const FactorPiece& p : queue_) {
        Active next;
        next.piece = p;
        next.arrival = arrivals_++;
        pieces_[static_cast<size_t>(p.device)].push_back(next);
    }
    queue_.clear();
    return true;
}

void FactorCollector::place_final_pieces() {
    Team team;
#pragma omp parallel num_threads(threads_)
    {
        // The team may be smaller than asked for: count it in the region.
#pragma omp single
        team.placers = omp_get_num_threads() - 1;  // the barrier after it publishes it
        if (omp_get_thread_num() == 0)
            dispatch(team);
        else
            place_landed(team, omp_get_thread_num() - 1);
    }
    if (team.error) std::rethrow_exception(team.error);
}

void FactorCollector::dispatch(Team& team) {
    try {
        for (unsigned round = 0;; ++round) {
            const int64_t retired_before = team.retired;
            if (team.placers == 0)  // a team of one: this thread places each landed chunk
                for (int64_t i = team.retired; i < team.published.load(std::memory_order_relaxed); ++i) {
                    Landed& l = landed_[static_cast<size_t>(i % static_cast<int64_t>(landed_.size()))];
                    if (l.placed.load(std::memory_order_relaxed) == 0) {
                        place_share(l.chunk, 0, l.chunk.rows * l.chunk.cols);
                        l.placed.store(1, std::memory_order_relaxed);
                    }
                }
            retire_placed(team);
            // Pieces added meanwhile; not every round, the lock is the main thread's too.
            if (round % 16 == 0 && !take_queued(false)) break;  // cancelled
            int moved = 0;
            for (int d = 0; d < static_cast<int>(devices_.size()); ++d)
                moved += send_chunks(d) + publish_landed(team, d);
            const bool all_placed = team.retired == team.published.load(std::memory_order_relaxed) &&
                                    std::all_of(in_flight_.begin(), in_flight_.end(),
                                                [](const std::deque<Chunk>& q) { return q.empty(); });
            if (all_placed && !final_piece_waiting()) break;
            // Nothing moved: wait a little before asking the devices again.
            // Each question takes the device's locks, which the main thread
            // needs to issue the steps, and a chunk takes tens of microseconds
            // to land or be placed.
            if (moved == 0 && team.retired == retired_before) pause_briefly();
        }
    } catch (...) {
        team.error = std::current_exception();
    }
    team.over.store(true, std::memory_order_release);
}

void FactorCollector::retire_placed(Team& team) {
    const int64_t ring = static_cast<int64_t>(landed_.size());
    const int everyone = std::max(team.placers, 1);
    const int64_t published = team.published.load(std::memory_order_relaxed);
    while (team.retired < published) {
        const Landed& l = landed_[static_cast<size_t>(team.retired % ring)];
        if (l.placed.load(std::memory_order_acquire) != everyone) return;
        const size_t d = static_cast<size_t>(l.chunk.device);
        --slots_used_[d];  // slots are taken and freed in each device's order
        Active& piece = *l.chunk.piece;
        if (--piece.chunks_out == 0 && piece.next_col == piece.piece.cols) {
            // Its last chunk: a device's pieces are placed in order, so it is the first.
            spans_.push_back({piece.piece.device, Queue::copy, "gather", piece.piece.step, piece.begin, piece.end});
            host_spans_.push_back({"gather", "gather", piece.piece.step, piece.start, host_seconds()});
            pieces_[d].pop_front();
            --sending_[d];
        }
        ++team.retired;
    }
}

int FactorCollector::send_chunks(int d) {
    const size_t i = static_cast<size_t>(d);
    Device& dev = *devices_[i];
    int sent = 0;
    while (slots_used_[i] < kAhead && sending_[i] < pieces_[i].size()) {
        Active& piece = pieces_[i][sending_[i]];
        if (!is_final(d, piece)) break;
        const FactorPiece& p = piece.piece;
        const int64_t cols = std::min(std::max<int64_t>(1, chunk_floats_ / std::max<int64_t>(p.rows, 1)),
                                      p.cols - piece.next_col);
        if (piece.next_col == 0) {
            dev.wait(Queue::copy, p.ready);
            piece.begin = dev.record(Queue::copy);
        }
        float* slot = slots_[i][static_cast<size_t>(next_slot_[i])]->data();
        next_slot_[i] = (next_slot_[i] + 1) % kAhead;
        dev.download(Queue::copy, slot, p.rows, p.r0, p.c0 + piece.next_col, p.rows, cols);
        const Event landed = dev.record(Queue::copy);
        in_flight_[i].push_back({&piece, d, p.r0, p.rows, p.c0 + piece.next_col, cols, slot, landed});
        ++slots_used_[i];
        ++sent;
        ++piece.chunks_out;
        piece.next_col += cols;
        if (piece.next_col == p.cols) {
            piece.end = landed;
            ++sending_[i];
        }
    }
    return sent;
}

int FactorCollector::publish_landed(Team& team, int d) {
    const size_t i = static_cast<size_t>(d);
    const int64_t ring = static_cast<int64_t>(landed_.size());
    int landed = 0;
    while (!in_flight_[i].empty() && devices_[i]->query(in_flight_[i].front().landed)) {
        const int64_t at = team.published.load(std::memory_order_relaxed);
        Landed& l = landed_[static_cast<size_t>(at % ring)];
        l.chunk = in_flight_[i].front();
        l.placed.store(0, std::memory_order_relaxed);
        in_flight_[i].pop_front();
        if (l.chunk.piece->start < 0) l.chunk.piece->start = host_seconds();
        if (!wrote_.load(std::memory_order_relaxed)) wrote_ = true;
        team.published.store(at + 1, std::memory_order_release);
        ++landed;
    }
    return landed;
}

bool FactorCollector::final_piece_waiting() {
    for (size_t d = 0; d < pieces_.size(); ++d)
        if (sending_[d] < pieces_[d].size() && is_final(static_cast<int>(d), pieces_[d][sending_[d]]))
            return true;
    return false;
}

bool FactorCollector::is_final(int d, Active& piece) {
    // Asked of the device until it says so, then remembered.
    if (!piece.final) piece.final = devices_[static_cast<size_t>(d)]->query(piece.piece.ready);
    return piece.final;
}

double FactorCollector::host_seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
}

void FactorCollector::place_landed(Team& team, int placer) {
    const int64_t ring = static_cast<int64_t>(landed_.size());
    for (int64_t i = 0;; ++i) {
        // Chunk i, or the end of the region: chunks land every few microseconds.
        spin_until([&] {
            return team.published.load(std::memory_order_acquire) > i ||
                   team.over.load(std::memory_order_acquire);
        });
        // `over` comes after the last chunk is published.
        if (team.published.load(std::memory_order_acquire) <= i) return;
        Landed& l = landed_[static_cast<size_t>(i % ring)];
        // This placer's share, cut at 64-byte multiples of the chunk.
        const int64_t total = l.chunk.rows * l.chunk.cols;
        const int64_t begin = (total * placer / team.placers) & ~int64_t(15);
        const int64_t end = placer + 1 == team.placers ? total : (total * (placer + 1) / team.placers) & ~int64_t(15);
        place_share(l.chunk, begin, end);
        l.placed.fetch_add(1, std::memory_order_release);
    }
}

void FactorCollector::place_share(const Chunk& c, int64_t begin, int64_t end) const {
    // The chunk's floats [begin, end), column by column into A.
    const std::vector<int64_t>& global = global_column_[static_cast<size_t>(c.device)];
    for (int64_t f = begin; f < end;) {
        const int64_t col = f / c.rows, row = f - col * c.rows;
        const int64_t count = std::min(c.rows - row, end - f);
        copy_floats_streaming(a_ + c.r0 + row + global[static_cast<size_t>(c.c0 + col)] * lda_,
                              c.from + f, count);
        f += count;
    }
}

}  // namespace tandem
