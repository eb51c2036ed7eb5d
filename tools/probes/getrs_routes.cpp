// sgetrs's two routes for factors in host memory, and the automatic backend's
// choice between them: for each n (--sizes, default 64,...,16384) and --nrhs
// right-hand sides (default 1), LAPACK's factors of a uniform random matrix
// solved by tandem::sgetrs with Backend::cpu (LAPACK where the factors are),
// Backend::gpu (the factors and B moved to the GPU and solved there) and the
// automatic backend, ms (one call, then the median of 5), with the automatic
// call's message. The first automatic call may calibrate the machine's model.
// Built as build/bench/tandem-getrs-routes.
#include <lapacke.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tandem/tandem.hpp"
#include "probe_timing.hpp"

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
        auto route = [&](tandem::Backend backend) {
            tandem::Options options;
            options.backend = backend;
            return median_ms([&] {
                x = b;
                const int info = tandem::sgetrs('N', n, nrhs, factors.data(), n, ipiv.data(),
                                                x.data(), n, options, &report);
                if (info != 0) std::exit(1);
            });
        };
        const double cpu = route(tandem::Backend::cpu);
        const double gpu = route(tandem::Backend::gpu);
        const double automatic = route(tandem::Backend::automatic);
        std::printf("n=%d nrhs=%d: cpu %.4f ms | gpu %.4f ms | automatic %.4f ms (%s) [%s]\n", n,
                    nrhs, cpu, gpu, automatic, tandem::backend_name(report.backend),
                    report.message.c_str());
    }
    return 0;
}
