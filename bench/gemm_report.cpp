#include "bench/gemm_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

namespace tandem_bench {

double moved_bytes(const GemmShape& s) {  // A once, B, C read and written
    return 4.0 * (double(s.m) * s.k + double(s.k) * s.n + 2.0 * double(s.m) * s.n);
}

std::string gemm_rate(const GemmShape& s, const GemmResult& r) {
    char text[32];
    if (s.set == "skinny")
        std::snprintf(text, sizeof text, "%6.0f GB/s", r.gbs);
    else
        std::snprintf(text, sizeof text, "%6.1f TF", r.tflops);
    return text;
}

void print_gemm_summary(std::ostream& os, const std::vector<GemmShape>& shapes,
                        const std::vector<GemmResult>& results, double copy_gbs,
                        const std::vector<double>& copy_gbs_of_size) {
    char line[320];
    std::snprintf(line, sizeof line, "\n%-9s %6s %6s %5s | %-11s | %-28s %-11s %6s | %-37s %-11s %6s | %s\n",
                  "shape", "m", "n", "k", "cublas", "best of ours", "", "", "dispatched", "", "", "max rel err");
    os << line;
    for (size_t i = 0; i < shapes.size(); ++i) {
        const GemmResult *cublas = nullptr, *best = nullptr, *dispatched = nullptr;
        double worst = -1.0;
        for (const GemmResult& r : results) {
            if (r.shape != i) continue;
            if (std::isnan(r.rel_err) || r.rel_err > worst) worst = r.rel_err;  // NaN sticks
            if (r.variant == "cublas") cublas = &r;
            else if (r.variant.rfind("dispatch:", 0) == 0) dispatched = &r;
            else if (!best || r.seconds < best->seconds) best = &r;
        }
        auto speedup = [&](const GemmResult* r) {
            char text[16] = "";
            if (r && cublas) std::snprintf(text, sizeof text, "%5.2fx", cublas->seconds / r->seconds);
            return std::string(text);
        };
        const GemmShape& s = shapes[i];
        std::snprintf(line, sizeof line, "%-9s %6lld %6lld %5lld | %-11s | %-28s %-11s %6s | %-37s %-11s %6s | %.1e\n",
                      s.set.c_str(), s.m, s.n, s.k, cublas ? gemm_rate(s, *cublas).c_str() : "-",
                      best ? best->variant.c_str() : "-", best ? gemm_rate(s, *best).c_str() : "",
                      speedup(best).c_str(), dispatched ? dispatched->variant.c_str() : "-",
                      dispatched ? gemm_rate(s, *dispatched).c_str() : "", speedup(dispatched).c_str(), worst);
        os << line;
        if (s.set == "skinny" && best && copy_gbs > 0.0) {
            const double same_size = i < copy_gbs_of_size.size() ? copy_gbs_of_size[i] : 0.0;
            std::snprintf(line, sizeof line,
                          "%31s best of ours: %.0f%% of the device copy bandwidth, %.0f%% of a copy of as many "
                          "bytes\n",
                          "", 100.0 * best->gbs / copy_gbs, same_size > 0.0 ? 100.0 * best->gbs / same_size : 0.0);
            os << line;
        }
    }
}

bool write_gemm_csv(const std::string& path, const std::vector<GemmShape>& shapes,
               const std::vector<GemmResult>& results, std::string& error) {
    std::ofstream out(path);
    out << "set,m,n,k,variant,seconds,tflops,gbs,speedup_vs_cublas,max_rel_err_vs_cublas\n";
    for (const GemmResult& r : results) {
        double cublas = 0.0;
        for (const GemmResult& c : results)
            if (c.shape == r.shape && c.variant == "cublas") cublas = c.seconds;
        const GemmShape& s = shapes[r.shape];
        out << s.set << ',' << s.m << ',' << s.n << ',' << s.k << ',' << r.variant << ',' << r.seconds << ','
            << r.tflops << ',' << r.gbs << ',' << (cublas > 0 ? cublas / r.seconds : 0.0) << ','
            << r.rel_err << '\n';
    }
    if (!out.flush()) return error = "cannot write " + path, false;
    return true;
}

}  // namespace tandem_bench
