// What the factorization's parts share to issue device work and log it for
// the timeline.
#ifndef TANDEM_SCHEDULER_STEP_CONTEXT_HPP
#define TANDEM_SCHEDULER_STEP_CONTEXT_HPP

#include <vector>

#include "scheduler/blocking_plan.hpp"
#include "scheduler/device.hpp"

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
