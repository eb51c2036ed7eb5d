// What the factorization's parts share to issue device work and log it for
// the timeline.
#ifndef TANDEM_SCHEDULER_STEP_CONTEXT_HPP
#define TANDEM_SCHEDULER_STEP_CONTEXT_HPP

#include <chrono>
#include <vector>

#include "scheduler/blocking_plan.hpp"
#include "scheduler/device.hpp"
#include "tandem/tandem.hpp"

namespace tandem {

// A device phase bracketed by two events; turned into a TimelineSpan once the
// devices are idle and the events can be read.
struct DeviceSpan {
    int device;
    Queue queue;
    const char* phase;
    int step;
    Event begin, end;
};

struct StepContext {
    std::vector<Device*>& devices;
    const BlockingPlan& plan;
    std::vector<DeviceSpan>& spans;
    // What the host itself spends its time on, in seconds since t0 (about the
    // devices' time origin): CPU panels (lane "cpu"), and its side of the
    // transfers and its waits for the devices (lane "host").
    std::vector<TimelineSpan> host_spans = {};
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();

    double host_seconds() const { return seconds_at(std::chrono::steady_clock::now()); }
    double seconds_at(std::chrono::steady_clock::time_point t) const {
        return std::chrono::duration<double>(t - t0).count();
    }
    // Run `work` on the host, logged as `phase` of `step` in `lane`.
    template <class Work>
    void host_timed(const char* lane, const char* phase, int step, Work&& work) {
        const double start = host_seconds();
        work();
        host_spans.push_back({lane, phase, step, start, host_seconds()});
    }

    // Issue `work` on device d's queue q, bracketed by events for the timeline.
    template <class Work>
    void timed(int d, Queue q, const char* phase, int step, Work&& work) {
        const Event begin = devices[d]->record(q);
        work(*devices[d]);
        spans.push_back({d, q, phase, step, begin, devices[d]->record(q)});
    }
};

}  // namespace tandem

#endif  // TANDEM_SCHEDULER_STEP_CONTEXT_HPP
