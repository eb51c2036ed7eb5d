#include "scheduler/hybrid_lu.hpp"

#include <algorithm>
#include <optional>
#include <string>

#include "scheduler/blas_threads.hpp"
#include "scheduler/blocking_plan.hpp"
#include "scheduler/cpu_backend.hpp"
#include "scheduler/lu_steps.hpp"
#include "scheduler/step_context.hpp"

namespace tandem {

HybridLU::HybridLU(std::vector<Device*> devices, HybridSettings settings)
    : devices_(std::move(devices)), settings_(settings) {}

int HybridLU::factor(int64_t m, int64_t n, float* a, int64_t lda, int* ipiv, Report& report,
                     std::chrono::steady_clock::time_point call_start) {
    const auto entered = std::chrono::steady_clock::now();
    const int num_devices = static_cast<int>(devices_.size());
    if (settings_.matrix_on_device && (num_devices != 1 || settings_.stream_matrix))
        throw Error(TANDEM_ERROR_INTERNAL,
                    "HybridLU: a matrix in device memory needs one device and eager transfers");
    BlockingPlan plan = settings_.widths.empty()
                            ? BlockingPlan(m, n, settings_.block_size, num_devices)
                            : BlockingPlan(m, n, settings_.widths, num_devices);
    if (!settings_.sites.empty()) plan.set_panel_sites(settings_.sites);
    n_factored_ = -1;
    factored_plan_.reset();
    // Our CPU panel runs its own OpenMP team: keep OpenBLAS's threads asleep
    // for the whole factorization (inv(L11) included), not only inside each
    // panel. OpenBLAS's count is process-wide, so a plan of device panels
    // alone (the automatic plan on the GPUs measured) leaves it as it is.
    std::optional<SingleThreadedBlas> single_threaded_blas;
    if (settings_.panel != PanelMethod::lapack && plan.has_cpu_panels()) single_threaded_blas.emplace();

    std::vector<DeviceSpan> spans;
    StepContext ctx{devices_, plan, spans};
    ctx.t0 = call_start;
    ctx.host_spans.push_back({"host", "setup", -1, 0.0, ctx.seconds_at(entered)});
    const double allocate_start = ctx.host_seconds();
    for (int d = 0; d < num_devices; ++d)
        devices_[d]->allocate(m, plan.local_cols(d), plan.workspace_width(),
                              plan.last_panel_width());
    for (int d = 0; d < num_devices; ++d) devices_[d]->record(Queue::compute);  // time origin
    const double device_origin = ctx.host_seconds();  // the queues are idle: about now
    ipiv_.assign(static_cast<size_t>(std::min(m, n)), 0);
    wrote_output_ = false;

    LuSteps steps(ctx, settings_, a, lda, ipiv_, report);
    ctx.host_spans.push_back({"host", "allocate", -1, allocate_start, ctx.host_seconds()});
    int info = 0;
    try {
        info = steps.run();
    } catch (const Error& e) {
        // A failure after the first piece of the factors reached A must say so.
        steps.abandon();
        wrote_output_ = steps.wrote_output();
        if (!wrote_output_) throw;
        throw Error(e.code(), std::string(e.what()) +
                                  " (the factors were being copied into A: A is partially overwritten)");
    }
    std::copy(ipiv_.begin(), ipiv_.end(), ipiv);

    // Timeline: device events on the host clock of the steps' start, each
    // device's read together.
    std::vector<std::vector<Event>> events(static_cast<size_t>(num_devices));
    for (const DeviceSpan& s : spans) {
        events[static_cast<size_t>(s.device)].push_back(s.begin);
        events[static_cast<size_t>(s.device)].push_back(s.end);
    }
    std::vector<std::vector<double>> seconds(static_cast<size_t>(num_devices));
    std::vector<std::string> lanes;  // device d's queue q (0, 1, 2): lanes[3 * d + q]
    for (int d = 0; d < num_devices; ++d) {
        seconds[static_cast<size_t>(d)] = devices_[d]->seconds_at_each(events[static_cast<size_t>(d)]);
        for (const char* queue : {" compute", " transfer", " copy"})
            lanes.push_back(devices_[d]->name() + queue);
    }
    report.timeline = std::move(ctx.host_spans);
    report.timeline.reserve(report.timeline.size() + spans.size());
    std::vector<size_t> next(static_cast<size_t>(num_devices), 0);  // each device's next pair of times
    for (const DeviceSpan& s : spans) {
        const auto d = static_cast<size_t>(s.device);
        const double begin = seconds[d][next[d]], end = seconds[d][next[d] + 1];
        next[d] += 2;
        report.timeline.push_back({lanes[3 * d + static_cast<size_t>(s.queue)], s.phase, s.step,
                                   device_origin + begin, device_origin + end});
    }
    const PanelOverlap overlap = panel_overlap(report.timeline);
    report.panel_seconds = overlap.panel_seconds;
    report.panel_hidden_seconds = overlap.hidden_seconds;
    report.block_size = settings_.widths.empty() ? settings_.block_size : plan.max_width();
    report.steps = static_cast<int>(plan.steps());
    if (m == n) {
        n_factored_ = n;
        factored_plan_ = plan;
    }
    return info;
}

void HybridLU::solve(char trans, int64_t nrhs, float* b, int64_t ldb) {
    if (n_factored_ < 0)
        throw Error(TANDEM_ERROR_INTERNAL, "HybridLU::solve needs a square matrix factored first");
    if (devices_.size() == 1) {
        devices_[0]->solve(trans, n_factored_, nrhs, ipiv_.data(), b, ldb);
        return;
    }
    solve_by_block_columns(trans, nrhs, b, ldb);
}

bool HybridLU::solve_moves_less_than_factors(int64_t nrhs) const {
    if (devices_.size() == 1 || !factored_plan_) return true;
    return 2 * (factored_plan_->blocks() + 1) * nrhs <= n_factored_;
}

// P A = L U, so A X = B is L U X = P B and A^T X = B is U^T L^T (P X) = B.
// Each triangle is solved by block columns, in the order that makes every
// block's right-hand side final before its device solves it.
void HybridLU::solve_by_block_columns(char trans, int64_t nrhs, float* b, int64_t ldb,
                                      int64_t max_chunk) {
    auto misuse = [](const std::string& what) {
        return Error(TANDEM_ERROR_INTERNAL, "HybridLU::solve_by_block_columns: " + what);
    };
    if (n_factored_ < 0) throw misuse("needs a square matrix factored first");
    const int64_t n = n_factored_;
    const char op = trans == 'N' || trans == 'n'   ? 'N'
                    : trans == 'T' || trans == 't' ? 'T'
                    : trans == 'C' || trans == 'c' ? 'T'
                                                   : '?';
    if (op == '?') throw misuse(std::string("trans '") + trans + "' is not N, T or C");
    if (nrhs < 0 || max_chunk < 1 || (nrhs > 0 && (b == nullptr || ldb < std::max<int64_t>(n, 1))))
        throw misuse("nrhs < 0, no B, ldb < n or max_chunk < 1");
    if (n == 0 || nrhs == 0) return;
    const BlockingPlan& plan = *factored_plan_;
    auto solve_block = [&](int64_t blk, char triangle, float* x, int64_t cols) {
        const int64_t j = plan.block_begin(blk);
        const int owner = plan.owner(blk);
        devices_[owner]->solve_block_column(op, triangle, n, j, plan.local_begin(owner, j),
                                            static_cast<int>(plan.block_width(blk)), cols, x, n);
    };
    // X goes through pinned host memory, max_chunk floats of it at a time.
    const int64_t chunk = std::clamp<int64_t>(max_chunk / n, 1, nrhs);
    Device& host_side = *devices_[0];
    float* const x = host_side.host_alloc(n * chunk);
    try {
        for (int64_t first = 0; first < nrhs; first += chunk) {
            const int64_t cols = std::min(chunk, nrhs - first);
            for (int64_t c = 0; c < cols; ++c)
                std::copy_n(b + (first + c) * ldb, n, x + c * n);
            if (op == 'N') {
                lapack_laswp(static_cast<int>(n), static_cast<int>(cols), x, static_cast<int>(n),
                             ipiv_.data(), true);
                for (int64_t blk = 0; blk < plan.blocks(); ++blk) solve_block(blk, 'L', x, cols);
                for (int64_t blk = plan.blocks() - 1; blk >= 0; --blk) solve_block(blk, 'U', x, cols);
            } else {
                for (int64_t blk = 0; blk < plan.blocks(); ++blk) solve_block(blk, 'U', x, cols);
                for (int64_t blk = plan.blocks() - 1; blk >= 0; --blk) solve_block(blk, 'L', x, cols);
                lapack_laswp(static_cast<int>(n), static_cast<int>(cols), x, static_cast<int>(n),
                             ipiv_.data(), false);
            }
            for (int64_t c = 0; c < cols; ++c)
                std::copy_n(x + c * n, n, b + (first + c) * ldb);
        }
    } catch (...) {
        host_side.host_free(x);
        throw;
    }
    host_side.host_free(x);
}

}  // namespace tandem
