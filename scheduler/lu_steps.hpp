// The steps of one hybrid factorization (scheduler/hybrid_lu.hpp sets them up
// and reports on them): per step k, the panel (waited for, or factored on the
// CPU) and its distribution; the next panel's columns (swaps, U12, update) and
// the next panel set going; the other columns' swaps, U12 and update; and the
// host's transfer work while it waits. docs/ALGORITHM.md has the step as a table.
#ifndef TANDEM_SCHEDULER_LU_STEPS_HPP
#define TANDEM_SCHEDULER_LU_STEPS_HPP

#include <chrono>
#include <cstdint>
#include <utility>
#include <vector>

#include "scheduler/host_buffer.hpp"
#include "scheduler/hybrid_lu.hpp"
#include "scheduler/matrix_stream.hpp"
#include "scheduler/step_context.hpp"

namespace tandem {

class LuSteps {
public:
    // The devices hold allocations for `ctx.plan`; ipiv (kmax entries) receives
    // the global pivots; the report its step counts.
    LuSteps(StepContext& ctx, const HybridSettings& settings, float* a, int64_t lda,
            std::vector<int>& ipiv, Report& report);
    // Waits for the devices (errors ignored) before the host buffers go back:
    // after a failure, copies into them may still be in flight.
    ~LuSteps();
    LuSteps(const LuSteps&) = delete;
    LuSteps& operator=(const LuSteps&) = delete;

    // Every step and the matrix's transfers; returns LAPACK's info.
    int run();
    // After a failure: stop copying factors into A, then wrote_output() is final.
    void abandon() { stream_.abandon(); }
    bool wrote_output() const { return stream_.wrote_output(); }

private:
    // The phases of step k, in the order run() calls them. Step k's panel is
    // A(j:m, j:j+w) with j = plan_.block_begin(k), w = plan_.panel_width(k);
    // L11 is its top w x w unit lower triangle, L21 the rows below, A12 =
    // A(j:j+w, j+w:n) and A22 = A(j+w:m, j+w:n).
    //
    // Panel k on the host's side: factored now on the CPU (with inv(L11), whose
    // norm decides whether U12 uses it), or, when its device factored it
    // (start_panel), its pivots and info collected. Returns whether U12 uses
    // inv(L11).
    bool factor_panel_on_cpu_or_collect(int64_t k);
    // Whether step k updates the next panel's columns first (look-ahead).
    bool looks_ahead(int64_t k) const;
    // Every device: the interchanges of rows j..j+w on A(j:m, 0:j), the
    // factors left of the panel (and a CPU's panel stored into its columns).
    void swap_left_columns(int64_t k);
    // Columns [first, first + cols) of one device's storage, issued as one
    // piece; `block` >= 0: the block column they belong to is still arriving,
    // and the device waits for it first.
    struct ColumnRange {
        int device;
        int64_t first;
        int64_t cols;
        int64_t block;
    };
    // The trailing columns A(j:m, j+w:n) that the devices hold, as ranges.
    std::vector<ColumnRange> trailing_columns(int64_t k);
    // On each range: the interchanges of rows j..j+w, U12 = inv(L11) A12 (or
    // TRSM), then A22 -= L21 U12 (update_range); panel k+1 started after its
    // block's update (look-ahead) or after the whole update, or, where it goes
    // before its owner's share (panel_before_update), after the other
    // devices' updates, with the owner's share waiting for it. On several
    // devices the look-ahead runs on the owner's transfer queue, before the
    // panel (lookahead_on_transfer_queue), once the matrix is there.
    void update_trailing_columns(int64_t k, bool use_inverse);
    // On r (of step k's trailing columns): the interchanges of rows j..j+w
    // and U12, on queue q.
    void swap_and_form_u12(int64_t k, const ColumnRange& r, bool use_inverse,
                           Queue q = Queue::compute);
    // Several devices: the look-ahead on the first next_cols columns of r
    // (the next panel's block) on the owner's transfer queue, high priority
    // and in order before that panel: their interchanges, U12 (u12_formed:
    // the event after it) and update. Returns the event after the update.
    Event lookahead_on_transfer_queue(int64_t k, const ColumnRange& r, int64_t next_cols,
                                      bool use_inverse, Event& u12_formed);
    // Several devices: block_ready_ of the blocks that have joined the steps
    // (after their catch-ups) since the last call.
    void note_live_blocks();
    // A22 -= L21 U12 on one range; the range that begins with the next
    // panel's block updates that block first and returns the event after it,
    // any other -1.
    // `panel_beside_update`: the next panel's owner updates columns beyond
    // the look-ahead's while that panel is factored (its updates say so).
    Event update_range(int64_t k, const ColumnRange& r, bool panel_beside_update);
    // The columns of r that the look-ahead updates: the next panel's block,
    // where r begins with it (0 for any other range).
    int64_t lookahead_columns(int64_t k, const ColumnRange& r) const;
    // The look-ahead's update of those columns on queue q; returns the event after it.
    Event update_lookahead(int64_t k, const ColumnRange& r, int64_t next_cols,
                           Queue q = Queue::compute);
    // The rest of r after its first next_cols columns; `beside_panel`: the
    // next panel is factored on r's device meanwhile. On several devices the
    // block of the look-ahead after next goes first, and block_ready_ says
    // when it is done.
    void update_rest(int64_t k, const ColumnRange& r, int64_t next_cols, bool beside_panel);
    // Several devices: panel k is factored before its owner's share of step
    // k-1's update (the plan's panels_before_update), not beside it.
    bool panel_before_update(int64_t k) const;
    // Panel k started once `after` (an event of its owner's compute queue) has
    // passed, on the owner's transfer queue: factored by the owner (and copied
    // to the host for the other devices), or copied to the host for the CPU.
    // `beside_update`: its owner updates columns beyond the look-ahead's
    // while it is factored (Device::factor_panel_beside_update).
    void start_panel(int64_t k, Event after, bool beside_update = false);
    // Device panel k, factored at (begin, local) of its owner: inv(L11) and
    // its norm (for the choice between U12 by product or by TRSM), on the
    // owner's transfer queue. Returns whether the device made them.
    bool invert_panel(int64_t k, int owner_index, int64_t begin, int64_t local, int width);
    // The host's work while it waits for panel k+1: the blocks that arrive
    // (several devices, streamed) go live, caught up with step k; uploads of
    // block columns (one device) and copies of final rows into A.
    void host_work(int64_t k);
    // How long the host waits for a block before it looks at the next panel again.
    static constexpr std::chrono::microseconds kBlockPoll{20};

