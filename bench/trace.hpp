// tandem's Report.timeline as a Chrome trace (chrome://tracing, ui.perfetto.dev):
// one "X" (complete) event per span, one thread per lane.
#ifndef TANDEM_BENCH_TRACE_HPP
#define TANDEM_BENCH_TRACE_HPP

#include <string>

#include "tandem/tandem.hpp"

namespace tandem_bench {

bool write_chrome_trace(const std::string& path, const tandem::Report& report, int n,
                        std::string& error);

}  // namespace tandem_bench

#endif
