#include "bench/trace.hpp"

#include <cstdio>
#include <fstream>
#include <vector>

namespace tandem_bench {
namespace {

std::string json_string(const std::string& text) {
    std::string quoted = "\"";
    for (const char c : text) {
        switch (c) {
            case '"': quoted += "\\\""; break;
            case '\\': quoted += "\\\\"; break;
            case '\n': quoted += "\\n"; break;
            case '\t': quoted += "\\t"; break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    char escaped[8];
                    std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
                    quoted += escaped;
                } else {
                    quoted += c;
                }
        }
    }
    return quoted + "\"";
}

// Trace timestamps are microseconds; keep nanosecond resolution.
std::string microseconds(double seconds) {
    char text[32];
    std::snprintf(text, sizeof text, "%.3f", seconds * 1e6);
    return text;
}

}  // namespace

bool write_chrome_trace(const std::string& path, const tandem::Report& report, int n,
                        std::string& error) {
    // Lanes become threads, numbered in order of first appearance, so the CPU
    // lane (whose first panel starts the factorization) comes out on top.
    std::vector<std::string> lanes;
    auto lane_index = [&lanes](const std::string& lane) {
        for (std::size_t i = 0; i < lanes.size(); ++i) {
            if (lanes[i] == lane) return static_cast<int>(i);
        }
        lanes.push_back(lane);
        return static_cast<int>(lanes.size() - 1);
    };

    std::string events;
    for (const tandem::TimelineSpan& span : report.timeline) {
        const int tid = lane_index(span.lane);
        // A CPU panel's shape and team: how its threads spent the factorization.
        const std::string team =
            span.team_threads > 0
                ? ",\"rows\":" + std::to_string(span.panel_rows) +
                      ",\"columns\":" + std::to_string(span.panel_columns) +
                      ",\"team threads\":" + std::to_string(span.team_threads) +
                      ",\"team us\":" + microseconds(span.team_seconds) +
                      ",\"least thread cpu us\":" + microseconds(span.least_thread_cpu_seconds) +
                      ",\"involuntary switches\":" + std::to_string(span.involuntary_switches)
                : std::string();
        events += ",\n  {\"name\":" + json_string(span.phase) + ",\"cat\":" + json_string(span.lane) +
                  ",\"ph\":\"X\",\"ts\":" + microseconds(span.start) +
                  ",\"dur\":" + microseconds(span.end - span.start) + ",\"pid\":0,\"tid\":" +
                  std::to_string(tid) + ",\"args\":{\"step\":" + std::to_string(span.step) + team +
                  "}}";
    }

    std::string process = "tandem sgetrf n=" + std::to_string(n) + " backend " +
                          tandem::backend_name(report.backend) +
                          (report.device.empty() ? "" : " (" + report.device + ")") + ", call " +
                          microseconds(report.seconds) + " us";
    std::string metadata = "  {\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"tid\":0,\"args\":{\"name\":" +
                           json_string(process) + "}}";
    if (!report.plan.empty())  // the plan, as an instant event at time zero
        events += ",\n  {\"name\":\"plan\",\"ph\":\"i\",\"s\":\"g\",\"ts\":0,\"pid\":0,\"tid\":0,"
                  "\"args\":{\"plan\":" + json_string(report.plan) + "}}";
    for (std::size_t i = 0; i < lanes.size(); ++i) {
        const std::string tid = std::to_string(i);
        metadata += ",\n  {\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":" + tid +
                    ",\"args\":{\"name\":" + json_string(lanes[i]) + "}}";
        metadata += ",\n  {\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":0,\"tid\":" + tid +
                    ",\"args\":{\"sort_index\":" + tid + "}}";
    }

    std::ofstream out(path);
    if (!out) {
        error = "cannot open " + path + " for writing";
        return false;
    }
    out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n" << metadata << events << "\n]}\n";
    out.close();
    if (!out) {
        error = "error writing " + path;
        return false;
    }
    return true;
}

}  // namespace tandem_bench
