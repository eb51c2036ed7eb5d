// The hybrid right-looking blocked LU, written once against the Device
// interface: each panel on the CPU or on the device that owns it (per step, as
// the plan says), everything else on the devices, with look-ahead so the next
// panel is factored while the devices finish step k.
#ifndef TANDEM_SCHEDULER_HYBRID_LU_HPP
#define TANDEM_SCHEDULER_HYBRID_LU_HPP

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "scheduler/blocking_plan.hpp"
#include "scheduler/device.hpp"
#include "tandem/tandem.hpp"

namespace tandem {

struct HybridSettings {
    int block_size = 256;            // panel width nb (> 0), unless widths is given
    std::vector<int> widths;         // variable blocking: block widths in order (see BlockingPlan)
    std::vector<PanelSite> sites;    // where each step's panel is factored; empty = all on the CPU
    // Per step, several devices: a device panel factored before its owner's
    // share of the step before's update, not beside it (StepPlan); empty = none.
    std::vector<bool> panels_before_update;
    int lookahead = 1;               // 0 or 1
    float inverse_threshold = 1000;  // see Options::inverse_threshold
    PanelMethod panel = PanelMethod::automatic;
    bool stream_matrix = true;       // overlap the matrix's transfers with the steps (MatrixStream)
    bool peer_panels = true;         // device-factored panels read device to device (Device::can_read)
    // The caller's matrix is in the devices' own memory (sgetrf_gpu): the host
    // never touches it; upload() and download() reach it (one device, eager).
    bool matrix_on_device = false;
};

class HybridLU {
public:
    // The devices are borrowed; they must outlive this object.
    HybridLU(std::vector<Device*> devices, HybridSettings settings);

    // P * A = L * U of the column-major m x n matrix `a` (lda). Streamed, the
    // factors are copied into `a` while the steps run (see MatrixStream): if
    // a step then fails, the Error says that A is partially overwritten. ipiv
    // (1-based, global) is written only after every step has succeeded. Fills the report's step counts, panel times and
    // timeline. Returns LAPACK's info (>= 0). The factors stay on the devices
    // for solve().
    // The timeline counts from call_start (the API call's start): "setup"
    // spans what came before this, "allocate" the devices' and buffers' set-up.
    int factor(int64_t m, int64_t n, float* a, int64_t lda, int* ipiv, Report& report,
               std::chrono::steady_clock::time_point call_start = std::chrono::steady_clock::now());

    // op(A) X = B with the factors left by factor() (square A only); B is
    // column-major n x nrhs and is overwritten with X. One device solves with
    // its whole factors; several solve by block columns where the factors lie.
    void solve(char trans, int64_t nrhs, float* b, int64_t ldb);
    // The solve by block columns (Device::solve_block_column): each block
    // column's part on the device that holds it, X passing from device to
    // device through host memory, at most max_chunk floats of it at a time.
    // Any number of devices.
    void solve_by_block_columns(char trans, int64_t nrhs, float* b, int64_t ldb,
                                int64_t max_chunk = int64_t(16) << 20);
    // Whether solve() moves less data than the factors would to one device:
    // always on one device; on several, while X's trips through host memory
    // (2 (blocks + 1) n floats a right-hand side) are fewer than the n^2
    // floats of the factors.
    bool solve_moves_less_than_factors(int64_t nrhs) const;

    // Whether the last factor() wrote to the caller's array before it failed
    // (the factors are copied out while the steps run).
    bool wrote_output() const { return wrote_output_; }

private:
    std::vector<Device*> devices_;
    HybridSettings settings_;
    int64_t n_factored_ = -1;  // n of the last factor() of a square matrix, else -1
    std::optional<BlockingPlan> factored_plan_;  // the last factor()'s, for solve()
    std::vector<int> ipiv_;
    bool wrote_output_ = false;
};

// Share of the CPU's panel time that overlapped device compute, from a timeline.
// Returns {panel_seconds, hidden_seconds}.
struct PanelOverlap {
    double panel_seconds = 0.0;
    double hidden_seconds = 0.0;
};
PanelOverlap panel_overlap(const std::vector<TimelineSpan>& timeline);

}  // namespace tandem

#endif
