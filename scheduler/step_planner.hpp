// Chooses, from a measured performance model, the width of every panel
// (variable blocking, seed 000) and where each panel is factored, so that the
// CPU and the devices wait for each other as little as the model predicts.
//
// The model of one step k (panel k available -> panel k+1 available and the
// update of step k done), with look-ahead:
//   head     = swaps + U12 + the look-ahead update of panel k+1's columns
//   CPU      : head + max(update_k, download + cpu_panel_{k+1} + upload)
//   device   : head + max(update_k, panel_{k+1}) + interference * min(update_k, panel_{k+1})
//   device, before its owner's update (several devices, panel_before_update_pays):
//              head + max(update_k + panel_{k+1} / devices, panel_{k+1})
// A dynamic programme over the panel's starting column and width minimises the
// sum over steps. Widths are multiples of the smallest candidate, so the
// programme has n / 128 positions at most a few widths each. When the matrix is
// streamed the host's time goes to the transfers: automatic placement then
// puts every panel on its device (and the programme still picks the widths).
#ifndef TANDEM_SCHEDULER_STEP_PLANNER_HPP
#define TANDEM_SCHEDULER_STEP_PLANNER_HPP

#include <cstdint>
#include <string>
#include <vector>

#include "scheduler/blocking_plan.hpp"
#include "scheduler/performance_model.hpp"
#include "tandem/tandem.hpp"

