#include "bench/matrix_kinds.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "bench/matrix_data.hpp"

namespace tandem_bench {
namespace {

const std::vector<TestMatrixKindInfo> kinds = {
    {TestMatrixKind::uniform, "uniform"},   {TestMatrixKind::gaussian, "gaussian"},
    {TestMatrixKind::randsvd3, "randsvd3"}, {TestMatrixKind::randsvd5, "randsvd5"},
    {TestMatrixKind::randsvd7, "randsvd7"}, {TestMatrixKind::scaled, "scaled"},
    {TestMatrixKind::growth, "growth"},
};

// A stream derived from `stream` for one purpose (`tag`), independent of it
// and of the other tags' streams.
std::uint64_t substream(std::uint64_t stream, std::uint64_t tag) {
    return splitmix64(stream ^ splitmix64(0x7465737400000000ull + tag));  // "test" + tag
}

// --- randsvd -----------------------------------------------------------------
//
// A cheap randsvd: A = U diag(s) V^T, where U and V are each the product of
// three random Householder reflectors (I - 2 u u^T / u^T u, u Gaussian) and a
// random permutation (the order of s on the diagonal). The singular values are
// exactly s up to double rounding, but the singular vectors are far less
// random than those of LAPACK's dlatms (Haar-distributed orthogonal matrices,
// O(n^3) to form): A is a permuted diagonal plus a matrix of rank 6. What it
// buys is the cost: O(n^2) in time and no memory beyond A, which at n = 32768
// is the difference between seconds and hours.
//
// A product of reflectors is I - P Q^T (P, Q: n x r, "compact WY"), so
//   A = (I - P Q^T) D (I - X Y^T),   D = diag(d), U = I - P Q^T, V^T = I - X Y^T,
//   A_ij = d_i [i = j] - sum_k P_ik (Q_jk d_j) + sum_k W_ik Y_jk,
//   W = P M - D X,  M = Q^T D X (r x r),
// 2r products per entry in double.
constexpr int reflectors = 3;

// Row-major n x reflectors.
struct Factor {
    int n;
    std::vector<double> values;
    explicit Factor(int order) : n(order), values(static_cast<std::size_t>(order) * reflectors, 0.0) {}
    double& operator()(int i, int k) { return values[static_cast<std::size_t>(i) * reflectors + k]; }
    double operator()(int i, int k) const { return values[static_cast<std::size_t>(i) * reflectors + k]; }
};

// H_1 H_2 ... H_r = I - P Q^T. Appending H = I - tau u u^T to I - P Q^T gives
// I - P Q^T - tau (u - P (Q^T u)) u^T: the new columns are p = tau (u - P Q^T u)
// and q = u.
void reflector_product(int n, std::uint64_t stream, Factor& p, Factor& q) {
    for (int r = 0; r < reflectors; ++r) {
        const std::vector<float> direction =
            random_entries(static_cast<std::size_t>(n), substream(stream, 100 + r),
                           EntryDistribution::gaussian);
        std::vector<double> u(direction.begin(), direction.end());
        double norm2 = 0.0;
        for (const double value : u) norm2 += value * value;
        // A zero direction (possible only at tiny n) is no reflector: leave it out.
        if (norm2 == 0.0) continue;
        const double tau = 2.0 / norm2;
        double qtu[reflectors] = {0.0};
        for (int k = 0; k < r; ++k) {
            for (int i = 0; i < n; ++i) qtu[k] += q(i, k) * u[i];
        }
        for (int i = 0; i < n; ++i) {
            double pqtu = 0.0;
            for (int k = 0; k < r; ++k) pqtu += p(i, k) * qtu[k];
            p(i, r) = tau * (u[i] - pqtu);
            q(i, r) = u[i];
        }
    }
}

// The singular values in a random order (Fisher-Yates on the stream's counters).
std::vector<double> shuffled_singular_values(int n, double kappa, std::uint64_t stream) {
    std::vector<double> d = randsvd_singular_values(n, kappa);
    const std::uint64_t order_stream = substream(stream, 200);
    for (int i = n - 1; i > 0; --i) {
        const std::uint64_t j = splitmix64(order_stream ^ splitmix64(static_cast<std::uint64_t>(i))) %
                                static_cast<std::uint64_t>(i + 1);
        std::swap(d[i], d[j]);
    }
    return d;
}

template <class Real>
std::vector<Real> randsvd_entries(int n, double kappa, std::uint64_t stream) {
    const std::vector<double> d = shuffled_singular_values(n, kappa, stream);
    Factor p(n), q(n), x(n), y(n);
    reflector_product(n, substream(stream, 1), p, q);  // U = I - P Q^T
    reflector_product(n, substream(stream, 2), y, x);  // V = I - Y X^T, V^T = I - X Y^T

    double m[reflectors][reflectors] = {};  // M = Q^T D X
    for (int k = 0; k < reflectors; ++k) {
        for (int l = 0; l < reflectors; ++l) {
            for (int i = 0; i < n; ++i) m[k][l] += q(i, k) * d[i] * x(i, l);
        }
    }
    Factor w(n), qd(n);  // W = P M - D X; qd(j, k) = Q_jk d_j
    for (int i = 0; i < n; ++i) {
        for (int l = 0; l < reflectors; ++l) {
            double pm = 0.0;
            for (int k = 0; k < reflectors; ++k) pm += p(i, k) * m[k][l];
            w(i, l) = pm - d[i] * x(i, l);
            qd(i, l) = q(i, l) * d[i];
        }
    }

    std::vector<Real> a(static_cast<std::size_t>(n) * n);
#pragma omp parallel for schedule(static)
    for (int j = 0; j < n; ++j) {
        Real* column = a.data() + static_cast<std::size_t>(j) * n;
        for (int i = 0; i < n; ++i) {
            double value = i == j ? d[i] : 0.0;
            for (int k = 0; k < reflectors; ++k) value += w(i, k) * y(j, k) - p(i, k) * qd(j, k);
            column[i] = static_cast<Real>(value);
        }
    }
    return a;
}

// --- scaled ------------------------------------------------------------------

// An integer uniform in [-scaled_max_exponent, scaled_max_exponent] (the
// modulo's bias is below 2^-58).
int exponent_at(std::uint64_t stream, int index) {
    const std::uint64_t span = 2 * scaled_max_exponent + 1;
    return static_cast<int>(splitmix64(stream ^ splitmix64(static_cast<std::uint64_t>(index))) % span) -
           scaled_max_exponent;
}

std::vector<float> scaled_matrix(int n, std::uint64_t stream) {
    std::vector<float> a = random_entries(static_cast<std::size_t>(n) * n, substream(stream, 1),
                                          EntryDistribution::uniform);
    const ScalingExponents e = scaling_exponents(n, stream);
    // 24-bit entries times powers of two from 2^-40 to 2^40: exact in float.
#pragma omp parallel for schedule(static)
    for (int j = 0; j < n; ++j) {
        float* column = a.data() + static_cast<std::size_t>(j) * n;
        for (int i = 0; i < n; ++i) column[i] = std::ldexp(column[i], e.row[i] + e.column[j]);
    }
    return a;
}

// --- growth ------------------------------------------------------------------
//
// Wilkinson's matrix W of order m = min(n, 60) (1 on the diagonal, -1 below
// it, 1 in its last column, 0 elsewhere) on the rows and columns s_k =
// floor(k n / m), k = 0..m-1, the identity on the others, and noise e_ij =
// 1e-6 u_ij, u uniform in [-1, 1). Partial pivoting takes the diagonal at
// every step and doubles W's last column at each of W's steps: growth
// max|U| / max|A| = 2^(m-1), U's largest entry 2^59 = 5.8e17 from n = 60 on
// (large, and finite in FP32, whose largest float is 3.4e38).
//
// W is spread over the matrix rather than kept in its leading block so that
// the doubling happens in the trailing updates: a leading 60 x 60 block lies
// inside the first panel, which is FP32 on every update precision. Spread,
// the entries 2^k of W's last column (column s_(m-1), in the last panel) are
// each the result of updates A22 -= L21 U12, whose rounding therefore sets
// the factorization's residual, of order 2^-24 max|U| = 3e10 on FP32 updates:
// far above the scaled residual's threshold of 30 on every precision, and a
// measure of the updates' arithmetic.
//
// The noise is placed so that every pivot stays on the diagonal, strictly:
//   * W's diagonal is 1 + |e| and its entries below it -1 + 2e-6 + e, of
//     magnitude below 1 - 1e-6 (16 float ulps under the diagonal): the ties
//     of Wilkinson's matrix would otherwise go to whichever row the noise
//     favours, and the first off-diagonal pivot ends the doubling (growth
//     about 2 instead);
//   * W's rows are zero outside W's columns, and W's zeros above its
//     diagonal stay zero: noise there would double with the last column and
//     decide the pivots after about 20 of W's steps;
//   * W's last column is 1 + e, and the identity's rows are noise outside
//     their diagonal 1 + e, W's columns included: their entries in W's last
//     column then grow to about 1e-6 2^58 = 3e11 through the updates, below
//     W's pivot there.
std::vector<float> growth_matrix(int n, std::uint64_t stream) {
    const int m = std::min(n, growth_block_order);
    const double noise = growth_noise;
    // w[i]: the row and column of W at index i of the matrix, or -1.
    std::vector<int> w(static_cast<std::size_t>(n), -1);
    for (int k = 0; k < m; ++k) w[static_cast<std::size_t>(k) * n / m] = k;
    std::vector<float> a(static_cast<std::size_t>(n) * n);
#pragma omp parallel for schedule(static)
    for (int j = 0; j < n; ++j) {
        float* column = a.data() + static_cast<std::size_t>(j) * n;
        const int q = w[j];
        for (int i = 0; i < n; ++i) {
            const int p = w[i];
            const double e = noise * uniform_pm1(stream, static_cast<std::uint64_t>(j) * n + i);
            double value;
            if (p < 0) value = (i == j ? 1.0 : 0.0) + e;  // the identity's rows
            else if (q < 0) value = 0.0;                   // W's rows outside W
            else if (q == m - 1) value = 1.0 + e;
            else if (p == q) value = 1.0 + std::fabs(e);
            else if (p > q) value = -1.0 + 2.0 * noise + e;
            else value = 0.0;
            column[i] = static_cast<float>(value);
        }
    }
    return a;
}

}  // namespace

const std::vector<TestMatrixKindInfo>& test_matrix_kinds() { return kinds; }

const char* test_matrix_kind_name(TestMatrixKind kind) {
    for (const TestMatrixKindInfo& info : kinds) {
        if (info.kind == kind) return info.name;
    }
    return "?";
}

bool test_matrix_kind_from_name(const std::string& name, TestMatrixKind& kind) {
    for (const TestMatrixKindInfo& info : kinds) {
        if (name == info.name) {
            kind = info.kind;
            return true;
        }
    }
    return false;
}

std::uint64_t test_matrix_stream(TestMatrixKind kind, int n, std::uint64_t seed) {
    const std::uint64_t stream = matrix_stream(seed, n);
    if (kind == TestMatrixKind::uniform || kind == TestMatrixKind::gaussian) return stream;
    return substream(stream, static_cast<std::uint64_t>(kind));
}

double randsvd_condition(TestMatrixKind kind) {
    switch (kind) {
        case TestMatrixKind::randsvd3: return 1e3;
        case TestMatrixKind::randsvd5: return 1e5;
        case TestMatrixKind::randsvd7: return 1e7;
        default: return 0.0;
    }
}

std::vector<double> randsvd_singular_values(int n, double kappa) {
    std::vector<double> s(static_cast<std::size_t>(n), 1.0);
    const double log_kappa = std::log(kappa);
    for (int i = 1; i < n; ++i) s[i] = std::exp(-log_kappa * i / (n - 1));
    if (n > 1) s[n - 1] = 1.0 / kappa;  // the end exactly, not exp's rounding of it
    return s;
}

std::vector<double> randsvd_matrix(int n, double kappa, std::uint64_t stream) {
    return randsvd_entries<double>(n, kappa, stream);
}

ScalingExponents scaling_exponents(int n, std::uint64_t stream) {
    ScalingExponents e;
    e.row.resize(static_cast<std::size_t>(n));
    e.column.resize(static_cast<std::size_t>(n));
    const std::uint64_t row_stream = substream(stream, 2), column_stream = substream(stream, 3);
    for (int i = 0; i < n; ++i) {
        e.row[i] = exponent_at(row_stream, i);
        e.column[i] = exponent_at(column_stream, i);
    }
    return e;
}

std::vector<float> make_test_matrix(TestMatrixKind kind, int n, std::uint64_t seed) {
    if (n < 1) throw std::invalid_argument("make_test_matrix: n must be at least 1");
    const std::uint64_t stream = test_matrix_stream(kind, n, seed);
    const std::size_t count = static_cast<std::size_t>(n) * n;
    switch (kind) {
        case TestMatrixKind::uniform: return random_entries(count, stream, EntryDistribution::uniform);
        case TestMatrixKind::gaussian: return random_entries(count, stream, EntryDistribution::gaussian);
        case TestMatrixKind::randsvd3:
        case TestMatrixKind::randsvd5:
        case TestMatrixKind::randsvd7:
            return randsvd_entries<float>(n, randsvd_condition(kind), stream);
        case TestMatrixKind::scaled: return scaled_matrix(n, stream);
        case TestMatrixKind::growth: return growth_matrix(n, stream);
    }
    throw std::invalid_argument("make_test_matrix: unknown kind");
}

}  // namespace tandem_bench
