#include "test_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <utility>

namespace tandem::test {
namespace {

// LAPACK's slamch('E'): the unit roundoff of float under round-to-nearest.
constexpr double kEps = 0.5 * std::numeric_limits<float>::epsilon();

// Uniform in [-1, 1) from the top 53 bits, so the matrices for a seed are the
// same whatever the standard library's distributions do.
class Uniform {
public:
    explicit Uniform(uint64_t seed) : engine_(seed) {}
    double next() { return 2.0 * static_cast<double>(engine_() >> 11) * 0x1.0p-53 - 1.0; }
    int64_t below(int64_t bound) {
        return static_cast<int64_t>(engine_() % static_cast<uint64_t>(bound));
    }

private:
    std::mt19937_64 engine_;
};

// Column-major m x n double matrix with leading dimension m.
struct Dense {
    int64_t m, n;
    std::vector<double> v;
    Dense(int64_t rows, int64_t cols)
        : m(rows), n(cols), v(static_cast<size_t>(rows * cols), 0.0) {}
    double& operator()(int64_t i, int64_t j) { return v[static_cast<size_t>(i + j * m)]; }
};

std::vector<float> to_float_padded(Dense& d, int64_t ld) {
    std::vector<float> out(static_cast<size_t>(ld * d.n), kPadding);
    for (int64_t j = 0; j < d.n; ++j)
        for (int64_t i = 0; i < d.m; ++i)
            out[static_cast<size_t>(i + j * ld)] = static_cast<float>(d(i, j));
    return out;
}

void fill_random(Dense& d, Uniform& u) {
    for (double& x : d.v) x = u.next();
}

void make_column_dominant(Dense& d) {
    for (int64_t j = 0; j < std::min(d.m, d.n); ++j) {
        double off = 0.0;
        for (int64_t i = 0; i < d.m; ++i)
            if (i != j) off += std::fabs(d(i, j));
        d(j, j) = (d(j, j) < 0 ? -1.0 : 1.0) * (off + 1.0);
    }
}

// Powers of two keep the scaling exact; 2^26 is about 6.7e7, so entries span
// about 2^-52 .. 2^52, far from float's overflow and underflow.
void scale_badly(Dense& d, Uniform& u) {
    constexpr int kMaxExponent = 26;
    std::vector<double> row(static_cast<size_t>(d.m)), col(static_cast<size_t>(d.n));
    for (double& r : row)
        r = std::ldexp(1.0, static_cast<int>(u.below(2 * kMaxExponent + 1)) - kMaxExponent);
    for (double& c : col)
        c = std::ldexp(1.0, static_cast<int>(u.below(2 * kMaxExponent + 1)) - kMaxExponent);
    for (int64_t j = 0; j < d.n; ++j)
        for (int64_t i = 0; i < d.m; ++i)
            d(i, j) *= row[static_cast<size_t>(i)] * col[static_cast<size_t>(j)];
}

// d := (I - 2 v v^T / v^T v) d, with v random of length m.
void reflect_rows(Dense& d, Uniform& u) {
    std::vector<double> v(static_cast<size_t>(d.m));
    double vv = 0.0;
    for (double& x : v) {
        x = u.next();
        vv += x * x;
    }
    if (vv == 0.0) return;
    for (int64_t j = 0; j < d.n; ++j) {
        double w = 0.0;
        for (int64_t i = 0; i < d.m; ++i) w += v[static_cast<size_t>(i)] * d(i, j);
        w *= 2.0 / vv;
        for (int64_t i = 0; i < d.m; ++i) d(i, j) -= w * v[static_cast<size_t>(i)];
    }
}

// d := d (I - 2 v v^T / v^T v), with v random of length n.
void reflect_columns(Dense& d, Uniform& u) {
    std::vector<double> v(static_cast<size_t>(d.n)), w(static_cast<size_t>(d.m), 0.0);
    double vv = 0.0;
    for (double& x : v) {
        x = u.next();
        vv += x * x;
    }
    if (vv == 0.0) return;
    for (int64_t j = 0; j < d.n; ++j)
        for (int64_t i = 0; i < d.m; ++i)
            w[static_cast<size_t>(i)] += d(i, j) * v[static_cast<size_t>(j)];
    for (int64_t j = 0; j < d.n; ++j)
        for (int64_t i = 0; i < d.m; ++i)
            d(i, j) -= 2.0 / vv * w[static_cast<size_t>(i)] * v[static_cast<size_t>(j)];
}

void make_ill_conditioned(Dense& d, Uniform& u) {
    const int64_t k = std::min(d.m, d.n);
    std::vector<double> s(static_cast<size_t>(k));
    for (int64_t i = 0; i < k; ++i)
        s[static_cast<size_t>(i)] = k == 1 ? 1.0 : std::pow(10.0, -6.0 * double(i) / double(k - 1));
    for (int64_t i = k - 1; i > 0; --i)
        std::swap(s[static_cast<size_t>(i)], s[static_cast<size_t>(u.below(i + 1))]);
    std::fill(d.v.begin(), d.v.end(), 0.0);
    for (int64_t i = 0; i < k; ++i) d(i, i) = s[static_cast<size_t>(i)];
    for (int r = 0; r < 3; ++r) reflect_rows(d, u);
    for (int r = 0; r < 3; ++r) reflect_columns(d, u);
}

// A norm that is NaN when any entry is NaN (std::max would silently drop it).
double max_or_nan(double best, double x) {
    return (std::isnan(best) || std::isnan(x)) ? std::nan("") : std::max(best, x);
}

// ||A||_1 (transposed = false) or ||A||_inf (true) of a column-major float matrix.
double norm_of(int64_t m, int64_t n, const float* a, int64_t lda, bool transposed) {
    double best = 0.0;
    if (!transposed) {
        for (int64_t j = 0; j < n; ++j) {
            double sum = 0.0;
            for (int64_t i = 0; i < m; ++i) sum += std::fabs(double(a[i + j * lda]));
            best = max_or_nan(best, sum);
        }
    } else {
        std::vector<double> rows(static_cast<size_t>(m), 0.0);
        for (int64_t j = 0; j < n; ++j)
            for (int64_t i = 0; i < m; ++i)
                rows[static_cast<size_t>(i)] += std::fabs(double(a[i + j * lda]));
        for (double r : rows) best = max_or_nan(best, r);
    }
    return best;
}

double ratio(double residual_norm, double denominator) {
    if (std::isnan(residual_norm) || std::isnan(denominator)) return std::nan("");
    if (denominator == 0.0)
        return residual_norm == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
    return residual_norm / denominator;
}

double solve_residual_op(bool transposed, int64_t n, int64_t nrhs, const float* a, int64_t lda,
                         const float* x, int64_t ldx, const float* b, int64_t ldb) {
    if (n == 0 || nrhs == 0) return 0.0;
    const double anorm = norm_of(n, n, a, lda, transposed);
    double worst = 0.0;
    std::vector<double> r(static_cast<size_t>(n));
    for (int64_t c = 0; c < nrhs; ++c) {
        const float* xc = x + c * ldx;
        const float* bc = b + c * ldb;
        for (int64_t i = 0; i < n; ++i) r[static_cast<size_t>(i)] = -double(bc[i]);
        for (int64_t j = 0; j < n; ++j)
            for (int64_t i = 0; i < n; ++i) {
                // r += op(A)(i, j) * x(j): A(i, j) or A(j, i)
                const double aij = transposed ? double(a[j + i * lda]) : double(a[i + j * lda]);
                r[static_cast<size_t>(i)] += aij * double(xc[j]);
            }
        double rnorm = 0.0, xnorm = 0.0;
        for (int64_t i = 0; i < n; ++i) {
            rnorm += std::fabs(r[static_cast<size_t>(i)]);
            xnorm += std::fabs(double(xc[i]));
        }
        worst = max_or_nan(worst, ratio(rnorm, anorm * xnorm * double(n) * kEps));
    }
    return worst;
}

}  // namespace

const char* kind_name(MatrixKind kind) {
    switch (kind) {
        case MatrixKind::random:
            return "random";
        case MatrixKind::diagonally_dominant:
            return "diagonally_dominant";
        case MatrixKind::badly_scaled:
            return "badly_scaled";
        case MatrixKind::ill_conditioned:
            return "ill_conditioned";
    }
    return "unknown";
}

uint64_t test_seed() {
    if (const char* env = std::getenv("TANDEM_TEST_SEED"); env != nullptr && *env != '\0')
        return std::strtoull(env, nullptr, 0);
    std::random_device device;
    return (uint64_t(device()) << 32) ^ uint64_t(device());
}

std::vector<float> make_matrix(int64_t m, int64_t n, int64_t ld, MatrixKind kind, uint64_t seed) {
    Uniform u(seed);
    Dense d(m, n);
    switch (kind) {
        case MatrixKind::random:
            fill_random(d, u);
            break;
        case MatrixKind::diagonally_dominant:
            fill_random(d, u);
            make_column_dominant(d);
            break;
        case MatrixKind::badly_scaled:
            fill_random(d, u);
            scale_badly(d, u);
            break;
        case MatrixKind::ill_conditioned:
            make_ill_conditioned(d, u);
            break;
    }
    return to_float_padded(d, ld);
}

double factorization_residual(int64_t m, int64_t n, const float* a, int64_t lda, const float* lu,
                              int64_t ldlu, const int* ipiv) {
    if (m == 0 || n == 0) return 0.0;
    const int64_t k = std::min(m, n);
    for (int64_t i = 0; i < k; ++i)
        if (ipiv[i] < 1 || ipiv[i] > m) return std::numeric_limits<double>::infinity();
    // r := P * A, applying the interchanges in order as LAPACK's slaswp does.
    Dense r(m, n);
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i) r(i, j) = a[i + j * lda];
    for (int64_t i = 0; i < k; ++i) {
        const int64_t p = ipiv[i] - 1;
        if (p != i)
            for (int64_t j = 0; j < n; ++j) std::swap(r(i, j), r(p, j));
    }
    // r -= L * U, L m x k unit lower trapezoidal, U k x n upper trapezoidal.
    for (int64_t j = 0; j < n; ++j)
        for (int64_t p = 0; p <= std::min(j, k - 1); ++p) {
            const double upj = lu[p + j * ldlu];
            r(p, j) -= upj;  // L(p, p) = 1
            for (int64_t i = p + 1; i < m; ++i) r(i, j) -= double(lu[i + p * ldlu]) * upj;
        }
    double rnorm = 0.0;
    for (int64_t j = 0; j < n; ++j) {
        double sum = 0.0;
        for (int64_t i = 0; i < m; ++i) sum += std::fabs(r(i, j));
        rnorm = max_or_nan(rnorm, sum);
    }
    const double anorm = norm_of(m, n, a, lda, false);
    return ratio(rnorm, double(std::max(m, n)) * anorm * kEps);
}

