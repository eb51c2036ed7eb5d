#include "bench/matrix_data.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>

namespace tandem_bench {

std::uint64_t splitmix64(std::uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Uniform in [-1, 1) from 24 random bits: every value is exact in float.
float uniform_pm1(std::uint64_t stream, std::uint64_t index) {
    const std::uint64_t bits = splitmix64(stream ^ splitmix64(index)) >> 40;
    return static_cast<float>(bits) * (2.0f / 16777216.0f) - 1.0f;
}

namespace {

// Box-Muller on two counters of the entry (2 index and 2 index + 1), each
// giving 53 random bits: u1 in (0, 1] keeps the logarithm finite.
float standard_normal(std::uint64_t stream, std::uint64_t index) {
    const double scale = std::ldexp(1.0, -53);
    const std::uint64_t bits1 = splitmix64(stream ^ splitmix64(2 * index)) >> 11;
    const std::uint64_t bits2 = splitmix64(stream ^ splitmix64(2 * index + 1)) >> 11;
    const double u1 = static_cast<double>(bits1 + 1) * scale;
    const double u2 = static_cast<double>(bits2) * scale;
    const double two_pi = 6.283185307179586476925286766559;
    return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(two_pi * u2));
}

const float* column(const float* m, int n, int j) { return m + static_cast<std::size_t>(j) * n; }

// Products with a column-major n x n matrix in double. M x is done by blocks of
// rows, so each thread reads contiguous pieces of the columns and owns its part
// of y; M^T x is one dot product per column.
constexpr int row_block = 256;

enum class Part { full, upper, unit_lower };  // of A, or of the factors: U, L

// y = M x, M the `part` of m.
void times(Part part, int n, const float* m, const double* x, double* y) {
    const int blocks = (n + row_block - 1) / row_block;
#pragma omp parallel for schedule(dynamic)
    for (int b = 0; b < blocks; ++b) {
        const int r0 = b * row_block, r1 = std::min(n, r0 + row_block);
        for (int i = r0; i < r1; ++i) y[i] = part == Part::unit_lower ? x[i] : 0.0;
        const int j_begin = part == Part::upper ? r0 : 0;
        const int j_end = part == Part::unit_lower ? r1 - 1 : n;
        for (int j = j_begin; j < j_end; ++j) {
            const float* c = column(m, n, j);
            const double xj = x[j];
            if (xj == 0.0) continue;
            const int i_begin = part == Part::unit_lower ? std::max(r0, j + 1) : r0;
            const int i_end = part == Part::upper ? std::min(r1, j + 1) : r1;
            for (int i = i_begin; i < i_end; ++i) y[i] += static_cast<double>(c[i]) * xj;
        }
    }
}

// y = M^T x, M the `part` of m.
void transpose_times(Part part, int n, const float* m, const double* x, double* y) {
#pragma omp parallel for schedule(dynamic, 64)
    for (int j = 0; j < n; ++j) {
        const float* c = column(m, n, j);
        const int i_begin = part == Part::unit_lower ? j + 1 : 0;
        const int i_end = part == Part::upper ? j + 1 : n;
        double sum = part == Part::unit_lower ? x[j] : 0.0;
        for (int i = i_begin; i < i_end; ++i) sum += static_cast<double>(c[i]) * x[i];
        y[j] = sum;
    }
}

// E = P A - L U applied to vectors, for the norm estimator.
struct ResidualOperator {
    int n;
    const float* a;
    const float* factors;
    const int* ipiv;

    // y = P A x - L (U x). P applies LAPACK's interchanges in order, as slaswp.
    void apply(const std::vector<double>& x, std::vector<double>& y) const {
        std::vector<double> pax(n), ux(n), lux(n);
        times(Part::full, n, a, x.data(), pax.data());
        for (int i = 0; i < n; ++i) std::swap(pax[i], pax[ipiv[i] - 1]);
        times(Part::upper, n, factors, x.data(), ux.data());
        times(Part::unit_lower, n, factors, ux.data(), lux.data());
        for (int i = 0; i < n; ++i) y[i] = pax[i] - lux[i];
    }

    // z = A^T (P^T x) - U^T (L^T x); P^T undoes the interchanges in reverse order.
    void apply_transposed(const std::vector<double>& x, std::vector<double>& z) const {
        std::vector<double> ptx = x, atptx(n), ltx(n), ultx(n);
        for (int i = n - 1; i >= 0; --i) std::swap(ptx[i], ptx[ipiv[i] - 1]);
        transpose_times(Part::full, n, a, ptx.data(), atptx.data());
        transpose_times(Part::unit_lower, n, factors, x.data(), ltx.data());
        transpose_times(Part::upper, n, factors, ltx.data(), ultx.data());
        for (int i = 0; i < n; ++i) z[i] = atptx[i] - ultx[i];
    }
};

double norm1(const std::vector<double>& v) {
    double sum = 0.0;
    for (const double value : v) sum += std::fabs(value);
    return sum;
}

// Hager / Higham lower bound of ||E||_1 (the logic of LAPACK's slacn2): climb
// from x = ones/n to the unit vector e_j where E^T sign(E x) is largest, until
// that no longer promises an increase; then try Higham's alternating vector,
// which catches matrices the climb misses. NaN if E x is not finite.
double estimate_norm1(const ResidualOperator& e) {
    const int n = e.n;
    std::vector<double> x(n, 1.0 / n), y(n), signs(n), z(n);
    double best = 0.0;
    int last_j = -1;
    for (int iteration = 0; iteration < 5; ++iteration) {
        e.apply(x, y);
        const double y_norm = norm1(y);
        if (!std::isfinite(y_norm)) return std::numeric_limits<double>::quiet_NaN();
        best = std::max(best, y_norm);  // ||x||_1 = 1 on every iteration
        for (int i = 0; i < n; ++i) signs[i] = y[i] >= 0.0 ? 1.0 : -1.0;
        e.apply_transposed(signs, z);
        int j = 0;
        for (int i = 1; i < n; ++i) {
            if (std::fabs(z[i]) > std::fabs(z[j])) j = i;
        }
        // z^T x is z[last_j] for x = e_last_j: no larger z means x is a local maximum.
        if (last_j >= 0 && std::fabs(z[j]) <= z[last_j]) break;
        std::fill(x.begin(), x.end(), 0.0);
        x[j] = 1.0;
        last_j = j;
    }
    double alternating_norm = 0.0;
    for (int i = 0; i < n; ++i) {
        x[i] = (i % 2 ? -1.0 : 1.0) * (1.0 + (n > 1 ? static_cast<double>(i) / (n - 1) : 0.0));
        alternating_norm += std::fabs(x[i]);
    }
    e.apply(x, y);
    const double y_norm = norm1(y);
    if (!std::isfinite(y_norm)) return std::numeric_limits<double>::quiet_NaN();
    return std::max(best, y_norm / alternating_norm);
}

}  // namespace

std::vector<float> random_entries(std::size_t count, std::uint64_t stream,
                                  EntryDistribution distribution) {
    std::vector<float> values(count);
    const std::int64_t total = static_cast<std::int64_t>(count);
    if (distribution == EntryDistribution::uniform) {
#pragma omp parallel for schedule(static)
        for (std::int64_t k = 0; k < total; ++k) {
            values[k] = uniform_pm1(stream, static_cast<std::uint64_t>(k));
        }
    } else {
#pragma omp parallel for schedule(static)
        for (std::int64_t k = 0; k < total; ++k) {
            values[k] = standard_normal(stream, static_cast<std::uint64_t>(k));
        }
    }
    return values;
}

std::uint64_t matrix_stream(std::uint64_t seed, int n) {
    return splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(n)));
}

