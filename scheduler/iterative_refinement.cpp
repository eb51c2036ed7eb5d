#include "scheduler/iterative_refinement.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace tandem {
namespace {

// out = v / s in FP32, with s the power of two nearest above max |v_i| (1 for
// a zero v), returned: the FP32 solves then see entries near 1 whatever the
// scale of B, so that a tiny residual does not underflow nor a huge one
// overflow. Dividing by a power of two is exact.
double to_float_scaled(int64_t n, const double* v, float* out) {
    double largest = 0.0;
    for (int64_t i = 0; i < n; ++i) largest = std::max(largest, std::abs(v[i]));
    const double scale = largest > 0.0 && std::isfinite(largest)
                             ? std::ldexp(1.0, std::ilogb(largest) + 1)
                             : 1.0;
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(v[i] / scale);
    return scale;
}

// D ~ inv(A) R for one column by GMRES on inv(P L U) A D = inv(P L U) R
// (left-preconditioned, modified Gram-Schmidt, Givens rotations), in double
// except for the preconditioner's FP32 solves. `steps` counts its iterations.
std::vector<double> gmres_correction(RefinementSystem& system, const double* r,
                                     const RefinementSettings& settings, int& steps) {
    const int64_t n = system.order();
    const int m = std::max(settings.max_gmres_steps, 1);
    std::vector<float> single(static_cast<size_t>(n));
    std::vector<double> product(static_cast<size_t>(n));
    auto precondition = [&](const double* v, double* out) {  // out = inv(P L U) v
        const double scale = to_float_scaled(n, v, single.data());
        system.solve_with_factors(1, single.data());
        for (int64_t i = 0; i < n; ++i) out[i] = scale * single[i];
    };
    auto dot = [n](const double* u, const double* v) {
        double s = 0.0;
        for (int64_t i = 0; i < n; ++i) s += u[i] * v[i];
        return s;
    };

    std::vector<std::vector<double>> basis;  // orthonormal Krylov vectors
    basis.emplace_back(static_cast<size_t>(n));
    precondition(r, basis[0].data());
    const double beta = std::sqrt(dot(basis[0].data(), basis[0].data()));
    std::vector<double> d(static_cast<size_t>(n), 0.0);
    if (!(beta > 0.0) || !std::isfinite(beta)) return d;
    for (double& v : basis[0]) v /= beta;

    // h holds the Hessenberg columns, rotated as they come: upper triangular.
    std::vector<std::vector<double>> h;
    std::vector<double> cs, sn, g{beta};
    int k = 0;
    for (int j = 0; j < m; ++j) {
        std::vector<double> w(static_cast<size_t>(n));
        system.multiply(1, basis[j].data(), product.data());
        precondition(product.data(), w.data());
        ++steps;
        std::vector<double> column(static_cast<size_t>(j) + 2, 0.0);
        for (int i = 0; i <= j; ++i) {
            column[i] = dot(w.data(), basis[i].data());
            for (int64_t t = 0; t < n; ++t) w[t] -= column[i] * basis[i][t];
        }
        column[j + 1] = std::sqrt(dot(w.data(), w.data()));
        const double next_norm = column[j + 1];
        for (int i = 0; i < j; ++i) {  // the earlier rotations
            const double top = cs[i] * column[i] + sn[i] * column[i + 1];
            column[i + 1] = -sn[i] * column[i] + cs[i] * column[i + 1];
            column[i] = top;
        }
        const double radius = std::hypot(column[j], column[j + 1]);
        cs.push_back(radius > 0.0 ? column[j] / radius : 1.0);
        sn.push_back(radius > 0.0 ? column[j + 1] / radius : 0.0);
        column[j] = radius;
        column[j + 1] = 0.0;
        g.push_back(-sn[j] * g[j]);
        g[j] *= cs[j];
        h.push_back(std::move(column));
        k = j + 1;
        if (!std::isfinite(g[k]) || std::abs(g[k]) <= settings.gmres_tolerance * beta ||
            !(next_norm > 0.0))
            break;
        basis.emplace_back(std::move(w));
        for (double& v : basis.back()) v /= next_norm;
    }
    // y = inv(H(0:k, 0:k)) g(0:k), then D = basis y.
    std::vector<double> y(static_cast<size_t>(k));
    for (int i = k - 1; i >= 0; --i) {
        double s = g[i];
        for (int t = i + 1; t < k; ++t) s -= h[t][i] * y[t];
        y[i] = h[i][i] != 0.0 ? s / h[i][i] : 0.0;
    }
    for (int i = 0; i < k; ++i)
        for (int64_t t = 0; t < n; ++t) d[t] += y[i] * basis[i][t];
    return d;
}

}  // namespace