double inf_backward_error(int64_t n, int64_t nrhs, const float* a, int64_t lda, const float* x,
                          int64_t ldx, const float* b, int64_t ldb) {
    std::vector<double> rows(static_cast<size_t>(n), 0.0);
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < n; ++i) rows[i] += std::abs(double(a[i + j * lda]));
    const double a_norm = n > 0 ? *std::max_element(rows.begin(), rows.end()) : 0.0;
    double worst = 0.0;
    for (int64_t c = 0; c < nrhs; ++c) {
        std::vector<double> r(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) r[i] = b[i + c * ldb];
        for (int64_t j = 0; j < n; ++j)
            for (int64_t i = 0; i < n; ++i) r[i] -= double(a[i + j * lda]) * x[j + c * ldx];
        double r_norm = 0.0, x_norm = 0.0;
        for (int64_t i = 0; i < n; ++i) {
            const double xi = x[i + c * ldx];
            if (!std::isfinite(r[i]) || !std::isfinite(xi))
                return std::numeric_limits<double>::infinity();
            r_norm = std::max(r_norm, std::abs(r[i]));
            x_norm = std::max(x_norm, std::abs(xi));
        }
        if (r_norm > 0.0) worst = std::max(worst, r_norm / (a_norm * x_norm));
    }
    return worst;
}

