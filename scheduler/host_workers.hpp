#ifndef TANDEM_SCHEDULER_HOST_WORKERS_HPP
#define TANDEM_SCHEDULER_HOST_WORKERS_HPP

#include <functional>

namespace tandem {

// A job on a host thread that outlasts the call: the feeders' uploads and the
// collector's gathers on several devices. A thread made for the call starts
// its OpenMP team (the host copies' threads) with its first block: at n =
// 32768 on two GPUs the first panel's block went up in 5.1-8.0 ms that way
// against 3.3-4.9 on a lasting thread, whose team is kept from one call to
// the next (12 of 13 calls; docs/PERFORMANCE.md).
// An idle thread ends after a while (kIdleLife); a forked child starts with
// none of the parent's. Used like std::thread: join() before destruction, or
// the destructor joins.
class HostWorker {
public:
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