std::vector<float> random_matrix(int n, std::uint64_t seed) {
    return random_entries(static_cast<std::size_t>(n) * n, matrix_stream(seed, n),
                          EntryDistribution::uniform);
}

LuResidualEstimator::LuResidualEstimator(int n, const float* a) : n_(n), a_(a) {
    for (int j = 0; j < n; ++j) {
        const float* c = column(a, n, j);
        double sum = 0.0;
        for (int i = 0; i < n; ++i) sum += std::fabs(static_cast<double>(c[i]));
        a_norm1_ = std::max(a_norm1_, sum);
    }
}

double LuResidualEstimator::estimate(const float* factors, const int* ipiv) const {
    const int n = n_;
    // Partial pivoting picks row i's pivot from rows i..n.
    for (int i = 0; i < n; ++i) {
        if (ipiv[i] < i + 1 || ipiv[i] > n) return std::numeric_limits<double>::infinity();
    }
    const double residual_norm = estimate_norm1(ResidualOperator{n, a_, factors, ipiv});
    if (std::isnan(residual_norm)) return residual_norm;
    const double eps = std::ldexp(1.0, -24);  // slamch('E') for single precision
    const double scale = static_cast<double>(n) * a_norm1_ * eps;
    if (scale == 0.0) return residual_norm == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
    return residual_norm / scale;
}

