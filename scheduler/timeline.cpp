#include <algorithm>
#include <utility>

#include "scheduler/hybrid_lu.hpp"

namespace tandem {

PanelOverlap panel_overlap(const std::vector<TimelineSpan>& timeline) {
    // Union of the intervals in which some device computes...
    std::vector<std::pair<double, double>> busy;
    for (const auto& s : timeline)
        if (s.lane.size() >= 7 && s.lane.compare(s.lane.size() - 7, 7, "compute") == 0)
            busy.emplace_back(s.start, s.end);
    std::sort(busy.begin(), busy.end());
    std::vector<std::pair<double, double>> merged;
    for (const auto& iv : busy) {
        if (!merged.empty() && iv.first <= merged.back().second)
            merged.back().second = std::max(merged.back().second, iv.second);
        else
            merged.push_back(iv);
    }
    // ... intersected with each CPU panel interval.
    PanelOverlap result;
    for (const auto& s : timeline) {
        if (s.lane != "cpu" || s.phase != "panel") continue;
        result.panel_seconds += s.end - s.start;
        for (const auto& iv : merged) {
            const double lo = std::max(iv.first, s.start), hi = std::min(iv.second, s.end);
            if (hi > lo) result.hidden_seconds += hi - lo;
        }
    }
    return result;
}

}  // namespace tandem
