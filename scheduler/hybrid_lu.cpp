#include "scheduler/hybrid_lu.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>

#include "cpu/blas_threads.hpp"
#include "cpu/panel.hpp"
#include "scheduler/blocking_plan.hpp"
#include "scheduler/matrix_stream.hpp"
#include "scheduler/step_context.hpp"

namespace tandem {
namespace {

using Clock = std::chrono::steady_clock;

// Host buffers from the device (pinned on a GPU), freed on every exit path.
class HostBuffer {
public:
    HostBuffer(Device& owner, int64_t count) : owner_(owner), data_(owner.host_alloc(count)) {}
    ~HostBuffer() {
        try {
            owner_.host_free(data_);
        } catch (...) {  // a destructor must not throw; the block is lost at worst
        }
    }
    HostBuffer(const HostBuffer&) = delete;
    HostBuffer& operator=(const HostBuffer&) = delete;
    float* data() const { return data_; }

private:
    Device& owner_;
    float* data_;
};

}  // namespace

HybridLU::HybridLU(std::vector<Device*> devices, HybridSettings settings)
    : devices_(std::move(devices)), settings_(settings) {}

int HybridLU::factor(int64_t m, int64_t n, float* a, int64_t lda, int* ipiv, Report& report) {
    const int num_devices = static_cast<int>(devices_.size());
    BlockingPlan plan = settings_.widths.empty()
                            ? BlockingPlan(m, n, settings_.block_size, num_devices)
                            : BlockingPlan(m, n, settings_.widths, num_devices);
    if (!settings_.sites.empty()) plan.set_panel_sites(settings_.sites);
    const int64_t kmax = std::min(m, n);
    const int max_width = plan.max_width();
    n_factored_ = -1;
    // Our panel runs its own OpenMP team: keep OpenBLAS's threads asleep for the
    // whole factorization (inv(L11) included), not only inside each panel.
    std::optional<SingleThreadedBlas> single_threaded_blas;
    if (settings_.panel != PanelMethod::lapack) single_threaded_blas.emplace();

    for (int d = 0; d < num_devices; ++d)
        devices_[d]->allocate(m, plan.local_cols(d), max_width);
    std::vector<DeviceSpan> spans;
    StepContext ctx{devices_, plan, spans};
    for (int d = 0; d < num_devices; ++d) devices_[d]->record(Queue::compute);  // time origin
    const Clock::time_point t0 = Clock::now();
    auto host_seconds = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
    std::vector<TimelineSpan> cpu_spans;

    // Two panel buffers (and inv(L11) buffers): panel k is factored in one
    // while devices may still be receiving panel k-1 from the other.
    // received[b][d]: device d has read buffer b (the event after its receive_panel).
    const int64_t ldp = std::max<int64_t>(m, 1);
    HostBuffer panel_buffers[2] = {{*devices_[0], ldp * max_width},
                                   {*devices_[0], ldp * max_width}};
    HostBuffer inverse_buffers[2] = {{*devices_[0], int64_t(max_width) * max_width},
                                     {*devices_[0], int64_t(max_width) * max_width}};
    // Pivots and info of a panel factored on its device (width + 1 ints; a
    // float and an int have the same size, so host_alloc's block serves).
    static_assert(sizeof(int) == sizeof(float), "pivot buffer reuses a float block");
    HostBuffer pivot_buffer{*devices_[0], int64_t(max_width) + 1};
    int* const device_pivots = reinterpret_cast<int*>(pivot_buffer.data());
    std::vector<Event> received[2] = {std::vector<Event>(num_devices, -1),
                                      std::vector<Event>(num_devices, -1)};
    ipiv_.assign(static_cast<size_t>(kmax), 0);
    MatrixStream stream(ctx, a, lda, ipiv_, settings_.stream_matrix);
    wrote_output_ = false;
    std::vector<Event> update_done(num_devices, -1);
    Event panel_ready = -1;  // on the owner of the next panel: it is factored, or in host memory
    int info = 0;
    report.inverse_steps = report.trsm_steps = report.device_panel_steps = 0;

    // Panel k+1 on its way: factored by its owner (the other devices get it
    // through host memory), or copied to the host for the CPU. `after` is the
    // owner's compute event after which the panel's columns are up to date.
    auto prepare_panel = [&](int64_t k, Event after) {
        const int owner_index = plan.owner(k);
        Device& owner = *devices_[owner_index];
        const int64_t begin = plan.block_begin(k);
        const int64_t local = plan.local_begin(owner_index, begin);
        const int width = plan.panel_width(k);
        const bool host_copy = !plan.panel_on_device(k) || num_devices > 1;
        // The host buffer of step k held panel k-2: every device must have read
        // it before it is overwritten (the owner's own queue is in order).
        if (host_copy)
            for (int d = 0; d < num_devices; ++d)
                if (d != owner_index && received[k % 2][d] >= 0)
                    devices_[d]->synchronize(received[k % 2][d]);
        if (after >= 0) owner.wait(Queue::transfer, after);
        if (plan.panel_on_device(k))
            ctx.timed(owner_index, Queue::transfer, "panel", static_cast<int>(k), [&](Device& x) {
                x.factor_panel(Queue::transfer, begin, local, m - begin, width, device_pivots);
            });
        if (host_copy)
            ctx.timed(owner_index, Queue::transfer, "download", static_cast<int>(k),
                      [&](Device& x) {
                          x.download(Queue::transfer, panel_buffers[k % 2].data(), ldp, begin,
                                     local, m - begin, width);
                      });
        panel_ready = owner.record(Queue::transfer);
    };

    // Every step, with the matrix's transfers; a failure after the first piece
    // of the factors reached A must say that A is partially overwritten.
    auto run_steps = [&] {
        stream.start();
        // The first panel: on the CPU it is still in the caller's array (no round
        // trip); on a device it is factored once uploaded.
        if (plan.steps() > 0) {
            if (plan.panel_on_device(0))  // once its upload (on the copy queue) has landed
                prepare_panel(0, devices_[plan.owner(0)]->record(Queue::compute));
            else
                for (int j = 0; j < plan.panel_width(0); ++j)
                    std::memcpy(panel_buffers[0].data() + j * ldp, a + j * lda, sizeof(float) * m);
        }

        for (int64_t k = 0; k < plan.steps(); ++k) {
            const int64_t j = plan.block_begin(k);
            const int width = plan.panel_width(k);
            const int64_t panel_rows = m - j;
            const int64_t rows_below = panel_rows - width;
            const int owner = plan.owner(k);
            const bool device_panel = plan.panel_on_device(k);
            float* panel = panel_buffers[k % 2].data();
            float* inverse = inverse_buffers[k % 2].data();
            const int step = static_cast<int>(k);

            // Panel k: wait for its owner's factorization, or factor it on the CPU
            // (with inv(L11)) while the devices finish the trailing update of step k-1.
            if (panel_ready >= 0) devices_[owner]->synchronize(panel_ready);
            bool use_inverse = false;
            int panel_info = 0;
            if (device_panel) {
                std::copy(device_pivots, device_pivots + width, &ipiv_[j]);
                panel_info = device_pivots[width];
                ++report.device_panel_steps;
            } else {
                const double panel_start = host_seconds();
                panel_info = factor_panel(panel_rows, width, panel, ldp, &ipiv_[j], settings_.panel);
                if (settings_.inverse_threshold > 0.0f && width > 0) {
                    const float norm = invert_unit_lower(width, panel, ldp, inverse, width);
                    use_inverse = norm <= settings_.inverse_threshold;
                }
                cpu_spans.push_back({"cpu", "panel", step, panel_start, host_seconds()});
            }
            for (int i = 0; i < width; ++i) ipiv_[j + i] += static_cast<int>(j);
            if (panel_info > 0 && info == 0) info = static_cast<int>(j) + panel_info;
            (use_inverse ? report.inverse_steps : report.trsm_steps)++;
            // The look-ahead and the next panel need block k+1 on its device.
            stream.ensure_live(k + 2, j, step);
            const int64_t live_end = stream.live_end_column();

            // Devices: take the factored panel, apply its row interchanges to their
            // other columns, U12 = inv(L11) A12 (or TRSM).
            for (int d = 0; d < num_devices; ++d) {
                Device& dev = *devices_[d];
                const int64_t c_panel = plan.local_begin(d, j);
                const int64_t c_right = plan.local_begin(d, j + width);
                const int64_t right_cols = plan.local_begin(d, live_end) - c_right;
                if (device_panel && d == owner) {
                    // In order after step k-1's update, the last reader of the workspace.
                    ctx.timed(d, Queue::compute, "take panel", step, [&](Device& x) {
                        x.take_panel(Queue::compute, j, c_panel, panel_rows, width);
                    });
                } else {
                    // The workspace is about to be overwritten: step k-1 must be done reading it.
                    if (update_done[d] >= 0) dev.wait(Queue::transfer, update_done[d]);
                    ctx.timed(d, Queue::transfer, "upload", step, [&](Device& x) {
                        x.receive_panel(Queue::transfer, panel, ldp, panel_rows, width,
                                        use_inverse ? inverse : nullptr, width);
                    });
                    received[k % 2][d] = dev.record(Queue::transfer);
                    dev.wait(Queue::compute, received[k % 2][d]);
                }
                ctx.timed(d, Queue::compute, "swap", step, [&](Device& x) {
                    if (d == owner && !device_panel)
                        x.store_panel(Queue::compute, j, c_panel, panel_rows, width);
                    x.swap_rows(Queue::compute, 0, c_panel, j, j + width, ipiv_.data());
                    x.swap_rows(Queue::compute, c_right, right_cols, j, j + width, ipiv_.data());
                });
                ctx.timed(d, Queue::compute, "u12", step, [&](Device& x) {
                    x.form_u12(Queue::compute, j, width, c_right, right_cols, use_inverse);
                });
                // Rows j .. j+width are final now on every column the device holds.
                stream.rows_final(d, dev.record(Queue::compute), j, width, step);
            }

            // A22 -= L21 U12. With look-ahead the next panel's block goes first and
            // is factored (or sent to the CPU) while the rest of the update runs.
            const bool has_next = k + 1 < plan.steps();
            const int next_owner = has_next ? plan.owner(k + 1) : -1;
            const int64_t next_begin = has_next ? plan.block_begin(k + 1) : 0;
            const int64_t next_local = has_next ? plan.local_begin(next_owner, next_begin) : 0;
            const int64_t next_cols = has_next ? plan.block_width(k + 1) : 0;
            const bool look_ahead = has_next && settings_.lookahead > 0;
            Event next_columns_ready = -1;
            if (look_ahead) {
                ctx.timed(next_owner, Queue::compute, "lookahead", step, [&](Device& x) {
                    x.update_trailing(Queue::compute, j, width, rows_below, next_local, next_cols);
                });
                next_columns_ready = devices_[next_owner]->record(Queue::compute);
            }
            for (int d = 0; d < num_devices; ++d) {
                int64_t first = plan.local_begin(d, j + width);
                if (look_ahead && d == next_owner) first = next_local + next_cols;
                const int64_t cols = std::max<int64_t>(plan.local_begin(d, live_end) - first, 0);
                ctx.timed(d, Queue::compute, "update", step, [&](Device& x) {
                    x.update_trailing(Queue::compute, j, width, rows_below, first, cols);
                });
                update_done[d] = devices_[d]->record(Queue::compute);
            }
            if (has_next) prepare_panel(k + 1, look_ahead ? next_columns_ready : update_done[next_owner]);

            // While the next panel is being factored: upload the next blocks, copy
            // out final rows. At least one upload per step when the device factors
            // the panel (the host has nothing else to do then), so that uploads
            // progress even when panels are always ready; copying out waits for
            // idle time (the last steps are short, and the host must issue them).
            if (has_next) {
                if (plan.panel_on_device(k + 1)) stream.upload_next(j + width, step);
                while (!devices_[next_owner]->query(panel_ready) &&
                       stream.advance(j + width, step)) {
                }
            }
        }
        stream.finish(kmax);
    };
    try {
        run_steps();
    } catch (const Error& e) {
        wrote_output_ = stream.wrote_output();
        if (!wrote_output_) throw;
        throw Error(e.code(), std::string(e.what()) +
                                  " (the factors were being copied into A: A is partially overwritten)");
    }

    std::copy(ipiv_.begin(), ipiv_.end(), ipiv);

    // Timeline: device events on the host clock of t0.
    report.timeline = std::move(cpu_spans);
    for (const DeviceSpan& s : spans) {
        Device& dev = *devices_[s.device];
        const char* queue = s.queue == Queue::compute    ? " compute"
                            : s.queue == Queue::transfer ? " transfer"
                                                         : " copy";
        const std::string lane = dev.name() + queue;
        report.timeline.push_back(
            {lane, s.phase, s.step, dev.seconds_at(s.begin), dev.seconds_at(s.end)});
    }
    const PanelOverlap overlap = panel_overlap(report.timeline);
    report.panel_seconds = overlap.panel_seconds;
    report.panel_hidden_seconds = overlap.hidden_seconds;
    report.block_size = settings_.widths.empty() ? settings_.block_size : max_width;
    report.steps = static_cast<int>(plan.steps());
    if (m == n && num_devices == 1) n_factored_ = n;
    return info;
}

void HybridLU::solve(char trans, int64_t nrhs, float* b, int64_t ldb) {
    if (n_factored_ < 0)
        throw Error(TANDEM_ERROR_INTERNAL,
                    "HybridLU::solve needs a square matrix factored on a single device");
    devices_[0]->solve(trans, n_factored_, nrhs, ipiv_.data(), b, ldb);
}

}  // namespace tandem
