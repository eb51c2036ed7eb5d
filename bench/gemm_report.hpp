// The results of `tandem-bench gemm` (bench/gemm_bench.cpp): the shapes, one
// measurement per shape and variant, the compact side-by-side table printed at
// the end, and the CSV file. No CUDA here.
#ifndef TANDEM_BENCH_GEMM_REPORT_HPP
#define TANDEM_BENCH_GEMM_REPORT_HPP

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace tandem_bench {

struct GemmShape {
    std::string set;  // lu, lookahead, inverse, square, skinny
    long long m, n, k;
};

struct GemmResult {
    size_t shape;         // index into the shape list
    std::string variant;  // "dispatch:<name>" for the dispatcher's choice
    double seconds = 0.0, tflops = 0.0, gbs = 0.0;
    double rel_err = -1.0;  // max |C - C_cublas| / max |C_cublas|; -1: not compared
};

// Bytes a product must move at least: A once, B, C read and written.
double moved_bytes(const GemmShape& s);

// "  38.2 TF" for most shapes, "  3812 GB/s" for the tall-skinny ones.
std::string gemm_rate(const GemmShape& s, const GemmResult& r);

// One row per shape: cuBLAS, our fastest variant and the dispatcher's choice
// (rate and speedup over cuBLAS), and the largest difference from cuBLAS's C;
// tall-skinny rows also as a share of copy_gbs (device-to-device copy
// bandwidth of a large copy, read + write; 0 when not measured) and of
// copy_gbs_of_size[shape] (that of a copy moving as many bytes as the shape).
void print_gemm_summary(std::ostream& os, const std::vector<GemmShape>& shapes,
                        const std::vector<GemmResult>& results, double copy_gbs,
                        const std::vector<double>& copy_gbs_of_size);

// One row per measurement; false with `error` set when the file cannot be written.
bool write_gemm_csv(const std::string& path, const std::vector<GemmShape>& shapes,
                    const std::vector<GemmResult>& results, std::string& error);

}  // namespace tandem_bench

#endif  // TANDEM_BENCH_GEMM_REPORT_HPP
