// The blocking plan: how the n columns are cut into block columns, which of
// them are panels, how wide each panel is and which device owns each block.
// The factorization loop asks the plan; it never computes a width itself, so
// variable block sizes (seed 000) change the plan, not the loop.
#ifndef TANDEM_SCHEDULER_BLOCKING_PLAN_HPP
#define TANDEM_SCHEDULER_BLOCKING_PLAN_HPP

#include <cstdint>
#include <string>
#include <vector>

namespace tandem {

// Where a panel is factored: by the CPU (the seed design) or by the device
// that owns its columns.
enum class PanelSite { cpu, device };

class BlockingPlan {
public:
    // Block columns of `block_size` columns (the last one may be narrower),
    // dealt to `num_devices` devices by the update work each receives (with
    // equal widths, cyclically: block b lives on device b % num_devices).
    BlockingPlan(int64_t m, int64_t n, int block_size, int num_devices);
    // Variable blocking: block b is widths[b] wide (each >= 1; the widths are
    // used in order until they cover n, the last one cut at n; if they fall
    // short, the last width repeats).
    BlockingPlan(int64_t m, int64_t n, const std::vector<int>& widths, int num_devices);

    int64_t rows() const { return m_; }
    int64_t cols() const { return n_; }
    int num_devices() const { return num_devices_; }
    int max_width() const { return max_width_; }
    // One device, and the last panel is square, factored on it, with no columns
    // right of it (e.g. a whole matrix in one device step, StepPlan): the panel
    // is factored in place and never enters a panel workspace, which then needs
    // only the other blocks' width.
    bool last_panel_in_place() const;
    int workspace_width() const;       // the widest panel a workspace holds (at least 1)
    int last_panel_width() const;      // the in-place last panel's width, or 0

    // Block columns cover [0, n).
    int64_t blocks() const { return static_cast<int64_t>(begin_.size()) - 1; }
    int64_t block_begin(int64_t b) const { return begin_[b]; }
    int64_t block_width(int64_t b) const { return begin_[b + 1] - begin_[b]; }
    int owner(int64_t b) const { return owner_[static_cast<size_t>(b)]; }
    // Device d's blocks, in increasing order.
    const std::vector<int64_t>& blocks_of(int d) const { return blocks_of_[static_cast<size_t>(d)]; }

    // Steps: block k is the panel of step k for k < steps(); the panel covers
    // the block's columns up to min(m, n) (only the last step can be narrower
    // than its block, when m < n).
    int64_t steps() const { return steps_; }
    int panel_width(int64_t k) const;

    // Columns device d holds, and how many of them lie left of global column j
    // (so the device's columns >= j start at local index local_begin(d, j)).
    int64_t local_cols(int d) const { return local_begin(d, n_); }
    int64_t local_begin(int d, int64_t j) const;

    // Where each step's panel is factored (all on the CPU until set).
    PanelSite panel_site(int64_t k) const { return sites_.empty() ? PanelSite::cpu : sites_[k]; }
    bool panel_on_device(int64_t k) const { return panel_site(k) == PanelSite::device; }
    void set_panel_sites(std::vector<PanelSite> sites);  // one per step
    int64_t device_panels() const;
    bool has_cpu_panels() const { return device_panels() < steps_; }

    // One line per step: "step k: cols [a, b) width w on device d, panel on cpu".
    std::string describe() const;

private:
    int64_t m_, n_;
    int num_devices_;
    int max_width_ = 0;
    int64_t steps_ = 0;
    std::vector<int64_t> begin_;  // block b covers [begin_[b], begin_[b+1])
    std::vector<PanelSite> sites_;  // per step; empty = all cpu
    std::vector<int> owner_;                       // per block
    std::vector<int64_t> local_offset_;            // per block: its first column on its owner
    std::vector<std::vector<int64_t>> blocks_of_;  // per device

    void finish();       // steps_, max_width_ and the blocks' owners from begin_
    void deal_blocks();  // owner_, local_offset_, blocks_of_
};

// Whether some step of `sites` factors its panel on the CPU.
bool has_cpu_panels(const std::vector<PanelSite>& sites);

// Streamed to one device, a plan with CPU panels sends the whole matrix up
// before the first step: the thread that factors the CPU panels is the one
// that would send deferred blocks, which would then arrive late and each be
// caught up (MatrixStream does so; StepPlan::uploads_before_steps says so).
inline bool uploads_before_steps(int num_devices, bool cpu_panels) { return num_devices <= 1 && cpu_panels; }

// Panel width used when Options::block_size is 0, from the matrix shape and
// the device kind (a measured model replaces this in the placement issue).
int default_block_size(int64_t m, int64_t n, bool gpu);

}  // namespace tandem

#endif
