#include "scheduler/performance_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <iomanip>
#include <limits>
#include <map>
#include <sstream>

namespace tandem {
namespace {

// The format's number: a file with another one is recalibrated, not read. In
// format 10 panels and updates are measured up to 1024 wide, the CPU panel
// with its inv(L11), whole small calls and sgetrs's two routes, with one
// right-hand side, kSeveralRhs and kManyRhs, for the automatic backend, and
// the host copies with at most kMostHostCopyThreads threads.
constexpr const char* kHeader = "tandem-performance-model 10";

bool positive(double v) { return std::isfinite(v) && v > 0.0; }

// The tables of whole calls and solves, by their key in the text form, in the
// order it writes them.
using WholeTable = std::vector<WholeTiming> PerformanceModel::*;
const std::array<std::pair<const char*, WholeTable>, 9> kWholeTables = {{
    {"device_whole", &PerformanceModel::device_whole},
    {"cpu_call", &PerformanceModel::cpu_calls},
    {"device_call", &PerformanceModel::device_calls},
    {"cpu_solve", &PerformanceModel::cpu_solves},
    {"device_solve", &PerformanceModel::device_solves},
    {"cpu_solve_several", &PerformanceModel::cpu_solves_several},
    {"device_solve_several", &PerformanceModel::device_solves_several},
    {"cpu_solve_many", &PerformanceModel::cpu_solves_many},
    {"device_solve_many", &PerformanceModel::device_solves_many},
}};

// Linear interpolation of y over x (sorted by x), extrapolating from the end
// segments with the slope clamped to [lo_slope, hi_slope]. A single point extends flat.
double interpolate(const std::vector<std::pair<double, double>>& points, double x, double lo_slope,
                   double hi_slope) {
    if (points.size() == 1) return points[0].second;
    size_t i = 1;
    while (i + 1 < points.size() && x > points[i].first) ++i;
    const auto [x0, y0] = points[i - 1];
    const auto [x1, y1] = points[i];
    double slope = (y1 - y0) / (x1 - x0);
    if (x < x0 || x > x1) slope = std::clamp(slope, lo_slope, hi_slope);
    return y0 + slope * (x - x0);
}

}  // namespace

// Panel time for one measured width, log-log in the height: a panel's cost
// grows at most linearly with its height, and never shrinks with it.
double ModelLookup::PanelCurve::at(int64_t rows) const {
    return std::exp(interpolate(log_points, std::log(double(std::max<int64_t>(rows, 1))), 0.0, 1.0));
}

// Update rate (flop/s) for one measured width as a function of the update's
// size: interpolated over log(size); below the smallest size the rate falls in
// proportion (small updates do not fill the device), above the largest it stays.
double ModelLookup::RateCurve::at(double size) const {
    if (size <= points.front().first) return points.front().second * size / points.front().first;
    if (size >= points.back().first) return points.back().second;
    return interpolate(log_points, std::log(size), 0.0, 0.0);
}

namespace {

// One curve per measured width, in increasing width.
std::vector<ModelLookup::PanelCurve> panel_curves(const std::vector<PanelTiming>& samples) {
    std::map<int, ModelLookup::PanelCurve> by_width;
    for (const PanelTiming& s : samples) {
        ModelLookup::PanelCurve& curve = by_width[s.width];
        curve.width = s.width;
        curve.log_points.emplace_back(std::log(double(s.rows)), std::log(s.seconds));
    }
    std::vector<ModelLookup::PanelCurve> curves;
    for (auto& [width, curve] : by_width) {
        std::sort(curve.log_points.begin(), curve.log_points.end());
        curves.push_back(std::move(curve));
    }
    return curves;
}

std::vector<ModelLookup::RateCurve> rate_curves(const std::vector<UpdateTiming>& samples) {
    std::map<int, ModelLookup::RateCurve> by_width;
    for (const UpdateTiming& s : samples) {
        ModelLookup::RateCurve& curve = by_width[s.width];
        curve.width = s.width;
        curve.points.emplace_back(double(s.size),
                                  2.0 * double(s.size) * double(s.size) * s.width / s.seconds);
    }
    std::vector<ModelLookup::RateCurve> curves;
    for (auto& [width, curve] : by_width) {
        std::sort(curve.points.begin(), curve.points.end());
        for (auto [x, y] : curve.points) curve.log_points.emplace_back(std::log(x), y);
        curves.push_back(std::move(curve));
    }
    return curves;
}

// Linearly in the width between the measured widths; narrower than measured:
// proportionally cheaper; wider: the panel's flops grow with width^2.
double panel_seconds(const std::vector<ModelLookup::PanelCurve>& curves, int64_t rows, int width) {
    if (curves.empty()) return std::numeric_limits<double>::infinity();
    if (width <= curves.front().width)
        return curves.front().at(rows) * double(width) / curves.front().width;
    if (width >= curves.back().width) {
        const double r = double(width) / curves.back().width;
        return curves.back().at(rows) * r * r;
    }
    size_t hi = 1;
    while (curves[hi].width < width) ++hi;
    const int w1 = curves[hi].width, w0 = curves[hi - 1].width;
    const double t0 = curves[hi - 1].at(rows), t1 = curves[hi].at(rows);
    return t0 + (t1 - t0) * double(width - w0) / double(w1 - w0);
}

}  // namespace

ModelLookup::ModelLookup(const PerformanceModel& model)
    : cpu_panels_(panel_curves(model.cpu_panels)),
      device_panels_(panel_curves(model.device_panels)),
      rates_(rate_curves(model.updates)) {}

double ModelLookup::cpu_panel_seconds(int64_t rows, int width) const {
    return width <= 0 || rows <= 0 ? 0.0 : panel_seconds(cpu_panels_, rows, width);
}

double ModelLookup::device_panel_seconds(int64_t rows, int width) const {
    return width <= 0 || rows <= 0 ? 0.0 : panel_seconds(device_panels_, rows, width);
}

double ModelLookup::update_seconds(int64_t rows, int64_t cols, int width) const {
    if (rows <= 0 || cols <= 0 || width <= 0) return 0.0;
    if (rates_.empty()) return std::numeric_limits<double>::infinity();
    const double size = std::sqrt(double(rows) * double(cols));
    double rate;
    if (width <= rates_.front().width)
        rate = rates_.front().at(size) * double(width) / rates_.front().width;
    else if (width >= rates_.back().width)
        rate = rates_.back().at(size);
    else {
        size_t hi = 1;
        while (rates_[hi].width < width) ++hi;
        const int w1 = rates_[hi].width, w0 = rates_[hi - 1].width;
        const double r0 = rates_[hi - 1].at(size), r1 = rates_[hi].at(size);
        rate = r0 + (r1 - r0) * double(width - w0) / double(w1 - w0);
    }
    return 2.0 * double(rows) * double(cols) * width / rate;
}

double PerformanceModel::cpu_panel_seconds(int64_t rows, int width) const {
    return ModelLookup(*this).cpu_panel_seconds(rows, width);
}

double PerformanceModel::device_panel_seconds(int64_t rows, int width) const {
    return ModelLookup(*this).device_panel_seconds(rows, width);
}

double PerformanceModel::update_seconds(int64_t rows, int64_t cols, int width) const {
    return ModelLookup(*this).update_seconds(rows, cols, width);
}

double PerformanceModel::device_whole_seconds(int64_t n) const {
    std::vector<std::pair<double, double>> points;  // (log n, log seconds)
    for (const WholeTiming& s : device_whole)
        points.emplace_back(std::log(double(s.n)), std::log(s.seconds));
    std::sort(points.begin(), points.end());
    const double x = std::log(double(std::max<int64_t>(n, 1)));
    if (points.empty() || x > points.back().first) return std::numeric_limits<double>::infinity();
    // A smaller matrix takes no longer than the smallest one measured.
    if (x < points.front().first) return std::exp(points.front().second);
    return std::exp(interpolate(points, x, 0.0, 3.0));
}

bool PerformanceModel::only_whole_call_timed_at(int64_t n) const {
    const bool whole_timed = std::any_of(device_whole.begin(), device_whole.end(),
                                         [&](const WholeTiming& s) { return s.n <= n; });
    const bool update_timed = std::any_of(updates.begin(), updates.end(),
                                          [&](const UpdateTiming& s) { return s.size <= n; });
    return whole_timed && !update_timed && std::isfinite(device_whole_seconds(n));
}

namespace {

// The order from which the device's timings beat the CPU's: see cpu_crossover_n.
int64_t crossover_between(const std::vector<WholeTiming>& cpu_timings,
                          const std::vector<WholeTiming>& device_timings) {
    // Both curves on the sizes measured for both, in increasing n.
    std::vector<std::pair<double, double>> cpu, device;  // (log n, log seconds)
    for (const WholeTiming& s : cpu_timings)
        cpu.emplace_back(std::log(double(s.n)), std::log(s.seconds));
    for (const WholeTiming& s : device_timings)
        device.emplace_back(std::log(double(s.n)), std::log(s.seconds));
    if (cpu.empty() || device.empty()) return 0;
    // Sorted, one sample a size (a repeated size would make a zero-length segment).
    for (auto* curve : {&cpu, &device}) {
        std::sort(curve->begin(), curve->end());
        curve->erase(std::unique(curve->begin(), curve->end(),
                                 [](const auto& a, const auto& b) { return a.first == b.first; }),
                     curve->end());
    }
    const double lo = std::max(cpu.front().first, device.front().first);
    const double hi = std::min(cpu.back().first, device.back().first);
    if (lo > hi) return 0;
    // The last size at which the CPU still wins, found on a fine grid (the
    // curves are a few points each): the device wins from just above it.
    int64_t crossover = 0;
    const int kPoints = 256;
    for (int i = 0; i <= kPoints; ++i) {
        const double x = lo + (hi - lo) * i / kPoints;
        if (interpolate(cpu, x, 0.0, 4.0) < interpolate(device, x, 0.0, 4.0))
            crossover = static_cast<int64_t>(std::ceil(std::exp(x))) + 1;
    }
    // The CPU won at the largest size measured for both: it is taken up to
    // there, that size included.
    return std::min(crossover, static_cast<int64_t>(std::llround(std::exp(hi))) + 1);
}

}  // namespace

int64_t PerformanceModel::cpu_crossover_n() const { return crossover_between(cpu_calls, device_calls); }

std::vector<WholeTiming>& PerformanceModel::cpu_solves_for(int timed_rhs) {
    return timed_rhs == kManyRhs ? cpu_solves_many : timed_rhs == kSeveralRhs ? cpu_solves_several : cpu_solves;
}

std::vector<WholeTiming>& PerformanceModel::device_solves_for(int timed_rhs) {
    return timed_rhs == kManyRhs      ? device_solves_many
           : timed_rhs == kSeveralRhs ? device_solves_several
                                      : device_solves;
}

const std::vector<WholeTiming>& PerformanceModel::cpu_solves_for(int timed_rhs) const {
    return const_cast<PerformanceModel*>(this)->cpu_solves_for(timed_rhs);
}

const std::vector<WholeTiming>& PerformanceModel::device_solves_for(int timed_rhs) const {
    return const_cast<PerformanceModel*>(this)->device_solves_for(timed_rhs);
}

int64_t PerformanceModel::solve_crossover_n(int timed_rhs) const {
    const std::vector<WholeTiming>& cpu = cpu_solves_for(timed_rhs);
    const std::vector<WholeTiming>& device = device_solves_for(timed_rhs);
    if (cpu.empty() || device.empty()) return std::numeric_limits<int64_t>::max();
    return crossover_between(cpu, device);
}

int PerformanceModel::timed_rhs_for(int64_t nrhs) {
    static_assert(kSeveralRhs == 16 && kManyRhs == 256, "64 = sqrt(16 * 256) splits them");
    if (nrhs <= 1) return 1;
    return nrhs < 64 ? kSeveralRhs : kManyRhs;
}

double PerformanceModel::transfer_seconds(double bytes) const {
    return bytes <= 0.0 ? 0.0 : bytes / transfer_bytes_per_second;
}

bool PerformanceModel::complete() const {
    if (cpu_panels.empty() || device_panels.empty() || updates.empty()) return false;
    for (const auto* table : {&cpu_panels, &device_panels})
        for (const PanelTiming& s : *table)
            if (s.rows <= 0 || s.width <= 0 || !positive(s.seconds)) return false;
    for (const UpdateTiming& s : updates)
        if (s.size <= 0 || s.width <= 0 || !positive(s.seconds)) return false;
    for (const auto& [key, table] : kWholeTables)
        for (const WholeTiming& s : this->*table)
            if (s.n <= 0 || !positive(s.seconds)) return false;
    return positive(transfer_bytes_per_second) && positive(host_copy_bytes_per_second) &&
           std::isfinite(device_panel_interference) &&
           device_panel_interference >= 0.0 && std::isfinite(step_overhead_seconds) &&
           step_overhead_seconds >= 0.0;
}

std::string PerformanceModel::serialize() const {
    std::ostringstream out;
    out << std::setprecision(9);
    out << kHeader << "\n";
    out << "fingerprint " << fingerprint << "\n";
    out << "transfer_bytes_per_second " << transfer_bytes_per_second << "\n";
    out << "host_copy_bytes_per_second " << host_copy_bytes_per_second << "\n";
    out << "device_panel_interference " << device_panel_interference << "\n";
    out << "step_overhead_seconds " << step_overhead_seconds << "\n";
    for (const PanelTiming& s : cpu_panels)
        out << "cpu_panel " << s.rows << " " << s.width << " " << s.seconds << "\n";
    for (const PanelTiming& s : device_panels)
        out << "device_panel " << s.rows << " " << s.width << " " << s.seconds << "\n";
    for (const UpdateTiming& s : updates)
        out << "update " << s.size << " " << s.width << " " << s.seconds << "\n";
    for (const auto& [key, table] : kWholeTables)
        for (const WholeTiming& s : this->*table) out << key << " " << s.n << " " << s.seconds << "\n";
    return out.str();
}

bool PerformanceModel::of_another_format(const std::string& text) {
    const std::string header = std::string(kHeader) + "\n";
    const std::string name = "tandem-performance-model ";
    return text.compare(0, name.size(), name) == 0 && text.compare(0, header.size(), header) != 0;
}

std::optional<PerformanceModel> PerformanceModel::parse(const std::string& text) {
    std::istringstream in(text);
    std::string line;
    if (!std::getline(in, line) || line != kHeader) return std::nullopt;
    PerformanceModel model;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        std::istringstream fields(line);
        std::string key;
        fields >> key;
        bool ok = true;
        if (key == "fingerprint") {
            model.fingerprint = line.size() > 12 ? line.substr(12) : "";
        } else if (key == "transfer_bytes_per_second") {
            ok = bool(fields >> model.transfer_bytes_per_second);
        } else if (key == "host_copy_bytes_per_second") {
            ok = bool(fields >> model.host_copy_bytes_per_second);
        } else if (key == "device_panel_interference") {
            ok = bool(fields >> model.device_panel_interference);
        } else if (key == "step_overhead_seconds") {
            ok = bool(fields >> model.step_overhead_seconds);
        } else if (key == "cpu_panel" || key == "device_panel") {
            PanelTiming s;
            ok = bool(fields >> s.rows >> s.width >> s.seconds);
            (key == "cpu_panel" ? model.cpu_panels : model.device_panels).push_back(s);
        } else if (key == "update") {
            UpdateTiming s;
            ok = bool(fields >> s.size >> s.width >> s.seconds);
            model.updates.push_back(s);
        } else {
            const auto whole = std::find_if(kWholeTables.begin(), kWholeTables.end(),
                                            [&](const auto& entry) { return key == entry.first; });
            WholeTiming s;
            ok = whole != kWholeTables.end() && bool(fields >> s.n >> s.seconds);
            if (ok) (model.*(whole->second)).push_back(s);
        }
        if (!ok) return std::nullopt;
    }
    if (!model.complete()) return std::nullopt;
    return model;
}

}  // namespace tandem
