// Test matrices and the accuracy check of the benchmark.
#ifndef TANDEM_BENCH_MATRIX_DATA_HPP
#define TANDEM_BENCH_MATRIX_DATA_HPP

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tandem_bench {

// A counter-based generator: splitmix64 mixes a 64-bit value; uniform_pm1 is
// uniform in [-1, 1) from 24 random bits (exact in float), a pure function of
// (stream, index) so that fills can be parallel and repeatable.
std::uint64_t splitmix64(std::uint64_t z);
float uniform_pm1(std::uint64_t stream, std::uint64_t index);

// How the entries of a test matrix are drawn.
//   uniform:  uniform in [-1, 1) (uniform_pm1).
//   gaussian: standard normal (Box-Muller on two counters per entry), rounded to float.
enum class EntryDistribution { uniform, gaussian };

// `count` entries, each a pure function of (stream, index), so runs are
// repeatable and the fill can be parallel.
std::vector<float> random_entries(std::size_t count, std::uint64_t stream,
                                  EntryDistribution distribution);

// The stream of the sweep's matrix at size n under `seed`.
std::uint64_t matrix_stream(std::uint64_t seed, int n);

// The n x n column-major matrix of the sweep at size n: entries uniform in
// [-1, 1], a pure function of (seed, n, index).
std::vector<float> random_matrix(int n, std::uint64_t seed);

// Scaled residual of an LU factorization, estimated in O(n^2).
//
// LAPACK's test ratio is ||P A - L U||_1 / (n ||A||_1 eps), eps = 2^-24
// (slamch('E')); forming P A - L U costs O(n^3). Here ||P A - L U||_1 is
// estimated instead with Hager's method as refined by Higham (LAPACK's slacn2,
// the estimator behind its condition numbers): a few products of E = P A - L U
// and of E^T with vectors, each O(n^2), computed in double from the float data.
// Each product gives ||E x||_1 / ||x||_1 <= ||E||_1, so the estimate never
// exceeds the true ratio, and it is usually within a factor of 3 of it. (One
// random x alone would be weaker by about sqrt(n) and hide errors at large n.)
class LuResidualEstimator {
public:
    // `a` is the original column-major matrix (ld n); it must outlive this object.
    LuResidualEstimator(int n, const float* a);

    // The estimated ratio for the factors of sgetrf (L unit lower and U upper in
    // `factors`, ld n) and its 1-based pivots. NaN when the factors are not
    // finite; +infinity when a pivot index is out of range.
    double estimate(const float* factors, const int* ipiv) const;

private:
    int n_;
    const float* a_;
    double a_norm1_ = 0.0;
};

// Backward error of a computed solution X of A X = B, as LAPACK's test of
// xGESV measures it: the largest over the columns j of
//     ||b_j - A x_j||_inf / (||A||_inf ||x_j||_inf n eps),   eps = 2^-24,
// computed in double from the float data (O(n^2) per column). A backward
// stable solve gives O(1); NaN when X is not finite.
class SolveBackwardError {
public:
    // `a` is the original column-major matrix (ld n); it must outlive this object.
    SolveBackwardError(int n, const float* a);

    // `b` the original right-hand sides and `x` the solution, both n x nrhs
    // column-major with ld n.
    double of(int nrhs, const float* b, const float* x) const;

private:
    int n_;
    const float* a_;
    double a_norm_inf_ = 0.0;
};

}  // namespace tandem_bench

#endif
