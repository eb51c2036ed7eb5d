// The solve of several devices' factors taken apart on one GPU: an n x n
// matrix (--n, default 16384) factored by HybridLU on GPU 0 in device panels
// of --nb columns (default 1024), then op(A) X = B for --nrhs right-hand sides
// (default 1), ms (medians of 5):
//   whole       Device::solve: the two TRSMs over the whole factors (one device)
//   by blocks   HybridLU::solve_by_block_columns: one call a block column and
//               triangle, X's rows up and back through pinned host memory each
//               time, as between devices (all of them here on one)
//   upload      the factors uploaded from the caller's array, then `whole`:
//               the route of factors in host memory
// and each answer's backward error ||b - op(A) x||_inf / (||A||_inf ||x||_inf
// n eps) for the first right-hand side, in double.
// Built with the CUDA backend as build/bench/tandem-block-solve-parts.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "scheduler/gpu_backend.hpp"
#include "scheduler/hybrid_lu.hpp"
#include "probe_timing.hpp"

int main(int argc, char** argv) {
    int64_t n = 16384, nrhs = 1;
    int nb = 1024;
    for (int i = 1; i + 1 < argc; ++i) {
        if (std::string(argv[i]) == "--n") n = std::atoll(argv[i + 1]);
        if (std::string(argv[i]) == "--nrhs") nrhs = std::atoll(argv[i + 1]);
        if (std::string(argv[i]) == "--nb") nb = std::atoi(argv[i + 1]);
    }
    if (n < 1 || nrhs < 1 || nb < 1 || tandem::gpu::device_count() < 1) {
        std::fprintf(stderr, "needs --n, --nrhs and --nb >= 1 and a GPU\n");
        return 2;
    }
    std::mt19937_64 rng(20261125);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> a(static_cast<size_t>(n * n)), b(static_cast<size_t>(n * nrhs));
    for (float& v : a) v = uniform(rng);
    for (float& v : b) v = uniform(rng);
    const std::vector<float> original = a;
    double a_norm = 0.0;  // ||A||_inf, for 'N'
    {
        std::vector<double> rows(static_cast<size_t>(n), 0.0);
        for (int64_t j = 0; j < n; ++j)
            for (int64_t i = 0; i < n; ++i) rows[i] += std::fabs(double(original[j * n + i]));
        for (const double r : rows) a_norm = std::max(a_norm, r);
    }
    // The first right-hand side's backward error; for 'T' the norm is
    // ||A^T||_inf = ||A||_1.
    auto error_of = [&](char trans, const std::vector<float>& x) {
        std::vector<double> r(b.begin(), b.begin() + n);
        double norm = a_norm;
        if (trans == 'N') {
            for (int64_t j = 0; j < n; ++j)
                for (int64_t i = 0; i < n; ++i) r[i] -= double(original[j * n + i]) * x[j];
        } else {
            norm = 0.0;
            for (int64_t j = 0; j < n; ++j) {
                double dot = 0.0, column = 0.0;
                for (int64_t i = 0; i < n; ++i) {
                    dot += double(original[j * n + i]) * x[i];
                    column += std::fabs(double(original[j * n + i]));
                }
                r[j] -= dot;
                norm = std::max(norm, column);
            }
        }
        double residual = 0.0, x_norm = 0.0;
        for (int64_t i = 0; i < n; ++i) {
            residual = std::max(residual, std::fabs(r[i]));
            x_norm = std::max(x_norm, std::fabs(double(x[i])));
        }
        return residual / (norm * x_norm * double(n) * std::ldexp(1.0, -24));
    };

    try {
        auto lock = tandem::gpu::lock_devices();
        tandem::Device& device = tandem::gpu::kept_device(0, {});
        tandem::HybridSettings settings;
        settings.block_size = nb;
        settings.sites.assign(static_cast<size_t>((n + nb - 1) / nb), tandem::PanelSite::device);
        tandem::HybridLU lu({&device}, settings);
        std::vector<int> ipiv(static_cast<size_t>(n));
        tandem::Report report;
        const int info = lu.factor(n, n, a.data(), n, ipiv.data(), report);
        if (info != 0) {
            std::fprintf(stderr, "factorization info %d\n", info);
            return 1;
        }
        for (const char trans : {'N', 'T'}) {
            std::vector<float> whole, blocks, x;
            const double whole_ms = median_ms([&] {
                whole = b;
                lu.solve(trans, nrhs, whole.data(), n);
            });
            const double blocks_ms = median_ms([&] {
                blocks = b;
                lu.solve_by_block_columns(trans, nrhs, blocks.data(), n);
            });
            const double upload_ms = median_ms([&] {
                x = b;
                device.upload(tandem::Queue::transfer, a.data(), n, 0, 0, n, n);
                device.synchronize();
                device.solve(trans, n, nrhs, ipiv.data(), x.data(), n);
            });
            std::printf(
                "n=%lld nb=%d nrhs=%lld trans=%c: whole %.3f ms (error %.2g) | by blocks %.3f ms "
                "(error %.2g) | upload %.3f ms (error %.2g)\n",
                static_cast<long long>(n), nb, static_cast<long long>(nrhs), trans, whole_ms,
                error_of(trans, whole), blocks_ms, error_of(trans, blocks), upload_ms,
                error_of(trans, x));
        }
    } catch (const tandem::Error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    return 0;
}
