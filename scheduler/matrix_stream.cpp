#include "scheduler/matrix_stream.hpp"

#include <algorithm>
#include <cstring>

namespace tandem {

MatrixStream::MatrixStream(StepContext& ctx, float* a, int64_t lda, const std::vector<int>& ipiv,
                           bool streamed)
    : ctx_(ctx),
      a_(a),
      lda_(lda),
      ipiv_(ipiv),
      defer_uploads_(streamed && ctx.devices.size() == 1),
      stream_gathers_(streamed),
      scratch_(ctx.devices.size()) {}

int64_t MatrixStream::live_end_column() const { return ctx_.plan.block_begin(live_); }

void MatrixStream::scatter(int d, const float* from, int64_t r0, int64_t rows, int64_t c0,
                           int64_t cols) {
    // Where each of the piece's columns goes in A, then one parallel copy for
    // the whole piece: a piece of a step's rows spans dozens of blocks, and a
    // parallel region per block would fork and join the team for each.
    const BlockingPlan& plan = ctx_.plan;
    scatter_targets_.resize(static_cast<size_t>(cols));
    for (int64_t b = d; b < plan.blocks(); b += plan.num_devices()) {
        const int64_t local = plan.local_begin(d, plan.block_begin(b));
        const int64_t first = std::max(local, c0);
        const int64_t last = std::min(local + plan.block_width(b), c0 + cols);
        for (int64_t c = first; c < last; ++c)
            scatter_targets_[static_cast<size_t>(c - c0)] = plan.block_begin(b) + (c - local);
    }
    const int64_t* target = scatter_targets_.data();
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < cols; ++c)
        std::memcpy(a_ + r0 + target[c] * lda_, from + c * rows, sizeof(float) * rows);
}

void MatrixStream::start() {
    ensure_live(defer_uploads_ ? 2 : ctx_.plan.blocks(), 0, -1);
}

void MatrixStream::ensure_live(int64_t count, int64_t j, int step) {
    count = std::min(count, ctx_.plan.blocks());
    while (live_ < count) upload_block(live_++, j, step);
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
    if (j == 0) return;
    ctx_.timed(d, Queue::compute, "catch up", step,
               [&](Device& x) { x.catch_up(Queue::compute, c, w, j, ipiv_.data()); });
    add_piece({d, dev.record(Queue::compute), 0, j, c, w, step});  // rows above j: final
}

void MatrixStream::add_piece(const Piece& piece) {
    // In column chunks of at most kPieceFloats: a gather blocks the host (pageable
    // memory goes through its bounce buffers), and the host must come back soon
    // to issue the next step.
    const int64_t chunk = std::max<int64_t>(1, kPieceFloats / std::max<int64_t>(piece.rows, 1));
    for (int64_t c = 0; c < piece.cols; c += chunk) {
        Piece part = piece;
        part.c0 = piece.c0 + c;
        part.cols = std::min(chunk, piece.cols - c);
        pending_.push_back(part);
    }
}

void MatrixStream::rows_final(int d, Event ready, int64_t r0, int64_t rows, int step) {
    if (!stream_gathers_ || rows <= 0) return;
    const int64_t cols = ctx_.plan.local_begin(d, live_end_column());
    if (cols > 0) add_piece({d, ready, r0, rows, 0, cols, step});
}

void MatrixStream::gather(const Piece& p) {
    ctx_.host_timed("host", "gather", p.step, [&] { copy_out(p); });
}

void MatrixStream::copy_out(const Piece& p) {
    Device& dev = *ctx_.devices[p.device];
    dev.wait(Queue::copy, p.ready);
    wrote_ = true;
    if (ctx_.devices.size() == 1) {  // local columns are global ones: straight into A
        ctx_.timed(p.device, Queue::copy, "gather", p.step, [&](Device& x) {
            x.download(Queue::copy, a_ + p.r0 + p.c0 * lda_, lda_, p.r0, p.c0, p.rows, p.cols);
        });
        return;
    }
    std::unique_ptr<HostBuffer>& scratch = scratch_[p.device];
    if (!scratch || scratch->count() < p.rows * p.cols) {
        scratch.reset();  // back to the device's pinned cache before the larger block is taken
        scratch = std::make_unique<HostBuffer>(dev, p.rows * p.cols);
    }
    ctx_.timed(p.device, Queue::copy, "gather", p.step, [&](Device& x) {
        x.download(Queue::copy, scratch->data(), p.rows, p.r0, p.c0, p.rows, p.cols);
    });
    dev.synchronize(dev.record(Queue::copy));
    scatter(p.device, scratch->data(), p.r0, p.rows, p.c0, p.cols);
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
    if (!pending_.empty() && ctx_.devices[pending_.front().device]->query(pending_.front().ready)) {
        gather(pending_.front());
        pending_.pop_front();
        return true;
    }
    return false;
}

void MatrixStream::finish(int64_t kmax) {
    const BlockingPlan& plan = ctx_.plan;
    if (stream_gathers_) {
        ensure_live(plan.blocks(), kmax, -1);  // blocks right of the last panel (m < n)
        if (plan.rows() > kmax)                // rows below the last panel (m > n)
            for (int d = 0; d < plan.num_devices(); ++d)
                rows_final(d, ctx_.devices[d]->record(Queue::compute), kmax, plan.rows() - kmax, -1);
        for (; !pending_.empty(); pending_.pop_front()) gather(pending_.front());
        for (Device* dev : ctx_.devices) dev->synchronize();
        return;
    }
    for (Device* dev : ctx_.devices) dev->synchronize();
    wrote_ = true;
    for (int64_t b = 0; b < plan.blocks(); ++b) {
        const int d = plan.owner(b);
        ctx_.devices[d]->download(Queue::copy, a_ + plan.block_begin(b) * lda_, lda_, 0,
                                  plan.local_begin(d, plan.block_begin(b)), plan.rows(),
                                  plan.block_width(b));
    }
    for (Device* dev : ctx_.devices) dev->synchronize();
}

}  // namespace tandem
