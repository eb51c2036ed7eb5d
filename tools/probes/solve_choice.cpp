// Build: g++ -O2 -std=c++17 -fopenmp -Iinclude tools/probes/solve_choice.cpp -o build/solve_choice
//          -Lbuild -ltandem -Wl,-rpath,$PWD/build -lopenblas   (one line)
// Run:   build/solve_choice [n=65536] [repeats=3]
//
// Factors from several GPUs are in the caller's array when sgetrf returns. Where should sgetrs solve
// with them: on the CPU (LAPACK, nothing to move) or on one GPU (upload the n x n factors, then two
// triangular solves there)? This factors a random matrix on two GPUs through the public API, then times
// tandem::sgetrs both ways for 1 and 16 right-hand sides (medians of `repeats` calls) and checks each
// solution's residual ||b - A x||_inf / (||A||_inf ||x||_inf n eps).
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tandem/tandem.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Uniform in [-1, 1], one simple generator per column (parallel, reproducible).
void fill(std::vector<float>& a, int64_t rows, int64_t cols, uint64_t seed) {
#pragma omp parallel for schedule(static)
    for (int64_t j = 0; j < cols; ++j) {
        uint64_t s = seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(j) * 0xD1B54A32D192ED03ull + 1;
        for (int64_t i = 0; i < rows; ++i) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            a[static_cast<size_t>(j * rows + i)] = static_cast<float>((s >> 40) * (2.0 / 16777216.0) - 1.0);
        }
    }
}

// ||A||_inf: the largest row sum (threads over row ranges, columns contiguous).
double inf_norm(int64_t n, const std::vector<float>& a) {
    double norm = 0.0;
#pragma omp parallel for reduction(max : norm) schedule(static)
    for (int64_t i0 = 0; i0 < n; i0 += 256) {
        const int64_t i1 = std::min(n, i0 + 256);
        std::vector<double> sums(static_cast<size_t>(i1 - i0), 0.0);
        for (int64_t j = 0; j < n; ++j)
            for (int64_t i = i0; i < i1; ++i) sums[i - i0] += std::fabs(a[static_cast<size_t>(j * n + i)]);
        for (double v : sums) norm = std::max(norm, v);
    }
    return norm;
}

double residual(int64_t n, int64_t nrhs, const std::vector<float>& a, double a_norm,
                const std::vector<float>& x, const std::vector<float>& b) {
    std::vector<float> r = b;  // r = b - A x
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, nrhs, n, -1.0f, a.data(), n, x.data(), n,
                1.0f, r.data(), n);
    double r_norm = 0.0, x_norm = 0.0;
    for (float v : r) r_norm = std::max(r_norm, double(std::fabs(v)));
    for (float v : x) x_norm = std::max(x_norm, double(std::fabs(v)));
    return r_norm / (a_norm * x_norm * double(n) * 5.96e-8);
}

}  // namespace

int main(int argc, char** argv) {
    const int64_t n = argc > 1 ? std::atoll(argv[1]) : 65536;
    const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
    const int gpus = tandem::gpu_count();
    if (gpus < 2) {
        std::printf("solve_choice: needs two GPUs (%d visible)\n", gpus);
        return 1;
    }
    std::vector<float> a0(static_cast<size_t>(n * n));
    fill(a0, n, n, 1);
    const double a_norm = inf_norm(n, a0);
    std::vector<float> lu = a0;
    std::vector<int> ipiv(static_cast<size_t>(n));
    tandem::Options two;
    two.backend = tandem::Backend::gpu;
    two.num_devices = 2;
    auto t0 = std::chrono::steady_clock::now();
    int info = tandem::sgetrf(n, n, lu.data(), n, ipiv.data(), two);
    std::printf("n=%lld sgetrf on 2 GPUs: %.3f s, info %d\n", (long long)n, seconds_since(t0), info);
    if (info != 0) return 1;
    tandem::Options cpu, one_gpu;
    cpu.backend = tandem::Backend::cpu;
    one_gpu.backend = tandem::Backend::gpu;
    one_gpu.num_devices = 1;
    bool ok = true;
    for (int64_t nrhs : {1, 16}) {
        std::vector<float> b(static_cast<size_t>(n * nrhs));
        fill(b, n, nrhs, 2 + nrhs);
        for (const auto& [name, options] : {std::pair{"CPU (LAPACK)", cpu}, std::pair{"one GPU (upload + solve)", one_gpu}}) {
            std::vector<double> times;
            std::vector<float> x;
            for (int r = 0; r < repeats; ++r) {
                x = b;
                t0 = std::chrono::steady_clock::now();
                tandem::Report report;
                if (tandem::sgetrs('N', n, nrhs, lu.data(), n, ipiv.data(), x.data(), n, options, &report) != 0)
                    ok = false;
                times.push_back(seconds_since(t0));
            }
            std::sort(times.begin(), times.end());
            const double res = residual(n, nrhs, a0, a_norm, x, b);
            ok = ok && std::isfinite(res) && res < 30.0;
            std::printf("n=%lld nrhs=%lld sgetrs on %-26s median %.3f s (min %.3f, max %.3f), residual %.3g\n",
                        (long long)n, (long long)nrhs, name, times[times.size() / 2], times.front(),
                        times.back(), res);
            std::fflush(stdout);
        }
    }
    std::printf("%s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
