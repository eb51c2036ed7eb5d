// The panels of `tandem-bench panel` and the checks of their factors: a cheap
// residual estimate and the comparison of pivots with LAPACK's.
#ifndef TANDEM_BENCH_PANEL_CHECK_HPP
#define TANDEM_BENCH_PANEL_CHECK_HPP

#include <cstdint>
#include <string>
#include <vector>

namespace tandem_bench {

// LAPACK's threshold for its test ratios; the estimate below never exceeds the ratio.
constexpr double kResidualLimit = 30.0;

// The rows x width column-major panel (ld = rows) of the benchmark: entries
// uniform in [-1, 1), a pure function of (seed, index), filled in parallel.
std::vector<float> random_panel(int rows, int width, std::uint64_t seed);

// Scaled residual of an LU factorization of a rows x width panel (rows >= width),
// in O(rows * width) with one random vector x (entries uniform in [-1, 1]), in double:
//     ||P A x - L (U x)||_1 / (rows ||A||_1 ||x||_1 eps),   eps = 2^-24.
// It is at most LAPACK's ||P A - L U||_1 / (rows ||A||_1 eps); a wrong pivot or a
// wrong block of L or U still shows far above 30.
class PanelResidual {
public:
    // `a` is the original panel (ld rows); it must outlive this object.
    PanelResidual(int rows, int width, const float* a, std::uint64_t seed);

    // The estimate for sgetrf's factors (ld rows) and 1-based pivots; NaN when
    // the factors are not finite, +infinity when a pivot is out of range.
    double estimate(const float* factors, const int* ipiv) const;

private:
    int rows_;
    int width_;
    std::vector<double> x_;
    std::vector<double> a_times_x_;  // A x, before the row interchanges
    double a_norm1_ = 0.0;
    double x_norm1_ = 0.0;
};

// Where two factorizations' pivots first differ. Both pick the largest |value|,
// but round differently; at a near tie (the two |U(k,k)| equal to 1e-4) either
// row is right and the rest of the pivots may differ.
struct PivotComparison {
    int first_difference = -1;  // column, -1 when all pivots are equal
    bool near_tie = false;

    bool acceptable() const { return first_difference < 0 || near_tie; }
    std::string describe() const;  // "equal", "near tie @k" or "DIFFER @k"
};

PivotComparison compare_pivots(int width, const float* lu, const int* ipiv,
                               const float* reference_lu, const int* reference_ipiv, int ld);

}  // namespace tandem_bench

#endif