double solve_residual(int64_t n, int64_t nrhs, const float* a, int64_t lda, const float* x,
                      int64_t ldx, const float* b, int64_t ldb) {
    return solve_residual_op(false, n, nrhs, a, lda, x, ldx, b, ldb);
}

double solve_residual_trans(int64_t n, int64_t nrhs, const float* a, int64_t lda, const float* x,
                            int64_t ldx, const float* b, int64_t ldb) {
    return solve_residual_op(true, n, nrhs, a, lda, x, ldx, b, ldb);
}

std::vector<float> to_row_major(int64_t m, int64_t n, const float* a_colmajor, int64_t lda,
                                int64_t ld_out) {
    std::vector<float> out(static_cast<size_t>(m * ld_out), kPadding);
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
            out[static_cast<size_t>(i * ld_out + j)] = a_colmajor[i + j * lda];
    return out;
}

std::vector<float> to_col_major(int64_t m, int64_t n, const float* a_rowmajor, int64_t lda,
                                int64_t ld_out) {
    std::vector<float> out(static_cast<size_t>(ld_out * n), kPadding);
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i)
            out[static_cast<size_t>(i + j * ld_out)] = a_rowmajor[i * lda + j];
    return out;
}

int64_t padding_changes(int64_t inner, int64_t outer, int64_t ld, const float* a) {
    int64_t changed = 0;
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = inner; i < ld; ++i)
            if (std::memcmp(&a[i + o * ld], &kPadding, sizeof(float)) != 0) ++changed;
    return changed;
}

int64_t first_bit_difference(const std::vector<float>& x, const std::vector<float>& y) {
    if (x.size() != y.size()) return 0;
    for (size_t i = 0; i < x.size(); ++i)
        if (std::memcmp(&x[i], &y[i], sizeof(float)) != 0) return static_cast<int64_t>(i);
    return -1;
}

ScopedEnvironmentVariable::ScopedEnvironmentVariable(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) {
        saved_ = old;
        had_ = true;
    }
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
}

ScopedEnvironmentVariable::~ScopedEnvironmentVariable() {
    if (had_)
        setenv(name_.c_str(), saved_.c_str(), 1);
    else
        unsetenv(name_.c_str());
}

}  // namespace tandem::test
