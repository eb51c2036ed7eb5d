// The short measurement that gives a performance model its figures, taken
// through the Device interface (so it works for any device) and the CPU panel.
// With the default grid it takes about 3 s on an H100 or H200 (see README);
// tests use a tiny grid on the host device.
#ifndef TANDEM_SCHEDULER_CALIBRATION_HPP
#define TANDEM_SCHEDULER_CALIBRATION_HPP

#include <cstdint>
#include <string>
#include <vector>

#include "scheduler/device.hpp"
#include "scheduler/performance_model.hpp"
#include "tandem/tandem.hpp"

namespace tandem {

struct CalibrationGrid {
    // 2048: where a GPU panel's leaves go from one thread block to a cluster
    // (gpu/panel_leaf.cu, leaf_width_for).
    std::vector<int64_t> panel_rows = {1024, 2048, 4096, 16384, 65536};
    std::vector<int> widths = {128, 256, 512, 1024};
    std::vector<int64_t> update_sizes = {2048, 8192, 16384};
    // Whole square matrices in one device panel (small n: see StepPlan).
    std::vector<int64_t> whole_sizes = {128, 256, 512, 1024, 2048, 3072, 4096, 6144, 8192};
    int repeats = 3;  // the median is kept
};

// Measures the CPU panel (with `method`), the device's panel, its trailing
// update, the host <-> device bandwidth, how a device panel and an update
// share the device, and the device's panel on whole small matrices (sizes the
// device has no room for are left out). Leaves the device's storage in an
// undefined state (the next allocate() discards it).
PerformanceModel calibrate(Device& device, PanelMethod method, const CalibrationGrid& grid,
                           const std::string& fingerprint);

// How much a device panel and an update slow each other down when they run
// together, from their times alone and together: 0 when together takes as
// long as the longer alone (the shorter fully hidden), 1 when it takes their
// sum (no overlap at all); clamped to [0, 1] against timing noise.
double interference_share(double update_alone, double panel_alone, double both);

}  // namespace tandem

#endif  // TANDEM_SCHEDULER_CALIBRATION_HPP
