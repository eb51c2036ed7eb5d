// The solve after a factorization on several devices, taken apart on one GPU:
// an n x n matrix (--n, default 16384) factored by HybridLU on GPU 0 (1024-wide
// device panels), then op(A) X = B for --nrhs right-hand sides (default 1), ms
// (medians of 5):
//   whole       Device::solve: the two TRSMs over the whole factors (one device)
//   by blocks   HybridLU::solve_by_block_columns: one call a block column and
//               triangle, X up and down through pinned host memory each time
//               (what several devices do, here all on one)
//   upload      the factors uploaded from the caller's array, then `whole`:
//               what several devices did when the factors left them
//   LAPACK      sgetrs on the host's copy of the factors
// and the largest difference between the `by blocks` and `whole` answers,
// relative to the largest entry of X.
// Built with the CUDA backend as build/bench/tandem-block-solve-parts.
#include <lapacke.h>

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

namespace {

double median_ms(const std::function<void()>& run) {
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

}  // namespace

int main(int argc, char** argv) {
    int64_t n = 16384, nrhs = 1;
    for (int i = 1; i + 1 < argc; ++i) {
        if (std::string(argv[i]) == "--n") n = std::atoll(argv[i + 1]);
        if (std::string(argv[i]) == "--nrhs") nrhs = std::atoll(argv[i + 1]);
    }
    if (n < 1 || nrhs < 1 || tandem::gpu::device_count() < 1) {
        std::fprintf(stderr, "needs --n >= 1, --nrhs >= 1 and a GPU\n");
        return 2;
    }
    std::mt19937_64 rng(20261125);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> a(static_cast<size_t>(n * n)), b(static_cast<size_t>(n * nrhs));
    for (float& v : a) v = uniform(rng);
    for (float& v : b) v = uniform(rng);

    try {
        auto lock = tandem::gpu::lock_devices();
        tandem::Device& device = tandem::gpu::kept_device(0, {});
        tandem::HybridSettings settings;
        settings.block_size = 1024;
        settings.sites.assign(static_cast<size_t>((n + 1023) / 1024), tandem::PanelSite::device);
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
            const double lapack_ms = median_ms([&] {
                x = b;
                LAPACKE_sgetrs(LAPACK_COL_MAJOR, trans, static_cast<int>(n),
                               static_cast<int>(nrhs), a.data(), static_cast<int>(n), ipiv.data(),
                               x.data(), static_cast<int>(n));
            });
            double largest = 0.0, difference = 0.0;
            for (size_t i = 0; i < whole.size(); ++i) {
                largest = std::max(largest, std::fabs(double(whole[i])));
                difference = std::max(difference, std::fabs(double(whole[i]) - blocks[i]));
            }
            std::printf(
                "n=%lld nrhs=%lld trans=%c: whole %.3f ms | by blocks %.3f ms | upload %.3f ms | "
                "LAPACK %.3f ms | by blocks - whole %.2e of max |x|\n",
                static_cast<long long>(n), static_cast<long long>(nrhs), trans, whole_ms,
                blocks_ms, upload_ms, lapack_ms, difference / std::max(largest, 1e-30));
        }
    } catch (const tandem::Error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    return 0;
}
