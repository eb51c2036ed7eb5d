#include "scheduler/step_planner.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <utility>

namespace tandem {
namespace {

struct Choice {
    double seconds = std::numeric_limits<double>::infinity();
    int next_width = 0;  // 0: last step
    PanelSite next_site = PanelSite::cpu;
    bool next_before_update = false;  // panel_before_update_pays for the next panel
    double step_seconds = 0.0;
};

class Planner {
public:
    // CPU panels only for panels starting at column cpu_from or later.
    Planner(const PerformanceModel& model, const StepPlanRequest& r, int64_t cpu_from)
        : model_(model), lookup_(model), r_(r), kmax_(std::min(r.m, r.n)), devices_(std::max(r.num_devices, 1)),
          cpu_from_(cpu_from) {
        if (r.block_size > 0) {
            widths_ = {r.block_size};
        } else {
            for (int w : r.candidate_widths)
                if (w > 0 && w <= kmax_) widths_.push_back(w);
            if (widths_.empty()) widths_ = {static_cast<int>(std::max<int64_t>(kmax_, 1))};
        }
        std::sort(widths_.begin(), widths_.end());
        if (r.placement != PanelPlacement::device) sites_.push_back(PanelSite::cpu);
        if (r.placement != PanelPlacement::cpu) sites_.push_back(PanelSite::device);
    }

    StepPlan plan() {
        StepPlan result;
        if (kmax_ <= 0) return result;
        double best = std::numeric_limits<double>::infinity();
        int width = widths_.front();
        PanelSite site = sites_.front();
        for (int w : widths_)
            for (PanelSite s : sites_) {
                if (!allowed(s, 0)) continue;
                const double t = panel_seconds(0, w, s) + from(0, w).seconds;
                if (t < best) best = t, width = w, site = s;
            }
        result.predicted_seconds = best;
        int64_t j = 0;
        bool before_update = false;  // the first panel has no update before it
        result.step_seconds.push_back(panel_seconds(0, width, site));
        while (j < kmax_) {
            result.widths.push_back(width);
            result.sites.push_back(site);
            result.panels_before_update.push_back(before_update);
            const Choice& c = from(j, width);
            result.step_seconds.back() += c.step_seconds;
            j += width;
            if (c.next_width == 0) break;
            width = c.next_width;
            site = c.next_site;
            before_update = c.next_before_update;
            result.step_seconds.push_back(0.0);
        }
        return result;
    }

private:
    bool allowed(PanelSite site, int64_t column) const {
        return site == PanelSite::device || column >= cpu_from_;
    }
    int cut(int64_t j, int w) const { return static_cast<int>(std::min<int64_t>(w, kmax_ - j)); }
    // Columns right of column `j` that one device holds (the largest share).
    int64_t per_device(int64_t cols) const { return (cols + devices_ - 1) / devices_; }

    // Factoring the panel at column j, w wide, where `site` says.
    double panel_seconds(int64_t j, int w, PanelSite site) const {
        const int64_t rows = r_.m - j;
        w = cut(j, w);
        const double bytes = 4.0 * double(rows) * w;
        if (site == PanelSite::cpu)
            return lookup_.cpu_panel_seconds(rows, w) + 2.0 * model_.transfer_seconds(bytes);
        // Several devices: the factored panel also goes to the others, through
        // the host unless they read it directly (a peer link's time is left out).
        return lookup_.device_panel_seconds(rows, w) +
               (devices_ > 1 && !r_.peer_panels ? 2.0 * model_.transfer_seconds(bytes) : 0.0);
    }

    // Best time from "panel at j (w wide) is factored" to the end.
    const Choice& from(int64_t j, int w) {
        const auto key = std::make_pair(j, w);
        const auto found = memo_.find(key);
        if (found != memo_.end()) return found->second;
        Choice best;
        w = cut(j, w);
        const int64_t below = r_.m - j - w;
        const int64_t right = r_.n - j - w;
        const double u12 = lookup_.update_seconds(w, per_device(right), w);
        const double overhead = model_.step_overhead_seconds;
        if (j + w >= kmax_) {  // the last panel: its update, nothing to overlap
            best.seconds = best.step_seconds =
                overhead + u12 + lookup_.update_seconds(below, per_device(right), w);
        } else {
            for (int next : widths_) {
                const int next_w = cut(j + w, next);
                const double look_ahead = lookup_.update_seconds(below, next_w, w);
                const double update =
                    lookup_.update_seconds(below, per_device(std::max<int64_t>(right - next_w, 0)), w);
                for (PanelSite site : sites_) {
                    if (!allowed(site, j + w)) continue;
                    const double panel = panel_seconds(j + w, next_w, site);
                    double step = overhead + u12 + look_ahead;
                    // Several devices: a panel before its owner's share of
                    // the update costs each device about panel / devices of
                    // throughput. Not the second panel (the first step's
                    // update runs on the blocks as they arrive) nor one with
                    // no columns right of it (no update to go before).
                    const bool before_update = site == PanelSite::device && j > 0 &&
                                               right > next_w &&
                                               panel_before_update_pays(panel, update, devices_);
                    if (site == PanelSite::cpu)
                        step += std::max(update, panel);
                    else if (before_update)
                        step += std::max(update + panel / devices_, panel);
                    else
                        step += std::max(update, panel) +
                                model_.device_panel_interference * std::min(update, panel);
                    const double total = step + from(j + w, next).seconds;
                    if (total < best.seconds) {
                        best.seconds = total;
                        best.step_seconds = step;
                        best.next_width = next;
                        best.next_site = site;
                        best.next_before_update = before_update;
                    }
                }
            }
        }
        return memo_[key] = best;
    }