RefinementResult refine_solution(RefinementSystem& system, double a_norm, int64_t nrhs,
                                 const float* b, int64_t ldb, float* x, int64_t ldx,
                                 const RefinementSettings& settings) {
    const int64_t n = system.order();
    RefinementResult result;
    if (n == 0 || nrhs == 0) {
        result.converged = true;
        return result;
    }
    const size_t size = static_cast<size_t>(n * nrhs);

    // X0 = inv(P L U) B.
    std::vector<float> work(size);
    for (int64_t j = 0; j < nrhs; ++j) std::copy_n(b + j * ldb, n, work.data() + j * n);
    system.solve_with_factors(nrhs, work.data());
    for (int64_t j = 0; j < nrhs; ++j) std::copy_n(work.data() + j * n, n, x + j * ldx);

    std::vector<double> z(size), residual(size);
    std::vector<double> previous(static_cast<size_t>(nrhs), std::numeric_limits<double>::infinity());
    std::vector<int64_t> open;  // columns still failing the test
    bool use_gmres = false;
    for (int corrections = 0;; ++corrections) {
        // R = B - A X, in double from the FP32 X.
        for (int64_t j = 0; j < nrhs; ++j)
            for (int64_t i = 0; i < n; ++i) z[j * n + i] = x[j * ldx + i];
        system.multiply(nrhs, z.data(), residual.data());
        open.clear();
        bool stalled = false, finite = true;
        double worst = 0.0;
        for (int64_t j = 0; j < nrhs; ++j) {
            double r_norm = 0.0, x_norm = 0.0;
            for (int64_t i = 0; i < n; ++i) {
                double& r = residual[j * n + i];
                r = static_cast<double>(b[j * ldb + i]) - r;
                if (!std::isfinite(r) || !std::isfinite(z[j * n + i])) finite = false;
                r_norm = std::max(r_norm, std::abs(r));
                x_norm = std::max(x_norm, std::abs(z[j * n + i]));
            }
            const double bound = settings.tolerance * a_norm * x_norm;
            const double error = r_norm == 0.0 ? 0.0 : r_norm / (a_norm * x_norm);
            worst = std::max(worst, error);
            if (r_norm <= bound) continue;
            open.push_back(j);
            if (r_norm > 0.5 * previous[j]) stalled = true;
            previous[j] = r_norm;
        }
        result.corrections = corrections;
        result.backward_error = finite ? worst : std::numeric_limits<double>::quiet_NaN();
        if (!finite) {
            result.failure = -2;
            result.why = "X or its residual is not finite";
            return result;
        }
        if (open.empty()) {
            result.converged = true;
            return result;
        }
        if (corrections == settings.max_corrections) {
            result.failure = -(settings.max_corrections + 1);
            result.why = "the residual test still failed after " +
                         std::to_string(settings.max_corrections) + " corrections";
            return result;
        }
        if (stalled) {
            if (use_gmres) {
                result.failure = -4;
                result.why = "a GMRES correction did not halve the residual";
                return result;
            }
            use_gmres = true;  // classical corrections stopped paying
        }

        // X += D with A D = R, for the columns still failing.
        if (!use_gmres) {
            const int64_t k = static_cast<int64_t>(open.size());
            std::vector<double> scales(static_cast<size_t>(k));
            for (int64_t c = 0; c < k; ++c)
                scales[c] = to_float_scaled(n, residual.data() + open[c] * n, work.data() + c * n);
            system.solve_with_factors(k, work.data());
            for (int64_t c = 0; c < k; ++c)
                for (int64_t i = 0; i < n; ++i)
                    x[open[c] * ldx + i] =
                        static_cast<float>(x[open[c] * ldx + i] + scales[c] * work[c * n + i]);
        } else {
            for (const int64_t j : open) {
                const std::vector<double> d =
                    gmres_correction(system, residual.data() + j * n, settings, result.gmres_steps);
                for (int64_t i = 0; i < n; ++i)
                    x[j * ldx + i] = static_cast<float>(x[j * ldx + i] + d[i]);
            }
        }
    }
}

}  // namespace tandem