SolveBackwardError::SolveBackwardError(int n, const float* a) : n_(n), a_(a) {
    std::vector<double> row_sums(static_cast<std::size_t>(n), 0.0);
    for (int j = 0; j < n; ++j) {
        const float* c = column(a, n, j);
        for (int i = 0; i < n; ++i) row_sums[i] += std::fabs(static_cast<double>(c[i]));
    }
    for (const double sum : row_sums) a_norm_inf_ = std::max(a_norm_inf_, sum);
}

double SolveBackwardError::of(int nrhs, const float* b, const float* x) const {
    const int n = n_;
    const std::size_t ld = static_cast<std::size_t>(n);
    std::vector<double> x_norms(static_cast<std::size_t>(nrhs), 0.0);
    for (int j = 0; j < nrhs; ++j) {
        for (int i = 0; i < n; ++i) {
            const double value = std::fabs(static_cast<double>(x[j * ld + i]));
            // A non-finite solution has no meaningful residual.
            if (!std::isfinite(value)) return std::numeric_limits<double>::quiet_NaN();
            x_norms[j] = std::max(x_norms[j], value);
        }
    }

    // R = B - A X by blocks of rows, as `times` does: each thread reads its
    // piece of every column of A once and applies it to all right-hand sides
    // while it is in cache.
    const int blocks = (n + row_block - 1) / row_block;
    std::vector<double> block_norms(static_cast<std::size_t>(blocks) * nrhs, 0.0);
#pragma omp parallel for schedule(dynamic)
    for (int blk = 0; blk < blocks; ++blk) {
        const int r0 = blk * row_block, rows = std::min(n, r0 + row_block) - r0;
        std::vector<double> r(static_cast<std::size_t>(rows) * nrhs);
        for (int j = 0; j < nrhs; ++j) {
            for (int i = 0; i < rows; ++i) r[j * rows + i] = b[j * ld + r0 + i];
        }
        for (int k = 0; k < n; ++k) {
            const float* c = column(a_, n, k) + r0;
            for (int j = 0; j < nrhs; ++j) {
                const double xkj = x[j * ld + k];
                if (xkj == 0.0) continue;
                double* rj = r.data() + static_cast<std::size_t>(j) * rows;
                for (int i = 0; i < rows; ++i) rj[i] -= static_cast<double>(c[i]) * xkj;
            }
        }
        for (int j = 0; j < nrhs; ++j) {
            double norm = 0.0;
            for (int i = 0; i < rows; ++i) norm = std::max(norm, std::fabs(r[j * rows + i]));
            block_norms[static_cast<std::size_t>(blk) * nrhs + j] = norm;
        }
    }

    const double eps = std::ldexp(1.0, -24);  // slamch('E') for single precision
    double worst = 0.0;
    for (int j = 0; j < nrhs; ++j) {
        double residual_norm = 0.0;
        for (int blk = 0; blk < blocks; ++blk) {
            const double block_norm = block_norms[static_cast<std::size_t>(blk) * nrhs + j];
            residual_norm = std::max(residual_norm, block_norm);
        }
        const double scale = a_norm_inf_ * x_norms[j] * n * eps;
        const double ratio = scale > 0.0 ? residual_norm / scale
                             : residual_norm == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
        worst = std::max(worst, ratio);
    }
    return worst;
}

}  // namespace tandem_bench