    const PerformanceModel& model_;
    const ModelLookup lookup_;
    const StepPlanRequest& r_;
    int64_t kmax_;
    int devices_;
    std::vector<int> widths_;
    std::vector<PanelSite> sites_;
    int64_t cpu_from_;
    std::map<std::pair<int64_t, int>, Choice> memo_;
};

}  // namespace

bool panel_before_update_pays(double panel_seconds, double update_seconds, int devices) {
    return devices > 1 &&
           panel_seconds * (1.0 - 1.0 / devices) > kPanelShareBesideUpdate * update_seconds;
}

std::vector<int> candidate_widths_up_to(int max_width) {
    std::vector<int> widths = StepPlanRequest{}.candidate_widths;
    if (max_width <= 0) return widths;
    widths.erase(std::remove_if(widths.begin(), widths.end(), [&](int w) { return w > max_width; }),
                 widths.end());
    if (widths.empty()) widths.push_back(max_width);
    return widths;
}

namespace {

// The planner's plan; on several devices with widths left to the plan, the
// best of the plans that keep one width for every step (why: plan_steps).
StepPlan plan_widths(const PerformanceModel& model, const StepPlanRequest& request, int64_t cpu_from) {
    if (request.num_devices <= 1 || request.block_size > 0)
        return Planner(model, request, cpu_from).plan();
    const int64_t kmax = std::min(request.m, request.n);
    std::optional<StepPlan> best;
    for (int w : request.candidate_widths) {
        if (w <= 0 || w > kmax) continue;
        StepPlanRequest uniform = request;
        uniform.block_size = w;
        StepPlan plan = Planner(model, uniform, cpu_from).plan();
        if (!best || plan.predicted_seconds < best->predicted_seconds) best = std::move(plan);
    }
    return best ? std::move(*best) : Planner(model, request, cpu_from).plan();
}

}  // namespace

StepPlan plan_steps(const PerformanceModel& model, const StepPlanRequest& request) {
    // Streamed, the host spends the whole factorization moving the matrix
    // (uploads first, then every row of the factors as it becomes final): a CPU
    // panel takes the host from transfers the devices wait for. Measured on the
    // H200 machines (docs/PERFORMANCE.md): plans with CPU panels in the later
    // steps, which the step model alone prefers, were 4% slower at n = 32768
    // on one GPU and left a 0.45 s backlog of gathers at n = 65536 on two.
    const bool keep_host = request.streamed && request.placement == PanelPlacement::automatic;
    StepPlan plan = plan_widths(model, request, keep_host ? INT64_MAX : 0);
    if (request.placement == PanelPlacement::automatic && has_cpu_panels(plan.sites)) {
        StepPlanRequest device_only = request;
        device_only.placement = PanelPlacement::device;
        StepPlan devices = plan_widths(model, device_only, INT64_MAX);
        if (devices.predicted_seconds <= (1.0 + kCpuPanelPlanMargin) * plan.predicted_seconds) {
            devices.cpu_alternative_seconds = plan.predicted_seconds;
            plan = std::move(devices);
        }
    }
    if (request.streamed) {
        plan.host_copy_seconds = 2.0 * 4.0 * double(request.m) * double(request.n) /
                                 model.host_copy_bytes_per_second;
        plan.uploads_before_steps = uploads_before_steps(request.num_devices, has_cpu_panels(plan.sites));
    }

    // A small square matrix may be done faster by the device's panel routine on
    // the whole of it (one step, one call) than in steps whose panels are each
    // a chain of small kernels. Streamed, the steps hide the copies; the single
    // call hides most of them where the device says so, else none.
    const bool may_take_whole = request.num_devices <= 1 && request.block_size <= 0 &&
                                request.placement != PanelPlacement::cpu && request.m == request.n &&
                                request.m > 0;
    if (may_take_whole) {
        const double whole = model.device_whole_seconds(request.n);
        const double exposed = request.whole_call_hides_copies ? kOverlappedCopyShare : 1.0;
        const double whole_total = whole + exposed * plan.host_copy_seconds;
        // Below the smallest trailing update the calibration timed, the step
        // model only extrapolates (its panels there are shorter than any it
        // timed, too), and more optimistically.
        const bool steps_extrapolated = model.only_whole_call_timed_at(request.n);
        const double optimism =
            std::max(request.streamed ? kStreamedStepModelOptimism : kStepModelOptimism,
                     steps_extrapolated ? kExtrapolatedStepModelOptimism : 0.0);
        const double steps_total = std::max(optimism * plan.predicted_seconds, plan.host_copy_seconds);
        if (whole_total < steps_total) {
            StepPlan single;
            single.widths = {static_cast<int>(request.n)};
            single.sites = {PanelSite::device};
            single.panels_before_update = {false};
            single.step_seconds = {whole};
            single.predicted_seconds = whole;
            single.host_copy_seconds = plan.host_copy_seconds;
            single.host_copy_exposed = exposed;
            single.steps_alternative_seconds = plan.predicted_seconds;
            single.steps_optimism = optimism;
            single.steps_extrapolated = steps_extrapolated;
            return single;
        }
    }
    return plan;
}

std::string StepPlan::describe() const {
    std::ostringstream out;
    char line[160];
    std::snprintf(line, sizeof line, "%zu steps, predicted %.2f ms (steps only)\n", widths.size(),
                  1e3 * predicted_seconds);
    out << line;
    if (steps_alternative_seconds > 0.0 && steps_extrapolated) {
        std::snprintf(line, sizeof line,
                      "the whole matrix in one device panel: steps would take %.2f ms by the model, "
                      "which has no update timed this small (x %.2f, what runs take beyond it)\n",
                      1e3 * steps_alternative_seconds, steps_optimism);
        out << line;
    } else if (steps_alternative_seconds > 0.0) {
        std::snprintf(line, sizeof line,
                      "the whole matrix in one device panel: steps would take %.2f ms by the model "
                      "(x %.2f, what runs take beyond it)\n",
                      1e3 * steps_alternative_seconds, steps_optimism);
        out << line;
    }
    if (cpu_alternative_seconds > 0.0) {
        std::snprintf(line, sizeof line,
                      "device panels only: a plan with CPU panels would take %.2f ms by the model, "
                      "within the %.0f%% it must win by\n",
                      1e3 * cpu_alternative_seconds, 100.0 * kCpuPanelPlanMargin);
        out << line;
    }
    if (host_copy_seconds > 0.0 && steps_alternative_seconds > 0.0) {
        std::snprintf(line, sizeof line,
                      "streamed: the host moves A both ways in %.2f ms (at the calibrated rate), "
                      "%.0f%% of it counted beside the single call\n",
                      1e3 * host_copy_seconds, 100.0 * host_copy_exposed);
        out << line;
    } else if (host_copy_seconds > 0.0) {
        std::snprintf(line, sizeof line,
                      "streamed: the host moves A both ways in %.2f ms (at the calibrated rate), %s\n",
                      1e3 * host_copy_seconds,
                      uploads_before_steps ? "up before the steps (the host factors CPU panels), "
                                             "the factors back beside them"
                                           : "beside the steps");
        out << line;
    }
    int64_t column = 0;
    for (size_t k = 0; k < widths.size();) {
        size_t e = k;  // a run of steps with the same width, site and order
        double seconds = 0.0;
        const auto before = [&](size_t i) {
            return i < panels_before_update.size() && panels_before_update[i];
        };
        while (e < widths.size() && widths[e] == widths[k] && sites[e] == sites[k] &&
               before(e) == before(k))
            seconds += step_seconds[e++];
        std::snprintf(line, sizeof line,
                      "  steps %4zu-%-4zu cols %7lld-  width %4d  panel on %-6s  %8.3f ms%s\n", k,
                      e - 1, static_cast<long long>(column), widths[k],
                      sites[k] == PanelSite::cpu ? "cpu" : "device", 1e3 * seconds,
                      before(k) ? "  (before its owner's update)" : "");
        out << line;
        for (size_t i = k; i < e; ++i) column += widths[i];
        k = e;
    }
    return out.str();
}

}  // namespace tandem
