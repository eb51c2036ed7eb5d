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
    return time_restored_runs(
        repeats, [&] { std::memcpy(factors, original, bytes); },
        [&] {
            // The _work variant: LAPACKE_sgetrf would first scan A for NaNs, an
            // O(n^2) pass that is not part of the factorization.
            const lapack_int info = LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, n, n, factors, n, ipiv);
            if (info != 0) {
                throw std::runtime_error("LAPACKE_sgetrf_work returned info = " + std::to_string(info));
            }
        });
}

std::vector<double> time_lapack_sgesv(int n, int nrhs, const float* a, const float* b,
                                      float* factors, float* x, int* ipiv, int repeats) {
    const std::size_t a_bytes = static_cast<std::size_t>(n) * n * sizeof(float);
    const std::size_t b_bytes = static_cast<std::size_t>(n) * nrhs * sizeof(float);
    return time_restored_runs(
        repeats,
        [&] {
            std::memcpy(factors, a, a_bytes);
            std::memcpy(x, b, b_bytes);
        },
        [&] {
            // LAPACKE_sgesv without its NaN scan of A and B (see time_lapack_sgetrf).
            const lapack_int info =
                LAPACKE_sgesv_work(LAPACK_COL_MAJOR, n, nrhs, factors, n, ipiv, x, n);
            if (info != 0) {
                throw std::runtime_error("LAPACKE_sgesv_work returned info = " + std::to_string(info));
            }
        });
}

}  // namespace tandem_bench
