#include "scheduler/matrix_stream.hpp"

#include <algorithm>

namespace tandem {

MatrixStream::MatrixStream(StepContext& ctx, float* a, int64_t lda, const std::vector<int>& ipiv,
                           bool streamed)
    : ctx_(ctx), a_(a), lda_(lda), ipiv_(ipiv), streamed_(streamed && ctx.devices.size() == 1) {}

int64_t MatrixStream::live_end_column() const { return ctx_.plan.block_begin(live_); }

float* MatrixStream::host_at(int, int64_t r0, int64_t c0) const { return a_ + r0 + c0 * lda_; }

void MatrixStream::start() {
    ensure_live(streamed_ ? 2 : ctx_.plan.blocks(), 0, -1);
}

void MatrixStream::ensure_live(int64_t count, int64_t j, int step) {
    count = std::min(count, ctx_.plan.blocks());
    while (live_ < count) upload_block(live_++, j, step);
}

void MatrixStream::upload_block(int64_t b, int64_t j, int step) {
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
    pending_.push_back({d, dev.record(Queue::compute), 0, j, c, w, step});  // rows above j: final
}

void MatrixStream::rows_final(int d, Event ready, int64_t r0, int64_t rows, int step) {
    if (!streamed_ || rows <= 0) return;
    const int64_t cols = ctx_.plan.local_begin(d, live_end_column());
    if (cols > 0) pending_.push_back({d, ready, r0, rows, 0, cols, step});
}

void MatrixStream::gather(const Piece& p) {
    Device& dev = *ctx_.devices[p.device];
    dev.wait(Queue::copy, p.ready);
    wrote_ = true;
    ctx_.timed(p.device, Queue::copy, "gather", p.step, [&](Device& x) {
        x.download(Queue::copy, host_at(p.device, p.r0, p.c0), lda_, p.r0, p.c0, p.rows, p.cols);
    });
}

bool MatrixStream::advance(int64_t j, int step) {
    // Uploads first: every block the device holds early is work it can do
    // right-looking instead of in a catch-up later; the pieces can wait.
    if (streamed_ && live_ < ctx_.plan.blocks()) {
        upload_block(live_++, j, step);
        return true;
    }
    if (!pending_.empty() && ctx_.devices[pending_.front().device]->query(pending_.front().ready)) {
        gather(pending_.front());
        pending_.pop_front();
        return true;
    }
    return false;
}

void MatrixStream::finish(int64_t kmax) {
    const BlockingPlan& plan = ctx_.plan;
    if (streamed_) {
        ensure_live(plan.blocks(), kmax, -1);  // blocks right of the last panel (m < n)
        if (plan.rows() > kmax)                // rows below the last panel (m > n)
            rows_final(0, ctx_.devices[0]->record(Queue::compute), kmax, plan.rows() - kmax, -1);
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
