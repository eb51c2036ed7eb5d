// sgetrs's two routes for factors in host memory, and the automatic backend's
// choice between them: for each n (--sizes, default 64,...,16384) and --nrhs
// right-hand sides (default 1), LAPACK's factors of a uniform random matrix
// solved by tandem::sgetrs with Backend::cpu (LAPACK where the factors are),
// Backend::gpu (the factors and B moved to the GPU and solved there) and the
// automatic backend, and Backend::cpu with OpenBLAS held at one thread, ms:
// the median of 9 calls after a first, each route's calls in a row (the
// automatic backend's first; a pause of 0.3 s before each series), then the
// median of 9 rounds in which the four take turns; with the automatic call's message. The first automatic call may
// calibrate the machine's model.
// Built as build/bench/tandem-getrs-routes.
#include <lapacke.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tandem/tandem.hpp"

extern "C" {
int openblas_get_num_threads(void);
void openblas_set_num_threads(int);
}

int main(int argc, char** argv) {
    std::vector<int> sizes = {64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};
    int nrhs = 1;
    for (int i = 1; i + 1 < argc; ++i) {
        if (std::string(argv[i]) == "--sizes") {
            sizes.clear();
            std::stringstream list(argv[i + 1]);
            for (std::string item; std::getline(list, item, ',');) sizes.push_back(std::atoi(item.c_str()));
        }
        if (std::string(argv[i]) == "--nrhs") nrhs = std::atoi(argv[i + 1]);
    }
    if (!tandem::gpu_available() || nrhs < 1) {
        std::fprintf(stderr, "needs a GPU and --nrhs >= 1\n");
        return 2;
    }
    std::mt19937_64 rng(20261125);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (const int n : sizes) {
        std::vector<float> factors(static_cast<size_t>(n) * n), b(static_cast<size_t>(n) * nrhs), x;
        for (float& v : factors) v = uniform(rng);
        for (float& v : b) v = uniform(rng);
        std::vector<int> ipiv(static_cast<size_t>(n));
        LAPACKE_sgetrf(LAPACK_COL_MAJOR, n, n, factors.data(), n, ipiv.data());
        tandem::Report report;
        // Route 1 is LAPACK with OpenBLAS held at one thread around the call.
        auto call = [&](int route) {
            static const tandem::Backend backends[4] = {tandem::Backend::cpu, tandem::Backend::cpu,
                                                        tandem::Backend::gpu,
                                                        tandem::Backend::automatic};
            tandem::Options options;
            options.backend = backends[route];
            x = b;
            const int threads = openblas_get_num_threads();
            const auto start = std::chrono::steady_clock::now();
            if (route == 1) openblas_set_num_threads(1);
            const int info = tandem::sgetrs('N', n, nrhs, factors.data(), n, ipiv.data(), x.data(),
                                            n, options, &report);
            if (route == 1) openblas_set_num_threads(threads);
            const double ms =
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
            if (info != 0) std::exit(1);
            return ms;
        };
        std::vector<double> times[4];
        auto median = [&](int route) {
            std::vector<double> t = times[route];
            std::sort(t.begin(), t.end());
            return t[t.size() / 2];
        };
        std::string automatic_says;
        // Before each series a pause, so that it starts with no threads still
        // spinning from the one before (OpenBLAS's spin for about 0.1 s).
        auto settle = [] { std::this_thread::sleep_for(std::chrono::milliseconds(300)); };
        for (const bool alternate : {false, true}) {
            for (std::vector<double>& t : times) t.clear();
            if (alternate) {
                settle();
                // The routes take turns: each is timed after another's kind of
                // work (OpenBLAS's or OpenMP's threads still spinning, caches).
                for (int route = 0; route < 4; ++route) call(route);
                for (int round = 0; round < 9; ++round)
                    for (int route = 0; route < 4; ++route) times[route].push_back(call(route));
            } else {
                for (int route = 3; route >= 0; --route) {  // the automatic backend first
                    settle();
                    call(route);
                    for (int i = 0; i < 9; ++i) times[route].push_back(call(route));
                    if (route == 3)
                        automatic_says = std::string(tandem::backend_name(report.backend)) + "; " +
                                         report.message;
                }
            }
            std::printf("n=%d nrhs=%d %s: cpu %.4f ms | cpu, OpenBLAS at 1 thread %.4f ms | "
                        "gpu %.4f ms | automatic %.4f ms\n",
                        n, nrhs, alternate ? "taking turns" : "each route in a row", median(0),
                        median(1), median(2), median(3));
        }
        std::printf("n=%d nrhs=%d automatic: %s\n", n, nrhs, automatic_says.c_str());
    }
    return 0;
}
