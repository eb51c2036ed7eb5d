// refine_solution (scheduler/iterative_refinement.hpp) on small dense systems
// whose "factors" are exactly those of a perturbed matrix A + E, so that the
// preconditioner's quality is chosen: classical convergence, the switch to
// GMRES, a stall, non-finite values, and the corrections cap. Oracles: the
// stopping test recomputed in double, and the result's codes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "lapack_oracle.hpp"
#include "scheduler/iterative_refinement.hpp"
#include "test_support.hpp"

namespace tandem::test {
namespace {

// A, and the LAPACK factors of A + E with E = `perturbation` * a random
// matrix of A's scale.
class PerturbedSystem final : public RefinementSystem {
public:
    PerturbedSystem(int n, double perturbation, uint64_t seed) : n_(n) {
        a_ = make_matrix(n, n, n, MatrixKind::random, seed);
        std::vector<float> m = a_;
        std::mt19937_64 random(seed + 1);
        std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
        for (float& v : m) v += static_cast<float>(perturbation) * unit(random);
        factors_ = lapack_getrf(n, n, m, n);
    }
    int64_t order() const override { return n_; }
    void solve_with_factors(int64_t k, float* v) override {
        ++solves;
        std::vector<float> b(v, v + n_ * k);
        const std::vector<float> x = lapack_getrs('N', n_, static_cast<int>(k), factors_, n_, b, n_);
        std::copy(x.begin(), x.end(), v);
    }
    void multiply(int64_t k, const double* z, double* y) override {
        for (int64_t c = 0; c < k; ++c)
            for (int i = 0; i < n_; ++i) {
                double s = 0.0;
                for (int j = 0; j < n_; ++j) s += double(a_[i + size_t(j) * n_]) * z[c * n_ + j];
                y[c * n_ + i] = s;
            }
    }
    double norm_inf() const {
        double norm = 0.0;
        for (int i = 0; i < n_; ++i) {
            double row = 0.0;
            for (int j = 0; j < n_; ++j) row += std::abs(double(a_[i + size_t(j) * n_]));
            norm = std::max(norm, row);
        }
        return norm;
    }
    double backward_error(int nrhs, const std::vector<float>& b, const std::vector<float>& x) {
        return inf_backward_error(n_, nrhs, a_.data(), n_, x.data(), n_, b.data(), n_);
    }
    int solves = 0;

private:
    int n_;
    std::vector<float> a_;
    LapackFactors factors_;
};

struct RefinedRun {
    RefinementResult result;
    std::vector<float> b, x;
};

RefinedRun refine(PerturbedSystem& system, int n, int nrhs, uint64_t seed,
           const RefinementSettings& settings = {}) {
    RefinedRun run;
    run.b = make_matrix(n, nrhs, n, MatrixKind::random, seed + 7);
    run.x.assign(run.b.size(), 0.0f);
    run.result = refine_solution(system, system.norm_inf(), nrhs, run.b.data(), n, run.x.data(), n,
                                 settings);
    return run;
}

TEST(Refinement, ExactFactorsPassWithoutCorrectionsOrAfterOne) {
    const int n = 120;
    const uint64_t seed = test_seed();
    SCOPED_TRACE(seed);
    PerturbedSystem system(n, 0.0, seed);
    const RefinedRun run = refine(system, n, 3, seed);
    EXPECT_TRUE(run.result.converged);
    EXPECT_LE(run.result.corrections, 1);
    EXPECT_EQ(run.result.gmres_steps, 0);
    EXPECT_LE(system.backward_error(3, run.b, run.x), 0x1p-23);
    EXPECT_LE(run.result.backward_error, 0x1p-23);
}

TEST(Refinement, RoughFactorsAreCorrectedClassically) {
    const int n = 120;
    const uint64_t seed = test_seed();
    SCOPED_TRACE(seed);
    PerturbedSystem system(n, 1e-5, seed);  // far from FP32, close enough to halve each time
    const RefinedRun run = refine(system, n, 2, seed);
    EXPECT_TRUE(run.result.converged) << run.result.why;
    EXPECT_GE(run.result.corrections, 1);
    EXPECT_LE(system.backward_error(2, run.b, run.x), 0x1p-23);
    EXPECT_EQ(run.result.failure, 0);
}

// Factors of A + E with E as large as A: classical corrections cannot halve
// the residual; GMRES (allowed n steps, so that it can finish) takes over and
// still meets the test.
TEST(Refinement, GmresTakesOverWhenClassicalStalls) {
    const int n = 120;
    const uint64_t seed = test_seed();
    SCOPED_TRACE(seed);
    PerturbedSystem system(n, 1.0, seed);
    RefinementSettings settings;
    settings.max_gmres_steps = n;
    const RefinedRun run = refine(system, n, 1, seed, settings);
    EXPECT_TRUE(run.result.converged) << run.result.why;
    EXPECT_GT(run.result.gmres_steps, 0);
    EXPECT_LE(system.backward_error(1, run.b, run.x), 0x1p-23);
}

// Factors of an unrelated matrix: neither kind of correction halves the
// residual within a few GMRES steps.
TEST(Refinement, UselessFactorsStall) {
    const int n = 80;
    const uint64_t seed = test_seed();
    SCOPED_TRACE(seed);
    PerturbedSystem system(n, 50.0, seed);
    RefinementSettings settings;
    settings.max_gmres_steps = 2;
    const RefinedRun run = refine(system, n, 1, seed, settings);
    EXPECT_FALSE(run.result.converged);
    EXPECT_EQ(run.result.failure, -4) << run.result.why;
    EXPECT_FALSE(run.result.why.empty());
}

TEST(Refinement, TheCapOnCorrectionsIsLapacksCode) {
    const int n = 100;
    const uint64_t seed = test_seed();
    SCOPED_TRACE(seed);
    PerturbedSystem system(n, 1e-3, seed);
    RefinementSettings settings;
    settings.max_corrections = 2;  // reached while each correction still halves the residual
    settings.tolerance = 0.0;      // unreachable unless the residual is exactly zero
    const RefinedRun run = refine(system, n, 1, seed, settings);
    EXPECT_FALSE(run.result.converged);
    EXPECT_EQ(run.result.failure, -(settings.max_corrections + 1)) << run.result.why;
    EXPECT_EQ(run.result.corrections, 2);
}

// B near the bottom of FP32's normal range: the residuals are subnormal in
// FP32, and the corrections are solved scaled.
TEST(Refinement, TinyRightHandSidesAreCorrectedScaled) {
    const int n = 100;
    const uint64_t seed = test_seed();
    SCOPED_TRACE(seed);
    PerturbedSystem system(n, 1e-4, seed);
    std::vector<float> b = make_matrix(n, 1, n, MatrixKind::random, seed + 7);
    for (float& v : b) v = std::ldexp(v, -120);
    std::vector<float> x(b.size());
    const RefinementResult result =
        refine_solution(system, system.norm_inf(), 1, b.data(), n, x.data(), n);
    EXPECT_TRUE(result.converged) << result.why;
    EXPECT_GE(result.corrections, 1);
    EXPECT_LE(system.backward_error(1, b, x), 0x1p-23);
}

TEST(Refinement, NanInBIsNotFinite) {
    const int n = 50;
    const uint64_t seed = test_seed();
    SCOPED_TRACE(seed);
    PerturbedSystem system(n, 0.0, seed);
    std::vector<float> b = make_matrix(n, 2, n, MatrixKind::random, seed + 7);
    b[n + 10] = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> x(b.size());
    const RefinementResult result =
        refine_solution(system, system.norm_inf(), 2, b.data(), n, x.data(), n);
    EXPECT_FALSE(result.converged);
    EXPECT_EQ(result.failure, -2);
}

TEST(Refinement, EmptySystemsConverge) {
    PerturbedSystem system(3, 0.0, 1);
    float b = 0.0f, x = 0.0f;
    EXPECT_TRUE(refine_solution(system, 1.0, 0, &b, 3, &x, 3).converged);
}

}  // namespace
}  // namespace tandem::test
