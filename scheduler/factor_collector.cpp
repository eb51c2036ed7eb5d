#include "scheduler/factor_collector.hpp"

#include <omp.h>

#include <algorithm>

#include "scheduler/streaming_copy.hpp"

namespace tandem {

FactorCollector::FactorCollector(const StepContext& ctx, float* a, int64_t lda)
    : devices_(ctx.devices),
      plan_(ctx.plan),
      t0_(ctx.t0),
      a_(a),
      lda_(lda),
      // Half the host's threads, at most kMostScatterThreads: the scatter
      // reaches its rate with 16 of the two-H200 machine's 32 (the probe), and
      // the main thread keeps the rest.
      threads_(std::clamp(omp_get_max_threads() / 2, 1, kMostScatterThreads)),
      scratch_(ctx.devices.size()),
      slot_busy_(ctx.devices.size(), std::vector<bool>(kSlots, false)) {
    // The scratch is allocated here, on the caller's thread: a device's pinned
    // memory cache is not shared between threads. Every piece fits.
    for (size_t d = 0; d < devices_.size(); ++d) {
        const int64_t local_cols = plan_.local_begin(static_cast<int>(d), plan_.cols());
        const int64_t largest = std::max<int64_t>(1, std::min(kPieceFloats, plan_.rows() * local_cols));
        for (int i = 0; i < kSlots; ++i)
            scratch_[d].push_back(std::make_unique<HostBuffer>(*devices_[d], largest));
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
        FactorPiece piece;
        // Wait for a piece only when nothing fetched is waiting to be placed.
        if (!next_piece(piece, fetched_.empty())) {
            {
                std::lock_guard<std::mutex> lock(mutex_);
                if (cancelled_) return;  // the call failed: write nothing more
            }
            if (fetched_.empty()) return;  // closed, and all placed
            place_oldest();
            continue;
        }
        int slot;
        while ((slot = free_slot(piece.device)) < 0) place_oldest();
        // Place what has arrived while this piece's rows are not final yet.
        while (!fetched_.empty() && !devices_[piece.device]->query(piece.ready)) place_oldest();
        fetch(piece, slot);
    }
}

bool FactorCollector::next_piece(FactorPiece& piece, bool block) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (block) added_.wait(lock, [&] { return !queue_.empty() || closed_; });
    if (cancelled_ || queue_.empty()) return false;
    piece = queue_.front();
    queue_.pop_front();
    return true;
}

int FactorCollector::free_slot(int device) const {
    const std::vector<bool>& busy = slot_busy_[device];
    const auto free = std::find(busy.begin(), busy.end(), false);
    return free == busy.end() ? -1 : static_cast<int>(free - busy.begin());
}

void FactorCollector::fetch(const FactorPiece& p, int slot) {
    Device& dev = *devices_[p.device];
    float* buffer = scratch_[p.device][slot]->data();
    dev.wait(Queue::copy, p.ready);
    const Event begin = dev.record(Queue::copy);
    dev.download(Queue::copy, buffer, p.rows, p.r0, p.c0, p.rows, p.cols);
    const Event copied = dev.record(Queue::copy);
    spans_.push_back({p.device, Queue::copy, "gather", p.step, begin, copied});
    slot_busy_[p.device][slot] = true;
    fetched_.push_back({p, slot, copied});
}

void FactorCollector::place_oldest() {
    const Fetch f = fetched_.front();
    fetched_.pop_front();
    const FactorPiece& p = f.piece;
    devices_[p.device]->synchronize(f.copied);
    const auto seconds = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    };
    const double start = seconds();
    wrote_ = true;
    scatter(p.device, scratch_[p.device][f.slot]->data(), p.r0, p.rows, p.c0, p.cols);
    host_spans_.push_back({"gather", "gather", p.step, start, seconds()});
    slot_busy_[p.device][f.slot] = false;
}

void FactorCollector::scatter(int d, const float* from, int64_t r0, int64_t rows, int64_t c0,
                              int64_t cols) {
    // Where each of the piece's columns goes in A, then one parallel copy for
    // the whole piece: a piece of a step's rows spans dozens of blocks, and a
    // parallel region per block would fork and join the team for each.
    targets_.resize(static_cast<size_t>(cols));
    for (int64_t b : plan_.blocks_of(d)) {
        const int64_t local = plan_.local_begin(d, plan_.block_begin(b));
        const int64_t first = std::max(local, c0);
        const int64_t last = std::min(local + plan_.block_width(b), c0 + cols);
        for (int64_t c = first; c < last; ++c)
            targets_[static_cast<size_t>(c - c0)] = plan_.block_begin(b) + (c - local);
    }
    const int64_t* target = targets_.data();
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (int64_t c = 0; c < cols; ++c)
        copy_floats_streaming(a_ + r0 + target[c] * lda_, from + c * rows, rows);
}

}  // namespace tandem
