// The probes' timing: one warm-up run, then the median of five, in ms of the
// host's clock (each run must wait for its own work).
#ifndef TANDEM_PROBES_PROBE_TIMING_HPP
#define TANDEM_PROBES_PROBE_TIMING_HPP

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

inline double median_ms(const std::function<void()>& run) {
    run();
    std::vector<double> t;
    for (int i = 0; i < 5; ++i) {
        const auto start = std::chrono::steady_clock::now();
        run();
        t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(t.begin(), t.end());
    return t[2];
}

#endif