namespace tandem {

struct StepPlanRequest {
    int64_t m = 0, n = 0;
    int num_devices = 1;
    int block_size = 0;  // > 0: every panel this wide (only the sites are chosen)
    PanelPlacement placement = PanelPlacement::automatic;
    // For block_size == 0. Wide panels pay on large matrices: the update runs
    // faster at k = 1024 than at 512 (cuBLAS on the H200: about 50 against 46
    // TF/s), and the device factors a 1024-wide panel in about 2x the time of a
    // 512-wide one. One H200, same call (docs/PERFORMANCE.md, 2026-11-22): the
    // plans with these widths took 0.600 s at n = 32768 and 4.12 s at 65536,
    // those of widths up to 512 0.626 s and 4.42 s.
    std::vector<int> candidate_widths = {128, 256, 384, 512, 768, 1024};
    // The matrix is streamed (MatrixStream): the host is busy moving it, and
    // automatic placement keeps the panels off the CPU.
    bool streamed = false;
    // Several devices read device-factored panels from each other directly
    // (LuSteps' peer path): such a panel does not cross the host.
    bool peer_panels = false;
    // Streamed, on one device: the device's call on the whole matrix moves it
    // beside its factorization (Device::hides_host_copies), and the plan
    // counts only kOverlappedCopyShare of the copies against that call.
    bool whole_call_hides_copies = false;
};

struct StepPlan {
    std::vector<int> widths;       // panel widths in order (BlockingPlan's variable blocking)
    std::vector<PanelSite> sites;  // one per step
    // One per step, several devices: the step's panel is factored by its owner
    // before the owner's share of the step before's update, not beside it
    // (panel_before_update_pays).
    std::vector<bool> panels_before_update;
    std::vector<double> step_seconds;  // the model's time of each step
    double predicted_seconds = 0.0;    // of the steps (not the initial and final transfers)
    double host_copy_seconds = 0.0;    // streamed: the host's share of moving A both ways
    // Streamed to one device with CPU panels: the matrix goes up before the
    // first step (MatrixStream), only the factors come back beside the steps.
    bool uploads_before_steps = false;
    // Streamed, one step on the whole matrix: the share of host_copy_seconds
    // that the call does not hide (1: it copies, then factors).
    double host_copy_exposed = 1.0;
    // > 0: one step takes the whole matrix (its panel factored on the device);
    // the steps' predicted time, and the factor it was weighed by, for the record.
    double steps_alternative_seconds = 0.0;
    double steps_optimism = 0.0;
    // The steps' prediction was extrapolated (no update timed this small).
    bool steps_extrapolated = false;
    // > 0: automatic placement passed over a plan with CPU panels predicted
    // this fast, within kCpuPanelPlanMargin of this plan (for the record).
    double cpu_alternative_seconds = 0.0;
    std::string describe() const;      // one line per run of equal steps
};

// On several devices a device panel bounds the step whenever it is late: every
// device waits for it. Beside an FP32 update, which holds every SM until it is
// done, the panel gets only a small share of its GPU, and finishes about when
// the update does plus what is left of it: update + panel - share * update. Its
// owner can instead factor it first and update after it; that costs the owner
// the panel's time, each device about panel / devices on average (the blocks
// are dealt round the devices by their work), and the step waits for the panel
// alone. So the panel goes first where panel * (1 - 1 / devices) > share *
// update (per device); the plan never puts the second panel first (the first
// step's update runs on the blocks as they arrive) nor a last one with no
// columns right of it.
// The share, from traces of n = 65536 at 1024 wide on H200s (tandem-bench lu
// --trace, 2026-11-27): 0.16 and 0.20 at steps 20 and 40 on four GPUs (a panel
// of 43000 rows, 5.9 ms by the model, took 22.6 ms beside a 20 ms update), and
// 0.01 at step 45 on two. With every panel first, four GPUs took 1.36 s
// instead of 1.48, but two 2.30 s instead of 2.23; with the panels this rule
// puts first, 1.30 s against 1.47 and 2.22 s against 2.24 (docs/PERFORMANCE.md).
constexpr double kPanelShareBesideUpdate = 0.15;
bool panel_before_update_pays(double panel_seconds, double update_seconds, int devices);

// The default candidate widths up to max_width (0: all of them); max_width
// alone when it is below every default.
std::vector<int> candidate_widths_up_to(int max_width);

// What runs take beyond the step model's prediction (launch gaps, the host's
// synchronisations, the copies of each step's panel): 1.2x-1.3x at n = 2048
// to 16384 on one H200 with cuSOLVER's panels; 1.03x-1.14x at 16384 and 32768
// with tandem's recursive panels (tandem-bench lu --matrix gpu --plan,
// 2026-11-22, docs/PERFORMANCE.md). Used only to weigh steps against the whole
// matrix in one device panel, whose time is measured as it runs.
constexpr double kStepModelOptimism = 1.15;
// The same for a streamed matrix (tandem::sgetrf on host memory), where each
// step also waits for its columns' upload and the host gathers the factors:
// 2.1x at n = 2048, 1.75x at 4096, 1.67x at 8192, 1.46x at 16384 (one H200,
// tandem-bench lu --plan, 2026-11-22, docs/PERFORMANCE.md).
constexpr double kStreamedStepModelOptimism = 1.7;
// The same below the smallest trailing update the calibration timed, where
// the step model only extrapolates: 2.1x at n = 512 on one H100 (two steps
// predicted 0.55 ms ran 1.17; tandem-bench lu --matrix gpu, 2026-11-25,
// docs/PERFORMANCE.md). Measured on a matrix in GPU memory; a streamed one
// is weighed by the larger of this and kStreamedStepModelOptimism.
constexpr double kExtrapolatedStepModelOptimism = 2.1;
// The share of the host's copies (both ways) that the whole matrix in one
// device panel leaves uncovered when it moves the matrix beside the
// factorization (StepPlanRequest::whole_call_hides_copies): 0.36 at n = 4096
// and 0.17 at 8192 on one H100 (the host call against the same call on a
// matrix in GPU memory, over the calibrated copy time; tandem-bench lu --nb
// 8192, 2026-11-25, docs/PERFORMANCE.md). Below 4096 the call's fixed costs
// weigh more than its copies (0.3 ms more than from GPU memory at 1024, where
// the copies take 0.2), but there the single call wins by far more.
constexpr double kOverlappedCopyShare = 0.4;

// How much faster by the model a plan with CPU panels must be than the plan
// with every panel on the devices before automatic placement takes it. The
// model leaves out what a CPU panel risks: the host's team of threads waits at
// every column for its slowest thread, and a thread that loses its core for
// a moment holds it up. Measured on one H200 (tandem-bench lu --matrix gpu,
// 2026-11-22): plans with 2 and 18 CPU
// panels, predicted 0.9% and 2.4% faster than device panels only at n = 16384
// and 32768, ran 1-4% slower in medians of 7, and single runs up to 2.4x
// slower (CPU panels at 13-17x their usual time); the device-only plans ran
// within 1% of their medians.
constexpr double kCpuPanelPlanMargin = 0.05;

// The plan of least predicted time. One device, square, widths chosen by the
// plan and placement not forced to the CPU: if the model's measured time of
// the device's panel routine on the whole matrix beats the steps (weighed by
// kStepModelOptimism, kStreamedStepModelOptimism, or below every trailing update
// the model timed kExtrapolatedStepModelOptimism), the plan is that single step.
// Automatic placement keeps CPU panels only in a plan that the model puts
// more than kCpuPanelPlanMargin ahead of device panels alone.
// On several devices, with widths left to the plan, every step has the same
// width: the candidate whose plan the model predicts fastest. The step model
// leaves out what a step costs there beyond one device's (the panel's copies
// to the other devices, which wait for them), and a narrow step's update,
// split over the devices, is too short to hide the wide panel after it. On
// four H200s (tandem-bench lu --gpus 4 --nb W, 2026-11-27, docs/PERFORMANCE.md)
// the model's plans of mixed widths, predicted 1% faster than the best single
// width, ran 0.344 s at n = 32768 and 1.53 s at 65536, against 0.322 s
// (512 wide) and 1.42 s (1024).
StepPlan plan_steps(const PerformanceModel& model, const StepPlanRequest& request);

}  // namespace tandem

#endif  // TANDEM_SCHEDULER_STEP_PLANNER_HPP
