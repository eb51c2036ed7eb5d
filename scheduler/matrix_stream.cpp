#include "scheduler/matrix_stream.hpp"

#include <omp.h>

#include <algorithm>
#include <string>

#include "tandem/tandem.hpp"

namespace tandem {

namespace {

// Columns of L that every device can keep as left factors: half of the
// factorization (the uploads take far less of the call than the steps), in
// at most half of the least memory free or kept for them.
int64_t left_capacity(const StepContext& ctx) {
    const BlockingPlan& plan = ctx.plan;
    int64_t free = INT64_MAX;
    for (Device* dev : ctx.devices) {
        const int64_t kept = dev->left_factor_bytes(), unused = dev->free_bytes();
        free = std::min(free, unused > INT64_MAX - kept ? INT64_MAX : unused + kept);
    }
    const int64_t column_bytes = int64_t(sizeof(float)) * std::max<int64_t>(plan.rows(), 1);
    return std::min(std::min(plan.rows(), plan.cols()) / 2, free / 2 / column_bytes);
}

}  // namespace

MatrixStream::MatrixStream(StepContext& ctx, float* a, int64_t lda, const std::vector<int>& ipiv,
                           bool streamed)
    : ctx_(ctx),
      a_(a),
      lda_(lda),
      ipiv_(ipiv),
      defer_uploads_(streamed && ctx.devices.size() == 1 &&
                     !uploads_before_steps(1, ctx.plan.has_cpu_panels())),
      stream_gathers_(streamed) {
    if (streamed && ctx.devices.size() > 1) {
        collector_ = std::make_unique<FactorCollector>(ctx, a, lda);
        // Left factors that hold fewer columns than two steps' would make
        // every block go live by the first step: the eager order does better.
        const BlockingPlan& plan = ctx.plan;
        left_capacity_ = left_capacity(ctx);
        feeding_ = plan.blocks() > 2 && left_capacity_ >= plan.block_begin(2);
    }
}

int64_t MatrixStream::live_end_column() const { return ctx_.plan.block_begin(live_); }

MatrixStream::~MatrixStream() {
    for (HostWorker& t : feeders_) t.join();  // they only read A and use the copy queues
}

void MatrixStream::start() {
    if (defer_uploads_ || ctx_.devices.size() == 1) {
        // Deferred: the first panel's block; LuSteps asks for the next once
        // the panel is on its way.
        ensure_live(defer_uploads_ ? 1 : ctx_.plan.blocks(), 0, -1);
        return;
    }
    // One host thread per device (a lasting one: HostWorker), each with its
    // share of three quarters of the OpenMP threads, so that the devices'
    // bounce-buffer pipelines (host copy, then the copy engine) run side by
    // side: one thread feeding two H200s in turn moved 37 GB/s, two 78 GB/s.
    // The rest are left to this thread, which issues the steps meanwhile, and
    // to the CUDA driver's: on four H200s behind 64 threads, with a parallel
    // region for each chunk of a copy, processes of 48 OpenMP threads
    // (feeders of 12) moved A at 67 GB/s, of 64 (feeders of 16) at 26-35
    // (docs/PERFORMANCE.md). They publish each block's upload event; the first
    // step runs on the blocks that have arrived.
    const int count = static_cast<int>(ctx_.devices.size());
    const int threads = std::max(1, omp_get_max_threads() * 3 / 4 / count);
    if (feeding_)  // before the feeders start: the queues are idle
        for (Device* dev : ctx_.devices) dev->hold_left_factors(left_capacity_);
    arrivals_.assign(static_cast<size_t>(ctx_.plan.blocks()), -1);
    feed_errors_.assign(static_cast<size_t>(count), nullptr);
    feed_spans_.assign(static_cast<size_t>(count), {});
    feed_start_ = feed_end_ = ctx_.host_seconds();
    live_ = feeding_ ? 0 : ctx_.plan.blocks();
    try {
        for (int d = 0; d < count; ++d)
            feeders_.emplace_back([this, d, threads] { feed(d, threads, true); });
    } catch (...) {  // no thread to be had: the rest on this one, one device after another
        const int saved = omp_get_max_threads();
        for (int d = static_cast<int>(feeders_.size()); d < count; ++d) feed(d, threads, false);
        omp_set_num_threads(saved);
    }
    if (feeding_) ensure_live(1, 0, -1);  // the first panel's block
}

void MatrixStream::feed(int d, int threads, bool wait_for_first_block) {
    const BlockingPlan& plan = ctx_.plan;
    try {
        omp_set_num_threads(threads);  // this thread's parallel regions (the host copies)
        Device& dev = *ctx_.devices[d];
        // The first panel's block goes up alone: the first step can start
        // only once it is there. On four H100s the first panel starts 9-14 ms
        // into the call this way, against 21-48 with four feeders copying at once;
        // holding back every device's first block until the one before it
        // is up cost more in the rate of the whole upload (docs/PERFORMANCE.md).
        if (wait_for_first_block && plan.blocks() > 0 && d != plan.owner(0)) {
            std::unique_lock<std::mutex> lock(feed_mutex_);
            fed_.wait(lock, [&] { return arrivals_[0] >= 0 || feed_failed_; });
            if (feed_failed_) return;
        }
        for (int64_t b : plan.blocks_of(d)) {
            const Event begin = dev.record(Queue::copy);
            dev.upload(Queue::copy, a_ + plan.block_begin(b) * lda_, lda_, 0,
                       plan.local_begin(d, plan.block_begin(b)), plan.rows(), plan.block_width(b));
            const Event end = dev.record(Queue::copy);
            feed_spans_[d].push_back({d, Queue::copy, "distribute", -1, begin, end});
            {
                std::lock_guard<std::mutex> lock(feed_mutex_);
                arrivals_[static_cast<size_t>(b)] = end;
                feed_end_ = std::max(feed_end_, ctx_.host_seconds());
            }
            fed_.notify_all();
        }
    } catch (...) {
        {
            std::lock_guard<std::mutex> lock(feed_mutex_);
            feed_errors_[d] = std::current_exception();
            feed_failed_ = true;
        }
        fed_.notify_all();
    }
}

Event MatrixStream::arrival(int64_t b) {
    {
        std::unique_lock<std::mutex> lock(feed_mutex_);
        fed_.wait(lock, [&] { return arrivals_[static_cast<size_t>(b)] >= 0 || feed_failed_; });
        if (!feed_failed_) return arrivals_[static_cast<size_t>(b)];
    }
    join_feeders();  // rethrows the upload's error
    throw Error(TANDEM_ERROR_INTERNAL, "MatrixStream: block " + std::to_string(b) + " was not uploaded");
}

void MatrixStream::join_feeders() {
    for (HostWorker& t : feeders_) t.join();
    feeders_.clear();
    for (std::vector<DeviceSpan>& s : feed_spans_) {
        ctx_.spans.insert(ctx_.spans.end(), s.begin(), s.end());
        s.clear();
    }
    if (!arrivals_.empty())  // the uploads, on threads of their own: a lane of their own
        ctx_.host_spans.push_back({"distribute", "distribute", -1, feed_start_, feed_end_});
    for (const std::exception_ptr& e : feed_errors_)
        if (e) std::rethrow_exception(e);
    // The compute queues after every upload. The first step's work waited block
    // by block already; this covers a call with no step (finish()). Every other
    // queue's work on the storage waits for a compute event.
    for (int64_t b = 0; b < static_cast<int64_t>(arrivals_.size()); ++b)
        ctx_.devices[ctx_.plan.owner(b)]->wait(Queue::compute, arrivals_[static_cast<size_t>(b)]);
    arrivals_.clear();
    for (const Piece& piece : held_) collector_->add(piece);
    held_.clear();
}

void MatrixStream::ensure_live(int64_t count, int64_t j, int step) {
    const BlockingPlan& plan = ctx_.plan;
    count = std::min(count, plan.blocks());
    if (!feeding_) {
        while (live_ < count) upload_block(live_++, j, step);
        return;
    }
    if (live_ >= plan.blocks()) return;
    if (!left_factors_grow_past(j)) count = plan.blocks();
    while (live_ < count) take_live(live_++, j, step);
    if (live_ == plan.blocks()) join_feeders();
}

void MatrixStream::take_arrived(int64_t j, int step) {
    if (!feeding_) return;
    int64_t count = live_;
    while (count < ctx_.plan.blocks() && arrived(count)) ++count;
    ensure_live(count, j, step);
}

bool MatrixStream::wait_for_next_block(std::chrono::microseconds at_most) {
    std::unique_lock<std::mutex> lock(feed_mutex_);
    return fed_.wait_for(lock, at_most, [&] {
        return arrivals_[static_cast<size_t>(live_)] >= 0 || feed_failed_;
    });
}

// The columns L will have once the panel at column j is kept: beyond the
// left factors' room, no block could be caught up after that.
bool MatrixStream::left_factors_grow_past(int64_t j) const {
    const BlockingPlan& plan = ctx_.plan;
    for (int64_t b = 0; b < plan.blocks(); ++b)
        if (plan.block_begin(b) > j) return plan.block_begin(b) <= left_capacity_;
    return plan.cols() <= left_capacity_;
}

bool MatrixStream::arrived(int64_t b) {
    std::lock_guard<std::mutex> lock(feed_mutex_);
    return arrivals_[static_cast<size_t>(b)] >= 0 || feed_failed_;
}

void MatrixStream::take_live(int64_t b, int64_t j, int step) {
    ctx_.devices[ctx_.plan.owner(b)]->wait(Queue::compute, arrival(b));
    if (j == 0) return;
    if (j > left_kept_)
        throw Error(TANDEM_ERROR_INTERNAL, "MatrixStream: block " + std::to_string(b) +
                                               " needs " + std::to_string(j) + " columns of L, " +
                                               std::to_string(left_kept_) + " are kept");
    catch_up_block(b, j, step);
}

void MatrixStream::catch_up_block(int64_t b, int64_t j, int step) {
    const BlockingPlan& plan = ctx_.plan;
    const int d = plan.owner(b);
    const int64_t c = plan.local_begin(d, plan.block_begin(b));
    const int64_t w = plan.block_width(b);
    ctx_.timed(d, Queue::compute, "catch up", step,
               [&](Device& x) { x.catch_up(Queue::compute, c, w, j, ipiv_.data()); });
    add_piece({d, ctx_.devices[d]->record(Queue::compute), 0, j, c, w, step});  // rows above j: final
}

void MatrixStream::keep_left_factors(int64_t k) {
    const BlockingPlan& plan = ctx_.plan;
    if (!feeding_ || live_ >= plan.blocks()) return;
    const int64_t j = plan.block_begin(k);
    const int width = plan.panel_width(k);
    for (int d = 0; d < static_cast<int>(ctx_.devices.size()); ++d)
        ctx_.timed(d, Queue::compute, "keep L", static_cast<int>(k), [&](Device& x) {
            x.swap_left_factor_rows(Queue::compute, j, j, j + width, ipiv_.data());
            x.keep_panel(Queue::compute, j);
        });
    left_kept_ = j + width;
}

void MatrixStream::upload_block(int64_t b, int64_t j, int step) {
    // The host's side (its copies through the bounce buffers, the issue of the
    // catch-up) in the "host" lane of the timeline.
    ctx_.host_timed("host", "distribute", step, [&] { issue_upload(b, j, step); });
}

void MatrixStream::issue_upload(int64_t b, int64_t j, int step) {
    const BlockingPlan& plan = ctx_.plan;
    const int d = plan.owner(b);
    Device& dev = *ctx_.devices[d];
    const int64_t c = plan.local_begin(d, plan.block_begin(b));
    const int64_t w = plan.block_width(b);
    ctx_.timed(d, Queue::copy, "distribute", step, [&](Device& x) {
        x.upload(Queue::copy, a_ + plan.block_begin(b) * lda_, lda_, 0, c, plan.rows(), w);
    });
    dev.wait(Queue::compute, dev.record(Queue::copy));
    if (j > 0) catch_up_block(b, j, step);
}

void MatrixStream::add_piece(const Piece& piece) {
    for (const Piece& part : split_piece(piece)) queue_part(part);
}

std::vector<MatrixStream::Piece> MatrixStream::split_piece(const Piece& piece) const {
    // In column chunks: one device's gather blocks the host thread that does
    // it (this one, which must come back soon to issue the next step). The
    // collector sends its pieces down in chunks of its own; each piece is a
    // span of the timeline.
    const int64_t most = collector_ ? FactorCollector::kPieceFloats : kGatherFloats;
    const int64_t chunk = std::max<int64_t>(1, most / std::max<int64_t>(piece.rows, 1));
    std::vector<Piece> parts;
    for (int64_t c = 0; c < piece.cols; c += chunk) {
        Piece part = piece;
        part.c0 = piece.c0 + c;
        part.cols = std::min(chunk, piece.cols - c);
        parts.push_back(part);
    }
    return parts;
}

void MatrixStream::queue_part(const Piece& part) {
    if (collector_ && feeding_ && !arrivals_.empty())
        held_.push_back(part);  // until the feeders are done (join_feeders)
    else if (collector_)
        collector_->add(part);
    else
        pending_.push_back(part);
}

void MatrixStream::rows_final(int64_t r0, int64_t rows, int step) {
    if (!stream_gathers_ || rows <= 0) return;
    // Every device's part: with several devices the collector sends each
    // device's down beside the others', each on its own link to the host (55
    // GB/s alone, 108 GB/s for two together on four H200s).
    for (int d = 0; d < static_cast<int>(ctx_.devices.size()); ++d) {
        const int64_t cols = ctx_.plan.local_begin(d, live_end_column());
        const Event ready = ctx_.devices[static_cast<size_t>(d)]->record(Queue::compute);
        if (cols > 0) add_piece({d, ready, r0, rows, 0, cols, step});
    }
}

void MatrixStream::copy_out_front() {
    const Piece p = pending_.front();
    pending_.pop_front();
    ctx_.host_timed("host", "gather", p.step, [&] {
        Device& dev = *ctx_.devices[p.device];
        dev.wait(Queue::copy, p.ready);
        wrote_ = true;
        ctx_.timed(p.device, Queue::copy, "gather", p.step, [&](Device& x) {
            x.download(Queue::copy, a_ + p.r0 + p.c0 * lda_, lda_, p.r0, p.c0, p.rows, p.cols);
        });
    });
}

bool MatrixStream::upload_next(int64_t j, int step) {
    if (!defer_uploads_ || live_ >= ctx_.plan.blocks()) return false;
    upload_block(live_++, j, step);
    return true;
}

bool MatrixStream::advance(int64_t j, int step) {
    // Uploads first: every block the device holds early is work it can do
    // right-looking instead of in a catch-up later; the pieces can wait.
    if (upload_next(j, step)) return true;
    if (pending_.empty() || !ctx_.devices[pending_.front().device]->query(pending_.front().ready))
        return false;
    copy_out_front();
    return true;
}

void MatrixStream::finish(int64_t kmax) {
    const BlockingPlan& plan = ctx_.plan;
    if (arriving()) join_feeders();  // no step ran
    if (stream_gathers_) {
        ensure_live(plan.blocks(), kmax, -1);  // blocks right of the last panel (m < n)
        if (plan.rows() > kmax)  // rows below the last panel (m > n)
            rows_final(kmax, plan.rows() - kmax, -1);
        while (!pending_.empty()) copy_out_front();
        if (collector_) collector_->finish(ctx_.spans, ctx_.host_spans);
        for (Device* dev : ctx_.devices) dev->synchronize();
        if (feeding_)
            for (Device* dev : ctx_.devices) dev->hold_left_factors(0);
        return;
    }
    ctx_.host_timed("host", "wait", -1, [&] {
        for (Device* dev : ctx_.devices) dev->synchronize();
    });
    wrote_ = true;
    ctx_.host_timed("host", "finish", -1, [&] {
        for (int64_t b = 0; b < plan.blocks(); ++b) {
            const int d = plan.owner(b);
            ctx_.devices[d]->download(Queue::copy, a_ + plan.block_begin(b) * lda_, lda_, 0,
                                      plan.local_begin(d, plan.block_begin(b)), plan.rows(),
                                      plan.block_width(b));
        }
        for (Device* dev : ctx_.devices) dev->synchronize();
    });
}

}  // namespace tandem