    // Device d: panel k into its workspace (taken from its own storage, read
    // from its owner's, or received from the host); peer reads of it are added
    // to panel_reads.
    void deliver_panel(int64_t k, bool use_inverse, int d,
                       std::vector<std::pair<int, Event>>& panel_reads);
    StepContext& ctx_;
    const BlockingPlan& plan_;
    const HybridSettings& settings_;
    std::vector<Device*>& devices_;
    float* a_;
    int64_t lda_;
    int64_t m_;
    std::vector<int>& ipiv_;
    Report& report_;
    MatrixStream stream_;

    // Two panel buffers (and inv(L11) buffers): panel k is factored in one
    // while devices may still be receiving panel k-1 from the other.
    // received_[b][d]: device d has read buffer b (the event after its receive_panel).
    int64_t ldp_;
    // The widest panel that crosses the host (CPU panels, device panels sent to
    // other devices through it); 0: none, and the buffers below hold 1 float.
    int host_width_;
    HostBuffer panel_buffers_[2];
    HostBuffer inverse_buffers_[2];
    // Pivots and info of a panel factored on its device (width + 1 ints; a
    // float and an int have the same size, so host_alloc's block serves),
    // then ||inv(L11)||_1 where the device inverted it.
    HostBuffer pivot_buffer_;
    int* device_pivots_;
    float* panel_inverse_norm(int width) { return pivot_buffer_.data() + width + 1; }
    std::vector<Event> received_[2];
    std::vector<Event> update_done_;
    // Per device, after the last reader of the panel workspace that step k
    // filled, at index k % 2: the fill of step k + 2 (the same workspace, see
    // Device) waits for it, step k + 1's may not.
    std::vector<Event> workspace_read_[2];
    // Panels factored on a device go to the others device to device (all
    // devices can read each other, settings.peer_panels); else through the host.
    bool peer_panels_;
    // Device panels come with inv(L11) for U12 (Device::invert_panel_l11)
    // where every device reads them from their owner; panel_inverted_: the
    // last one started does.
    bool invert_device_panels_;
    bool panel_inverted_ = false;
    // Per slot (k % 2), the copies of a panel's inverse from its owner's slot
    // (reader, event after it): the next inversion into the slot waits for them.
    std::vector<std::pair<int, Event>> inverse_reads_[2];
    // peer_reads_[d]: (reader, event) for each read of device d's last panel
    // columns by another device; d must not swap those rows before each passes.
    std::vector<std::vector<std::pair<int, Event>>> peer_reads_;
    Event panel_ready_ = -1;  // on the owner of the next panel: it is factored, or in host memory
    // On panel k's owner's compute queue: after it took the panel into its
    // workspace (take_panel).
    Event owner_took_panel_ = -1;
    // Several devices, per block column: an event of its owner's compute
    // queue after the last work there on the block before the look-ahead
    // that prepares it as a panel (its update by the step before, or its
    // catch-up); that look-ahead, on the transfer queue, waits for it.
    std::vector<Event> block_ready_;
    int64_t noted_live_ = 0;  // blocks [0, noted_live_) have their block_ready_
    int info_ = 0;
};

}  // namespace tandem

#endif  // TANDEM_SCHEDULER_LU_STEPS_HPP
