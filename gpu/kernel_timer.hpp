// Times GPU work by CUDA events so that the figure is the GPU's execution
// alone, as when the work runs in a stream that is already busy (the LU's):
//   * the host's launch latency is kept out: a spinning kernel holds the
//     stream while the start event, the work and the stop event are queued,
//     and is released once they all are (nvbench's blocking kernel);
//   * optionally cold: before each timed run (outside the timed region) a
//     read of twice the L2's size evicts the operands, so that a product of a
//     few MB is timed from DRAM, as its byte count assumes, not from L2.
// No CUDA types here: streams are passed as void* (cudaStream_t).
#ifndef TANDEM_GPU_KERNEL_TIMER_HPP
#define TANDEM_GPU_KERNEL_TIMER_HPP

#include <functional>
#include <memory>

namespace tandem::gpu {

class KernelTimer {
public:
    // For work issued on `stream` of the current device. Throws tandem::Error
    // on a CUDA failure.
    explicit KernelTimer(void* stream);
    ~KernelTimer();
    KernelTimer(const KernelTimer&) = delete;
    KernelTimer& operator=(const KernelTimer&) = delete;

    // Median seconds of `repeats` (at least 1) timed runs of `run`, which
    // issues its work on the stream, after one untimed run (lazy loading,
    // workspaces, clocks). `run` should not synchronize the stream or the
    // device: it would wait for the held stream. If a hold is not released
    // within a second (that, or a profiler that serializes launches), the run
    // is timed again without the hold, and so are all later ones (holds()).
    double median_seconds(const std::function<void()>& run, int repeats, bool cold);

    // False once a hold has timed out: the times then include the launch latency.
    bool holds() const;

    // Median seconds of an empty kernel (one block) timed as above, warm: the
    // floor under any single kernel's time (its launch within the GPU, the
    // events' resolution).
    double empty_kernel_seconds(int repeats);

private:
    // Seconds of one timed run (no warm-up run).
    double seconds_of(const std::function<void()>& run, bool cold);

    struct Resources;
    std::unique_ptr<Resources> resources_;
};

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_KERNEL_TIMER_HPP
