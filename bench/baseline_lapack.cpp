#include <cstring>
#include <stdexcept>
#include <string>

#include <lapacke.h>

#include "bench/baselines.hpp"
#include "bench/timing.hpp"

namespace tandem_bench {

std::vector<double> time_lapack_sgetrf(int n, const float* original, float* factors, int* ipiv,
                                       int repeats) {
    const std::size_t bytes = static_cast<std::size_t>(n) * n * sizeof(float);
    std::vector<double> seconds;
    warm_up_then_time(repeats, [&](bool timed) {
        std::memcpy(factors, original, bytes);
        const double start = wall_seconds();
        // The _work variant: LAPACKE_sgetrf would first scan A for NaNs, an
        // O(n^2) pass that is not part of the factorization.
        const lapack_int info = LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, n, n, factors, n, ipiv);
        const double stop = wall_seconds();
        if (info != 0) {
            throw std::runtime_error("LAPACKE_sgetrf_work returned info = " + std::to_string(info));
        }
        if (timed) seconds.push_back(stop - start);
    });
    return seconds;
}

}  // namespace tandem_bench
