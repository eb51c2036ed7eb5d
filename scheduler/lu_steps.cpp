#include "scheduler/lu_steps.hpp"

#include <algorithm>
#include <cstring>

#include "scheduler/cpu_panel.hpp"

namespace tandem {

static_assert(sizeof(int) == sizeof(float), "the pivot buffer reuses a float block");

namespace {

// The host panel buffers hold CPU panels, and device panels that reach the
// other devices through host memory; a plan with neither needs none. They are
// pinned memory, rows x the widest of those panels: that width, 0 for none.
int host_panel_width(const StepContext& ctx, bool peer_panels) {
    const bool through_host =
        ctx.devices.size() > 1 && !(peer_panels && devices_read_each_other(ctx.devices));
    int widest = 0;
    for (int64_t k = 0; k < ctx.plan.steps(); ++k)
        if (through_host || !ctx.plan.panel_on_device(k))
            widest = std::max(widest, ctx.plan.panel_width(k));
    return widest;
}

}  // namespace

LuSteps::LuSteps(StepContext& ctx, const HybridSettings& settings, float* a, int64_t lda,
                 std::vector<int>& ipiv, Report& report)
    : ctx_(ctx),
      plan_(ctx.plan),
      settings_(settings),
      devices_(ctx.devices),
      a_(a),
      lda_(lda),
      m_(ctx.plan.rows()),
      ipiv_(ipiv),
      report_(report),
      stream_(ctx, a, lda, ipiv, settings.stream_matrix),
      ldp_(std::max<int64_t>(ctx.plan.rows(), 1)),
      host_width_(host_panel_width(ctx, settings.peer_panels)),
      panel_buffers_{{*ctx.devices[0], std::max<int64_t>(ldp_ * host_width_, 1)},
                     {*ctx.devices[0], std::max<int64_t>(ldp_ * host_width_, 1)}},
      inverse_buffers_{{*ctx.devices[0], std::max<int64_t>(int64_t(host_width_) * host_width_, 1)},
                       {*ctx.devices[0], std::max<int64_t>(int64_t(host_width_) * host_width_, 1)}},
      pivot_buffer_(*ctx.devices[0], int64_t(ctx.plan.max_width()) + 2),
      device_pivots_(reinterpret_cast<int*>(pivot_buffer_.data())),
      received_{std::vector<Event>(ctx.devices.size(), -1),
                std::vector<Event>(ctx.devices.size(), -1)},
      update_done_(ctx.devices.size(), -1),
      workspace_read_{std::vector<Event>(ctx.devices.size(), -1),
                      std::vector<Event>(ctx.devices.size(), -1)},
      peer_panels_(settings.peer_panels && devices_read_each_other(ctx.devices)),
      invert_device_panels_(settings.inverse_threshold > 0.0f &&
                            (ctx.devices.size() == 1 || peer_panels_)),
      peer_reads_(ctx.devices.size()),
      block_ready_(static_cast<size_t>(std::max<int64_t>(ctx.plan.blocks(), 0)), -1) {
    report_.inverse_steps = report_.trsm_steps = report_.device_panel_steps = 0;
}

LuSteps::~LuSteps() {
    for (Device* dev : devices_) {
        try {
            dev->synchronize();
        } catch (...) {  // the failure that brought us here has been reported already
        }
    }
}

int LuSteps::run() {
    stream_.start();
    // Panel 0, A(0:m, 0:w): on the CPU it is still in the caller's array (no
    // round trip), unless that array is in device memory; on a device it is
    // started once its block column is there (the copy queue, which the
    // compute queue waits for).
    if (plan_.steps() > 0) {
        if (plan_.panel_on_device(0) || settings_.matrix_on_device) {
            Device& owner = *devices_[plan_.owner(0)];
            if (stream_.arriving()) owner.wait(Queue::compute, stream_.arrival(0));
            start_panel(0, owner.record(Queue::compute));
        } else
            for (int j = 0; j < plan_.panel_width(0); ++j)
                std::memcpy(panel_buffers_[0].data() + j * ldp_, a_ + j * lda_,
                            sizeof(float) * m_);
        // The look-ahead's block: on its way while a device factors the first
        // panel (a CPU panel waits for the host's part of the copy).
        stream_.ensure_live(2, 0, -1);
        note_live_blocks();
    }
    for (int64_t k = 0; k < plan_.steps(); ++k) {
        // Panel k, A(j:m, j:j+w): L11, L21 and the pivots of rows j..j+w.
        const bool use_inverse = factor_panel_on_cpu_or_collect(k);
        // The look-ahead and panel k+1 need block column k+1 on its device.
        stream_.ensure_live(k + 2, plan_.block_begin(k), static_cast<int>(k));
        note_live_blocks();
        // L11 and L21 into every device's workspace.
        std::vector<std::pair<int, Event>> panel_reads;
        for (int d = 0; d < static_cast<int>(devices_.size()); ++d)
            deliver_panel(k, use_inverse, d, panel_reads);
        // A(j:m, 0:j), the factors left of the panel: rows j..j+w interchanged.
        swap_left_columns(k);
        // While blocks still arrive on several devices: L(0:m, 0:j+w) on every
        // device, for their catch-ups.
        stream_.keep_left_factors(k);
        // A(j:m, j+w:n), the trailing columns the devices hold: interchanges,
        // U12 = inv(L11) A12, A22 -= L21 U12; the next panel's columns are
        // updated first and panel k+1 starts on them (look-ahead).
        update_trailing_columns(k, use_inverse);
        // Reads of panel k's columns by the other devices: its owner waits
        // for them before the next step's swaps, not this step's (which leave
        // them alone).
        auto& owner_reads = peer_reads_[plan_.owner(k)];
        owner_reads.insert(owner_reads.end(), panel_reads.begin(), panel_reads.end());
        if (stream_.arriving()) stream_.join_feeders();
        // While panel k+1 is factored: the blocks that arrive (caught up after
        // this step's look-ahead and update, not before them), uploads and
        // final rows.
        host_work(k);
    }
    stream_.finish(std::min(plan_.rows(), plan_.cols()));
    return info_;
}

// A CPU panel is factored here while the devices finish step k-1's trailing
// update; a device panel was started by start_panel in step k-1.
bool LuSteps::factor_panel_on_cpu_or_collect(int64_t k) {
    const int64_t j = plan_.block_begin(k);
    const int width = plan_.panel_width(k);
    const int step = static_cast<int>(k);
    if (panel_ready_ >= 0)
        ctx_.host_timed("host", "wait", step,
                        [&] { devices_[plan_.owner(k)]->synchronize(panel_ready_); });
    bool use_inverse = false;
    int panel_info = 0;
    if (plan_.panel_on_device(k)) {
        std::copy(device_pivots_, device_pivots_ + width, &ipiv_[j]);
        panel_info = device_pivots_[width];
        use_inverse = panel_inverted_ && *panel_inverse_norm(width) <= settings_.inverse_threshold;
        ++report_.device_panel_steps;
    } else {
        float* panel = panel_buffers_[k % 2].data();
        PanelTeamUsage usage;
        ctx_.host_timed("cpu", "panel", step, [&] {
            const int team = cpu_panel_team_size();
            panel_info = factor_panel(m_ - j, width, panel, ldp_, &ipiv_[j], settings_.panel, team,
                                      &usage);
            if (settings_.inverse_threshold > 0.0f && width > 0) {
                const float norm = invert_unit_lower(width, panel, ldp_,
                                                     inverse_buffers_[k % 2].data(), width, team);
                use_inverse = norm <= settings_.inverse_threshold;
            }
        });
        TimelineSpan& span = ctx_.host_spans.back();  // the panel's, just recorded
        span.team_threads = usage.threads;
        span.team_seconds = usage.seconds;
        span.least_thread_cpu_seconds = usage.least_thread_cpu_seconds;
        span.involuntary_switches = usage.involuntary_switches;
        span.panel_rows = m_ - j;
        span.panel_columns = width;
    }
    for (int i = 0; i < width; ++i) ipiv_[j + i] += static_cast<int>(j);
    if (panel_info > 0 && info_ == 0) info_ = static_cast<int>(j) + panel_info;
    (use_inverse ? report_.inverse_steps : report_.trsm_steps)++;
    return use_inverse;
}

void LuSteps::deliver_panel(int64_t k, bool use_inverse, int d,
                            std::vector<std::pair<int, Event>>& panel_reads) {
    const int64_t j = plan_.block_begin(k);
    const int width = plan_.panel_width(k);
    const int64_t panel_rows = m_ - j;
    const int owner = plan_.owner(k);
    const int step = static_cast<int>(k);
    Device& dev = *devices_[d];
    if (plan_.panel_on_device(k) && d == owner) {
        // The last panel, factored in place: nothing right of it reads a workspace.
        if (k + 1 == plan_.steps() && plan_.last_panel_in_place()) return;
        // In order after step k-1's update, the last reader of the workspace.
        ctx_.timed(d, Queue::compute, "take panel", step, [&](Device& x) {
            x.take_panel(Queue::compute, j, plan_.local_begin(d, j), panel_rows, width);
        });
        owner_took_panel_ = dev.record(Queue::compute);
        if (panel_inverted_) inverse_reads_[k % 2].emplace_back(d, owner_took_panel_);
    } else if (plan_.panel_on_device(k) && peer_panels_) {
        // Straight from the owner's storage, once it has factored the panel.
        if (workspace_read_[k % 2][d] >= 0) dev.wait(Queue::transfer, workspace_read_[k % 2][d]);
        const int64_t c_owner = plan_.local_begin(owner, j);
        ctx_.timed(d, Queue::transfer, "peer panel", step, [&](Device& x) {
            x.take_panel_from(Queue::transfer, *devices_[owner], panel_ready_, j, c_owner,
                              panel_rows, width);
        });
        received_[k % 2][d] = dev.record(Queue::transfer);
        dev.wait(Queue::compute, received_[k % 2][d]);
        panel_reads.emplace_back(d, received_[k % 2][d]);
        if (panel_inverted_) inverse_reads_[k % 2].emplace_back(d, received_[k % 2][d]);
    } else {
        // The workspace is about to be overwritten: step k-2 must be done reading it.
        if (workspace_read_[k % 2][d] >= 0) dev.wait(Queue::transfer, workspace_read_[k % 2][d]);
        ctx_.timed(d, Queue::transfer, "upload", step, [&](Device& x) {
            x.receive_panel(Queue::transfer, panel_buffers_[k % 2].data(), ldp_, panel_rows,
                            width, use_inverse ? inverse_buffers_[k % 2].data() : nullptr, width);
        });
        received_[k % 2][d] = dev.record(Queue::transfer);
        dev.wait(Queue::compute, received_[k % 2][d]);
    }
}

bool LuSteps::looks_ahead(int64_t k) const {
    return k + 1 < plan_.steps() && settings_.lookahead > 0;
}

// A(j:m, 0:j) on every device: rows j..j+w interchanged, and a CPU's panel
// stored into its columns A(j:m, j:j+w).
void LuSteps::swap_left_columns(int64_t k) {
    const int64_t j = plan_.block_begin(k);
    const int width = plan_.panel_width(k);
    for (int d = 0; d < static_cast<int>(devices_.size()); ++d) {
        Device& dev = *devices_[d];
        const int64_t c_panel = plan_.local_begin(d, j);
        // The swaps move rows of earlier panels' columns, which other devices
        // may still be reading.
        for (const auto& [reader, read] : peer_reads_[d])
            dev.wait_for(Queue::compute, *devices_[reader], read);
        peer_reads_[d].clear();
        const bool store = d == plan_.owner(k) && !plan_.panel_on_device(k);
        if (store && stream_.arriving()) dev.wait(Queue::compute, stream_.arrival(k));
        ctx_.timed(d, Queue::compute, "swap", static_cast<int>(k), [&](Device& x) {
            if (store) x.store_panel(Queue::compute, j, c_panel, m_ - j, width);
            x.swap_rows(Queue::compute, 0, c_panel, j, j + width, ipiv_.data());
        });
    }
}

// The trailing columns the devices hold (up to the stream's live end), as
// ranges, the one that begins with the next panel's block first: one range a
// device, or, while the matrix is still arriving (step 0 on several
// devices), one a block column, each waiting for its block, because a range
// over a device's columns would wait for the device's last block.
std::vector<LuSteps::ColumnRange> LuSteps::trailing_columns(int64_t k) {
    const int64_t j = plan_.block_begin(k);
    const int width = plan_.panel_width(k);
    std::vector<ColumnRange> ranges;
    if (stream_.arriving()) {
        // Block k reaches past its panel only when the panel takes every row.
        std::vector<int64_t> order;
        if (k + 1 < plan_.blocks()) order.push_back(k + 1);
        order.push_back(k);
        for (int64_t b = k + 2; b < plan_.blocks(); ++b) order.push_back(b);
        for (int64_t b : order) {
            const int64_t first = std::max(plan_.block_begin(b), j + width);
            const int64_t end = plan_.block_begin(b) + plan_.block_width(b);
            if (end <= first) continue;
            const int d = plan_.owner(b);
            ranges.push_back({d, plan_.local_begin(d, first), end - first, b});
        }
        return ranges;
    }
    const int64_t live_end = stream_.live_end_column();
    const int first_device = k + 1 < plan_.steps() ? plan_.owner(k + 1) : 0;
    const int devices = static_cast<int>(devices_.size());
    for (int i = 0; i < devices; ++i) {
        const int d = (first_device + i) % devices;
        const int64_t first = plan_.local_begin(d, j + width);
        const int64_t cols = std::max<int64_t>(plan_.local_begin(d, live_end) - first, 0);
        ranges.push_back({d, first, cols, -1});
    }
    return ranges;
}

void LuSteps::update_trailing_columns(int64_t k, bool use_inverse) {
    const int64_t j = plan_.block_begin(k);
    const int width = plan_.panel_width(k);
    const int step = static_cast<int>(k);
    const int devices = static_cast<int>(devices_.size());
    const bool has_next = k + 1 < plan_.steps();
    const std::vector<ColumnRange> ranges = trailing_columns(k);
    // While blocks arrive, each is updated as soon as it is there, and panel
    // k+1 starts as soon as its block is updated (the host waits for the
    // blocks that follow). Otherwise every U12 first, so that rows j..j+w are
    // final (and can go back to the host) before the updates run, and panel
    // k+1 is issued after the updates (after the other devices' when it goes
    // before its owner's): issuing its kernels takes the host longer than the
    // look-ahead takes the device.
    const bool update_on_arrival = stream_.arriving();
    // Several devices, the matrix there: the look-ahead on the next panel's
    // owner's transfer queue (lookahead_on_transfer_queue), where the
    // catch-ups and updates queued on its compute queue do not hold it up.
    const bool lookahead_on_transfer = devices > 1 && !update_on_arrival;
    Event next_panel_columns = -1;
    bool next_panel_started = false;
    // Whether the next panel's owner updates columns beyond the look-ahead's
    // while that panel is factored (a streamed matrix may have none there yet).
    bool panel_beside_update = false;
    if (looks_ahead(k) && plan_.panel_on_device(k + 1)) {
        int64_t columns = -plan_.block_width(k + 1);  // the look-ahead's
        for (const ColumnRange& r : ranges)
            if (r.device == plan_.owner(k + 1)) columns += r.cols;
        panel_beside_update = columns > 0;
    }
    for (const ColumnRange& r : ranges) {
        Device& dev = *devices_[r.device];
        if (r.block >= 0) dev.wait(Queue::compute, stream_.arrival(r.block));
        const int64_t moved = lookahead_on_transfer ? lookahead_columns(k, r) : 0;
        if (moved > 0) {
            Event u12_formed = -1;
            next_panel_columns = lookahead_on_transfer_queue(k, r, moved, use_inverse, u12_formed);
            swap_and_form_u12(k, {r.device, r.first + moved, r.cols - moved, -1}, use_inverse);
            // Rows j .. j+width of the look-ahead's columns, for rows_final below.
            dev.wait(Queue::compute, u12_formed);
        } else {
            swap_and_form_u12(k, r, use_inverse);
        }
        if (update_on_arrival) {
            const Event e = update_range(k, r, panel_beside_update);
            if (e >= 0) {
                start_panel(k + 1, e, panel_beside_update);
                next_panel_started = true;
            }
        }
    }
    // Rows j .. j+width are final now on every column the devices hold.
    stream_.rows_final(j, width, step);
    if (!update_on_arrival) {
        // Panel k+1 before its owner's share of this update (the plan says
        // so where the panel beside it would hold up the step): the owner's
        // look-ahead, every other device's update, the panel, and then the
        // owner's update, which waits for it.
        const bool panel_first = panel_beside_update && panel_before_update(k + 1);
        const ColumnRange* owner_range = nullptr;
        int64_t owner_next_cols = 0;
        for (const ColumnRange& r : ranges) {
            const int64_t next_cols = lookahead_columns(k, r);
            if (panel_first && next_cols > 0) {
                if (!lookahead_on_transfer) next_panel_columns = update_lookahead(k, r, next_cols);
                owner_range = &r;
                owner_next_cols = next_cols;
                continue;
            }
            if (lookahead_on_transfer) {
                update_rest(k, r, next_cols,
                            panel_beside_update && has_next && r.device == plan_.owner(k + 1));
                continue;
            }
            const Event e = update_range(k, r, panel_beside_update);
            if (e >= 0) next_panel_columns = e;
        }
        if (owner_range != nullptr) {
            start_panel(k + 1, next_panel_columns);
            next_panel_started = true;
            devices_[owner_range->device]->wait(Queue::compute, panel_ready_);
            update_rest(k, *owner_range, owner_next_cols, false);
        }
    }
    for (int d = 0; d < devices; ++d) {
        // The look-ahead on the transfer queue read the workspace too.
        if (lookahead_on_transfer && has_next && d == plan_.owner(k + 1) && next_panel_columns >= 0)
            devices_[d]->wait(Queue::compute, next_panel_columns);
        update_done_[d] = devices_[d]->record(Queue::compute);
        workspace_read_[k % 2][d] = update_done_[d];
    }
    if (has_next && !next_panel_started)
        start_panel(k + 1, next_panel_columns >= 0 ? next_panel_columns : update_done_[plan_.owner(k + 1)],
                    panel_beside_update);
}

void LuSteps::swap_and_form_u12(int64_t k, const ColumnRange& r, bool use_inverse, Queue q) {
    const int64_t j = plan_.block_begin(k);
    const int width = plan_.panel_width(k);
    const int step = static_cast<int>(k);
    ctx_.timed(r.device, q, "swap", step, [&](Device& x) {
        x.swap_rows(q, r.first, r.cols, j, j + width, ipiv_.data());
    });
    ctx_.timed(r.device, q, "u12", step, [&](Device& x) {
        x.form_u12(q, j, width, r.first, r.cols, use_inverse);
    });
}

Event LuSteps::lookahead_on_transfer_queue(int64_t k, const ColumnRange& r, int64_t next_cols,
                                           bool use_inverse, Event& u12_formed) {
    Device& dev = *devices_[r.device];
    // After the compute queue's last work on the block (its update by step
    // k-1, or its catch-up), and, where this device took panel k from its
    // own storage, after that copy; a panel received from elsewhere came
    // in on this queue.
    const Event block_ready = block_ready_[static_cast<size_t>(k + 1)];
    dev.wait(Queue::transfer, block_ready >= 0 ? block_ready : dev.record(Queue::compute));
    if (plan_.panel_on_device(k) && plan_.owner(k) == r.device && owner_took_panel_ >= 0)
        dev.wait(Queue::transfer, owner_took_panel_);
    swap_and_form_u12(k, {r.device, r.first, next_cols, -1}, use_inverse, Queue::transfer);
    u12_formed = dev.record(Queue::transfer);
    return update_lookahead(k, r, next_cols, Queue::transfer);
}

void LuSteps::note_live_blocks() {
    if (devices_.size() < 2) return;
    for (; noted_live_ < stream_.live_blocks(); ++noted_live_)
        block_ready_[static_cast<size_t>(noted_live_)] =
            devices_[plan_.owner(noted_live_)]->record(Queue::compute);
}

int64_t LuSteps::lookahead_columns(int64_t k, const ColumnRange& r) const {
    if (looks_ahead(k) && r.device == plan_.owner(k + 1) &&
        r.first == plan_.local_begin(r.device, plan_.block_begin(k + 1)))
        return std::min<int64_t>(plan_.block_width(k + 1), r.cols);
    return 0;
}

Event LuSteps::update_lookahead(int64_t k, const ColumnRange& r, int64_t next_cols, Queue q) {
    const int64_t j = plan_.block_begin(k);
    const int width = plan_.panel_width(k);
    ctx_.timed(r.device, q, "lookahead", static_cast<int>(k), [&](Device& x) {
        x.update_trailing(q, j, width, m_ - j - width, r.first, next_cols);
    });
    return devices_[r.device]->record(q);
}

void LuSteps::update_rest(int64_t k, const ColumnRange& r, int64_t next_cols, bool beside_panel) {
    const int64_t j = plan_.block_begin(k);
    const int width = plan_.panel_width(k);
    const int64_t rows_below = m_ - j - width;
    const auto update = [&](int64_t c0, int64_t cols) {
        ctx_.timed(r.device, Queue::compute, "update", static_cast<int>(k), [&](Device& x) {
            if (beside_panel) x.update_trailing_beside_panel(Queue::compute, j, width, rows_below, c0, cols);
            else x.update_trailing(Queue::compute, j, width, rows_below, c0, cols);
        });
    };
    const int64_t begin = r.first + next_cols, end = r.first + r.cols;
    // Several devices: the block of the look-ahead after next first, so that
    // that look-ahead (on the transfer queue) need not wait for the rest.
    const int64_t b = k + 2;
    if (devices_.size() > 1 && looks_ahead(k) && b < plan_.blocks() && plan_.owner(b) == r.device) {
        const int64_t c0 = plan_.local_begin(r.device, plan_.block_begin(b));
        const int64_t c1 = std::min(end, c0 + plan_.block_width(b));
        if (begin <= c0 && c0 < c1) {
            update(c0, c1 - c0);
            block_ready_[static_cast<size_t>(b)] = devices_[r.device]->record(Queue::compute);
            if (c0 > begin) update(begin, c0 - begin);
            if (end > c1) update(c1, end - c1);
            return;
        }
    }
    update(begin, end - begin);
}

// A(j+w:m, range) -= L21 U12. A range that begins with the next panel's block
// updates that block first (the look-ahead) and returns the event after it
// (-1 for any other range); then the rest of the range.
Event LuSteps::update_range(int64_t k, const ColumnRange& r, bool panel_beside_update) {
    const int64_t next_cols = lookahead_columns(k, r);
    const Event next_columns_ready = next_cols > 0 ? update_lookahead(k, r, next_cols) : -1;
    // The next panel is factored on this device while this update runs.
    update_rest(k, r, next_cols, panel_beside_update && r.device == plan_.owner(k + 1));
    return next_columns_ready;
}

bool LuSteps::panel_before_update(int64_t k) const {
    const auto& before = settings_.panels_before_update;
    return devices_.size() > 1 && k < static_cast<int64_t>(before.size()) &&
           before[static_cast<size_t>(k)];
}

void LuSteps::start_panel(int64_t k, Event after, bool beside_update) {
    const int owner_index = plan_.owner(k);
    Device& owner = *devices_[owner_index];
    const int64_t begin = plan_.block_begin(k);
    const int64_t local = plan_.local_begin(owner_index, begin);
    const int width = plan_.panel_width(k);
    const bool host_copy = !plan_.panel_on_device(k) || (devices_.size() > 1 && !peer_panels_);
    // The host buffer of step k held panel k-2: every device must have read it
    // before it is overwritten (the owner's own queue is in order).
    if (host_copy)
        for (int d = 0; d < static_cast<int>(devices_.size()); ++d)
            if (d != owner_index && received_[k % 2][d] >= 0)
                ctx_.host_timed("host", "wait", static_cast<int>(k), [&] {
                    devices_[d]->synchronize(received_[k % 2][d]);
                });
    if (after >= 0) owner.wait(Queue::transfer, after);
    if (plan_.panel_on_device(k))
        ctx_.timed(owner_index, Queue::transfer, "panel", static_cast<int>(k), [&](Device& x) {
            if (beside_update)
                x.factor_panel_beside_update(Queue::transfer, begin, local, m_ - begin, width,
                                             device_pivots_);
            else
                x.factor_panel(Queue::transfer, begin, local, m_ - begin, width, device_pivots_);
        });
    panel_inverted_ = plan_.panel_on_device(k) && invert_device_panels_ && m_ - begin >= width &&
                      begin + width < plan_.cols() && invert_panel(k, owner_index, begin, local, width);
    if (host_copy)
        ctx_.timed(owner_index, Queue::transfer, "download", static_cast<int>(k), [&](Device& x) {
            x.download(Queue::transfer, panel_buffers_[k % 2].data(), ldp_, begin, local,
                       m_ - begin, width);
        });
    panel_ready_ = owner.record(Queue::transfer);
}

// inv(L11) of device panel k, in its owner's slot k % 2 once the copies of
// panel k-2's inverse from that slot have been made.
bool LuSteps::invert_panel(int64_t k, int owner_index, int64_t begin, int64_t local, int width) {
    Device& owner = *devices_[owner_index];
    for (const auto& [reader, read] : inverse_reads_[k % 2]) {
        if (reader == owner_index) owner.wait(Queue::transfer, read);
        else owner.wait_for(Queue::transfer, *devices_[reader], read);
    }
    inverse_reads_[k % 2].clear();
    bool inverted = false;
    ctx_.timed(owner_index, Queue::transfer, "invert", static_cast<int>(k), [&](Device& x) {
        inverted = x.invert_panel_l11(Queue::transfer, begin, local, width, static_cast<int>(k % 2),
                                      panel_inverse_norm(width));
    });
    return inverted;
}

// While the next panel is being factored: upload the next blocks, copy out
// final rows. At least one upload per step when the device factors the panel
// (the host has nothing else to do then), so that uploads progress even when
// panels are always ready; copying out waits for idle time (the last steps are
// short, and the host must issue them).
//
// Several devices, streamed: each block that arrives meanwhile goes live at
// once, caught up with steps 0..k (its catch-up queued behind step k's
// update). Were blocks taken only between steps, one arriving just after a
// step's end would wait a whole step (7-10 ms early in the call at 32768 on
// two H200s), its owner's compute queue idle while the upload is still the
// bound (docs/PERFORMANCE.md).
void LuSteps::host_work(int64_t k) {
    if (k + 1 >= plan_.steps()) return;
    const int64_t j_next = plan_.block_begin(k + 1);
    const int step = static_cast<int>(k);
    Device& next_owner = *devices_[plan_.owner(k + 1)];
    const auto take_arrived_blocks = [&] {
        stream_.take_arrived(j_next, step);
        note_live_blocks();
    };
    take_arrived_blocks();
    if (plan_.panel_on_device(k + 1)) stream_.upload_next(j_next, step);
    while (!next_owner.query(panel_ready_)) {
        if (stream_.advance(j_next, step)) continue;
        if (!stream_.blocks_to_come()) break;  // the host waits for the panel
        // The panel is polled every kBlockPoll (plus the timer's slack, some
        // 50 us on Linux) while a block's feeder may take longer than it.
        if (stream_.wait_for_next_block(kBlockPoll)) take_arrived_blocks();
    }
}

}  // namespace tandem
