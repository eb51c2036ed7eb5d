#ifndef TANDEM_SCHEDULER_HOST_WORKERS_HPP
#define TANDEM_SCHEDULER_HOST_WORKERS_HPP

#include <chrono>
#include <functional>

namespace tandem {

// A job on a host thread that outlasts the call: the feeders' uploads and the
// collector's gathers on several devices. A thread made for the call starts
// its OpenMP team (the host copies' threads) with its first block: at n =
// 32768 on two GPUs the first panel's block went up in 5.1-8.0 ms that way
// against 3.3-4.9 on a lasting thread, whose team is kept from one call to
// the next (12 of 13 calls; docs/PERFORMANCE.md).
// An idle thread ends after kIdleLife; a forked child starts with none of the
// parent's. A thread runs with the CPU affinity and signal mask of the caller
// that made it, and the library must stay loaded while threads may wait. Used
// like std::thread: join() before destruction, or the destructor joins.
class HostWorker {
public:
    static constexpr std::chrono::milliseconds kIdleLife{10000};
    // How long idle threads wait from now on (tests shorten it).
    static void set_idle_life(std::chrono::milliseconds life);

    HostWorker() = default;
    // Runs `job` on an idle lasting thread, or on a new one when none is idle
    // (std::system_error if none can be made). `job` must not throw.
    explicit HostWorker(std::function<void()> job);
    HostWorker(HostWorker&& other) noexcept;
    HostWorker& operator=(HostWorker&& other) noexcept;
    HostWorker(const HostWorker&) = delete;
    HostWorker& operator=(const HostWorker&) = delete;
    ~HostWorker();

    bool joinable() const { return thread_ != nullptr; }
    // Waits for the job; its thread goes back to the idle ones.
    void join();

    struct Thread;

private:
    Thread* thread_ = nullptr;
};

}  // namespace tandem

#endif  // TANDEM_SCHEDULER_HOST_WORKERS_HPP
