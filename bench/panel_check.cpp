#include "bench/panel_check.hpp"

#include "bench/matrix_data.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>

namespace tandem_bench {
namespace {

constexpr double kEps = 0x1.0p-24;  // LAPACK's slamch('E') for float

}  // namespace

std::vector<float> random_panel(int rows, int width, std::uint64_t seed) {
    const std::int64_t count = static_cast<std::int64_t>(rows) * width;
    std::vector<float> a(static_cast<std::size_t>(count));
    const std::uint64_t stream = splitmix64(seed);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < count; ++i)
        a[static_cast<std::size_t>(i)] = uniform_pm1(stream, i);
    return a;
}

PanelResidual::PanelResidual(int rows, int width, const float* a, std::uint64_t seed)
    : rows_(rows),
      width_(width),
      x_(static_cast<std::size_t>(width)),
      a_times_x_(static_cast<std::size_t>(rows), 0.0) {
    const std::uint64_t stream = splitmix64(seed);
    for (int j = 0; j < width; ++j) {
        x_[j] = uniform_pm1(stream, static_cast<std::uint64_t>(j));
        x_norm1_ += std::fabs(x_[j]);
    }
    for (int j = 0; j < width; ++j) {
        const float* column = a + static_cast<std::size_t>(j) * rows;
        double sum = 0.0;
        for (int i = 0; i < rows; ++i) {
            a_times_x_[i] += static_cast<double>(column[i]) * x_[j];
            sum += std::fabs(column[i]);
        }
        a_norm1_ = std::max(a_norm1_, sum);
    }
}

double PanelResidual::estimate(const float* factors, const int* ipiv) const {
    std::vector<double> pax = a_times_x_;
    for (int k = 0; k < width_; ++k) {
        if (ipiv[k] < 1 || ipiv[k] > rows_) return std::numeric_limits<double>::infinity();
        std::swap(pax[k], pax[static_cast<std::size_t>(ipiv[k] - 1)]);
    }
    // u = U x (width), then pax -= L u with L unit lower trapezoidal (rows x width).
    std::vector<double> u(static_cast<std::size_t>(width_), 0.0);
    for (int j = 0; j < width_; ++j) {
        const float* column = factors + static_cast<std::size_t>(j) * rows_;
        for (int k = 0; k <= j; ++k) u[k] += static_cast<double>(column[k]) * x_[j];
    }
    for (int k = 0; k < width_; ++k) {
        const float* column = factors + static_cast<std::size_t>(k) * rows_;
        pax[k] -= u[k];
        for (int i = k + 1; i < rows_; ++i) pax[i] -= static_cast<double>(column[i]) * u[k];
    }
    double norm = 0.0;
    for (const double r : pax) norm += std::fabs(r);
    if (!std::isfinite(norm)) return std::numeric_limits<double>::quiet_NaN();
    const double scale = rows_ * a_norm1_ * x_norm1_ * kEps;
    return scale > 0.0 ? norm / scale
                       : (norm == 0.0 ? 0.0 : std::numeric_limits<double>::infinity());
}

std::string PivotComparison::describe() const {
    if (first_difference < 0) return "equal";
    return (near_tie ? "near tie @" : "DIFFER @") + std::to_string(first_difference);
}

PivotComparison compare_pivots(int width, const float* lu, const int* ipiv,
                               const float* reference_lu, const int* reference_ipiv, int ld) {
    PivotComparison c;
    for (int k = 0; k < width; ++k) {
        if (ipiv[k] == reference_ipiv[k]) continue;
        const std::size_t diagonal = static_cast<std::size_t>(k) * ld + k;
        const double u = std::fabs(lu[diagonal]);
        const double reference_u = std::fabs(reference_lu[diagonal]);
        c.first_difference = k;
        c.near_tie = std::fabs(u - reference_u) <= 1e-4 * std::max(u, reference_u);
        break;
    }
    return c;
}

}  // namespace tandem_bench
