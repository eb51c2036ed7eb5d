// tandem::sgetrf through the public API. On the cpu backend the results must
// equal LAPACK's bit for bit (it calls the same LAPACK); on the host backend
// (the hybrid scheduler on emulated devices) LAPACK's INFO and the residual
// ||P A - L U|| / (max(m,n) ||A|| eps) < 30 are the oracles.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cstdio>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "api_backends.hpp"
#include "lapack_oracle.hpp"
#include "tandem/tandem.hpp"
#include "test_support.hpp"

namespace tandem::test {
namespace {

struct Shape {
    int m;
    int n;
};

std::string describe(const std::string& backend, Shape s, uint64_t seed) {
    return backend + " m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) +
           " seed=" + std::to_string(seed);
}

// Factors a copy of `a` with tandem and checks it against LAPACK on another
// copy: the same INFO, a small residual, padding untouched, and with `exact`
// the same pivots and factors bit for bit. Returns INFO.
int check_getrf(const Options& options, bool exact, Shape s, const std::vector<float>& a, int lda,
                Report* report = nullptr) {
    std::vector<float> lu = a;
    std::vector<int> ipiv(static_cast<size_t>(std::min(s.m, s.n)), -7);
    const int info = sgetrf(s.m, s.n, lu.data(), lda, ipiv.data(), options, report);
    const LapackFactors expected = lapack_getrf(s.m, s.n, a, lda);
    EXPECT_EQ(info, expected.info);
    EXPECT_LT(factorization_residual(s.m, s.n, a.data(), lda, lu.data(), lda, ipiv.data()),
              kResidualBound);
    EXPECT_EQ(padding_changes(s.m, s.n, lda, lu.data()), 0);
    if (exact) {
        EXPECT_EQ(ipiv, expected.ipiv);
        EXPECT_EQ(first_bit_difference(lu, expected.lu), -1);
    }
    return info;
}

std::vector<float> random_with_zero_columns(Shape s, int lda, const std::vector<int>& columns,
                                            uint64_t seed) {
    std::vector<float> a = make_matrix(s.m, s.n, lda, MatrixKind::random, seed);
    for (int j : columns)
        for (int i = 0; i < s.m; ++i) a[static_cast<size_t>(i + j * lda)] = 0.0f;
    return a;
}

// ---------------------------------------------------------------------------
class GetrfKinds : public BackendTest<std::tuple<BackendCase, MatrixKind>> {};

TEST_P(GetrfKinds, MatchesLapackInfoWithSmallResidual) {
    const BackendCase c = std::get<0>(GetParam());
    const MatrixKind kind = std::get<1>(GetParam());
    // Sizes 1, 2, odd, around and off the block sizes; tall and wide.
    const Shape shapes[] = {{1, 1},   {2, 2},     {3, 3},     {17, 17},  {63, 63},
                            {65, 65}, {100, 100}, {257, 257}, {100, 37}, {37, 100},
                            {65, 2},  {2, 65},    {130, 64},  {64, 130}};
    for (Shape s : shapes) {
        const uint64_t seed = test_seed();
        SCOPED_TRACE(describe(c.name(), s, seed));
        const int lda = s.m + 3;
        EXPECT_EQ(check_getrf(c.options(), c.equals_lapack(), s,
                              make_matrix(s.m, s.n, lda, kind, seed), lda),
                  0);
    }
}

INSTANTIATE_TEST_SUITE_P(
    Api, GetrfKinds,
    testing::Combine(testing::ValuesIn(api_backend_cases()),
                     testing::Values(MatrixKind::random, MatrixKind::diagonally_dominant,
                                     MatrixKind::badly_scaled, MatrixKind::ill_conditioned)),
    [](const auto& p) {
        return std::get<0>(p.param).name() + "_" + kind_name(std::get<1>(p.param));
    });

// ---------------------------------------------------------------------------
class GetrfBackends : public BackendTest<BackendCase> {};

// A zero column stays exactly zero through elimination, so U(j,j) = 0 for the
// first one inside min(m,n) on every backend and INFO is exact.
TEST_P(GetrfBackends, ZeroColumnsGiveLapackInfo) {
    const BackendCase c = GetParam();
    const int nb = c.block_size > 0 ? c.block_size : 64;
    const Shape shapes[] = {{1, 1}, {2, 2}, {17, 17}, {65, 65}, {100, 100}, {100, 37}, {37, 100}};
    for (Shape s : shapes) {
        const std::vector<std::vector<int>> column_sets = {
            {0}, {s.n / 2}, {s.n - 1}, {s.n / 2, s.n - 1}, {std::min(nb, s.n - 1)}};
        for (const std::vector<int>& zero : column_sets) {
            const uint64_t seed = test_seed();
            SCOPED_TRACE(describe(c.name(), s, seed) + " first zero column " +
                         std::to_string(zero[0]));
            const int lda = s.m + 1;
            const int info = check_getrf(c.options(), c.equals_lapack(), s,
                                         random_with_zero_columns(s, lda, zero, seed), lda);
            if (zero[0] < std::min(s.m, s.n)) {
                EXPECT_EQ(info, zero[0] + 1);
            }
        }
    }
}

// A zero row is never chosen as pivot while another candidate is nonzero, so
// it ends as the last pivot row of a square matrix: INFO = n, exactly.
TEST_P(GetrfBackends, ZeroRowGivesLapackInfo) {
    const BackendCase c = GetParam();
    const Shape shapes[] = {{2, 2}, {17, 17}, {65, 65}, {100, 100}, {100, 37}, {37, 100}};
    for (Shape s : shapes)
        for (int row : {0, s.m / 2, s.m - 1}) {
            const uint64_t seed = test_seed();
            SCOPED_TRACE(describe(c.name(), s, seed) + " zero row " + std::to_string(row));
            const int lda = s.m;
            std::vector<float> a = make_matrix(s.m, s.n, lda, MatrixKind::random, seed);
            for (int j = 0; j < s.n; ++j) a[static_cast<size_t>(row + j * lda)] = 0.0f;
            const int info = check_getrf(c.options(), c.equals_lapack(), s, a, lda);
            if (s.m <= s.n) {
                EXPECT_EQ(info, s.m);
            }
        }
}

TEST_P(GetrfBackends, ZeroMatrixGivesInfoOneAndIdentityPivots) {
    const BackendCase c = GetParam();
    for (Shape s : {Shape{1, 1}, Shape{5, 5}, Shape{17, 9}, Shape{9, 17}}) {
        SCOPED_TRACE(describe(c.name(), s, 0));
        std::vector<float> a(static_cast<size_t>(s.m * s.n), 0.0f);
        std::vector<int> ipiv(static_cast<size_t>(std::min(s.m, s.n)), -7);
        EXPECT_EQ(sgetrf(s.m, s.n, a.data(), s.m, ipiv.data(), c.options()), 1);
        EXPECT_EQ(ipiv, lapack_getrf(s.m, s.n, std::vector<float>(a.size(), 0.0f), s.m).ipiv);
        EXPECT_TRUE(std::all_of(a.begin(), a.end(), [](float x) { return x == 0.0f; }));
    }
}

TEST_P(GetrfBackends, EmptyMatrixIsANoOp) {
    const BackendCase c = GetParam();
    for (Shape s : {Shape{0, 0}, Shape{0, 5}, Shape{5, 0}}) {
        SCOPED_TRACE(describe(c.name(), s, 0));
        const int lda = std::max(1, s.m) + 2;
        std::vector<float> a(static_cast<size_t>(lda * std::max(1, s.n)), kPadding);
        const std::vector<float> before = a;
        std::vector<int> ipiv(1, -7);
        EXPECT_EQ(sgetrf(s.m, s.n, a.data(), lda, ipiv.data(), c.options()), 0);
        EXPECT_EQ(first_bit_difference(a, before), -1);
        EXPECT_EQ(ipiv[0], -7);
        // LAPACK allows null arrays when there is nothing to factor.
        EXPECT_EQ(sgetrf(s.m, s.n, nullptr, lda, nullptr, c.options()), 0);
    }
}

// Row-major A is column-major A^T: tandem must give the transposed storage of
// its column-major result, with the same pivots.
TEST_P(GetrfBackends, RowMajorIsTransposedStorageOfColMajor) {
    const BackendCase c = GetParam();
    const Shape shapes[] = {{1, 5}, {5, 1}, {17, 17}, {63, 63}, {65, 100}, {100, 65}};
    for (Shape s : shapes)
        for (bool singular : {false, true}) {
            const uint64_t seed = test_seed();
            SCOPED_TRACE(describe(c.name(), s, seed) + (singular ? " zero middle column" : ""));
            const int lda = s.m + 1, ldr = s.n + 2;
            const std::vector<float> a = singular
                                             ? random_with_zero_columns(s, lda, {s.n / 2}, seed)
                                             : make_matrix(s.m, s.n, lda, MatrixKind::random, seed);
            std::vector<float> lu_col = a;
            std::vector<int> ipiv_col(static_cast<size_t>(std::min(s.m, s.n)), -7);
            const int info_col = sgetrf(s.m, s.n, lu_col.data(), lda, ipiv_col.data(), c.options());
            std::vector<float> lu_row = to_row_major(s.m, s.n, a.data(), lda, ldr);
            std::vector<int> ipiv_row(ipiv_col.size(), -7);
            const int info_row =
                sgetrf(s.m, s.n, lu_row.data(), ldr, ipiv_row.data(), c.options(Layout::row_major));
            EXPECT_EQ(info_row, info_col);
            EXPECT_EQ(info_row, lapack_getrf(s.m, s.n, a, lda).info);
            EXPECT_EQ(ipiv_row, ipiv_col);
            EXPECT_EQ(padding_changes(s.n, s.m, ldr, lu_row.data()), 0);
            const std::vector<float> lu_row_as_col =
                to_col_major(s.m, s.n, lu_row.data(), ldr, lda);
            if (c.layouts_bit_identical()) {
                EXPECT_EQ(first_bit_difference(lu_row_as_col, lu_col), -1);
            }
            EXPECT_LT(factorization_residual(s.m, s.n, a.data(), lda, lu_row_as_col.data(), lda,
                                             ipiv_row.data()),
                      kResidualBound);
        }
}

TEST_P(GetrfBackends, ReportDescribesTheCall) {
    const BackendCase c = GetParam();
    const Shape s{100, 100};
    for (int zero_column : {-1, 50}) {
        const uint64_t seed = test_seed();
        SCOPED_TRACE(describe(c.name(), s, seed) + " zero column " + std::to_string(zero_column));
        const std::vector<int> zero =
            zero_column < 0 ? std::vector<int>{} : std::vector<int>{zero_column};
        Report report;
        report.predicted_seconds = 1.0;  // a reused Report: the call must not keep it
        const int info = check_getrf(c.options(), c.equals_lapack(), s,
                                     random_with_zero_columns(s, s.m, zero, seed), s.m, &report);
        EXPECT_EQ(info, zero_column + 1);
        EXPECT_EQ(report.info, info);
        EXPECT_EQ(report.backend, c.backend);
        EXPECT_GE(report.seconds, 0.0);
        EXPECT_FALSE(report.device.empty());
        // Only a plan made by the GPU's measured model predicts a time, the one
        // its text gives.
        const bool modelled = c.backend == Backend::gpu &&
                              !(c.placement != PanelPlacement::automatic && c.block_size > 0);
        EXPECT_EQ(report.predicted_seconds > 0.0, modelled) << report.plan;
        if (modelled) {
            char predicted[64];
            std::snprintf(predicted, sizeof predicted, "predicted %.2f ms",
                          1e3 * report.predicted_seconds);
            EXPECT_NE(report.plan.find(predicted), std::string::npos) << report.plan;
        }
        if (c.backend != Backend::host) continue;
        EXPECT_GE(report.steps, 1);
        EXPECT_EQ(report.inverse_steps + report.trsm_steps, report.steps);
        EXPECT_GT(report.block_size, 0);
        if (c.block_size > 0) {
            EXPECT_EQ(report.block_size, c.block_size);
            EXPECT_EQ(report.steps, (s.n + c.block_size - 1) / c.block_size);
        }
        EXPECT_FALSE(report.timeline.empty());
        for (const TimelineSpan& span : report.timeline) EXPECT_LE(span.start, span.end);
    }
}

INSTANTIATE_TEST_SUITE_P(Api, GetrfBackends, testing::ValuesIn(api_backend_cases()),
                         [](const auto& p) { return p.param.name(); });

// ---------------------------------------------------------------------------
// The largest sizes of the suite, on fewer configurations.
class GetrfLarger : public BackendTest<BackendCase> {};

TEST_P(GetrfLarger, MatchesLapackInfoWithSmallResidual) {
    const BackendCase c = GetParam();
    for (Shape s : {Shape{512, 512}, Shape{600, 300}, Shape{300, 600}}) {
        const uint64_t seed = test_seed();
        SCOPED_TRACE(describe(c.name(), s, seed));
        check_getrf(c.options(), c.equals_lapack(), s,
                    make_matrix(s.m, s.n, s.m, MatrixKind::random, seed), s.m);
    }
}

INSTANTIATE_TEST_SUITE_P(Api, GetrfLarger, testing::ValuesIn(api_backend_cases_short()),
                         [](const auto& p) { return p.param.name(); });

// ---------------------------------------------------------------------------
// The host backend's two ways of forming U12, each forced for every step, with
// and without look-ahead.
class GetrfHostU12Paths : public BackendTest<BackendCase> {};

TEST_P(GetrfHostU12Paths, TrsmOnlyAndInverseOnlyBothFactorCorrectly) {
    const BackendCase c = GetParam();
    for (int lookahead : {0, 1})
        for (float threshold : {0.0f, FLT_MAX})
            for (Shape s : {Shape{130, 130}, Shape{150, 97}, Shape{97, 150}}) {
                const uint64_t seed = test_seed();
                SCOPED_TRACE(describe(c.name(), s, seed) + " lookahead " +
                             std::to_string(lookahead) + " threshold " + std::to_string(threshold));
                Options options = c.options();
                options.lookahead = lookahead;
                options.inverse_threshold = threshold;
                Report report;
                EXPECT_EQ(check_getrf(options, false, s,
                                      make_matrix(s.m, s.n, s.m, MatrixKind::ill_conditioned, seed),
                                      s.m, &report),
                          0);
                EXPECT_GE(report.steps, 1);
                EXPECT_EQ(threshold == 0.0f ? report.trsm_steps : report.inverse_steps,
                          report.steps);
            }
}

std::vector<BackendCase> host_cases() {
    std::vector<BackendCase> cases;
    for (const BackendCase& c : api_backend_cases())
        if (c.backend == Backend::host) cases.push_back(c);
    return cases;
}

INSTANTIATE_TEST_SUITE_P(Api, GetrfHostU12Paths, testing::ValuesIn(host_cases()),
                         [](const auto& p) { return p.param.name(); });

// A call with no Report as a thread ends, from a thread_local's destructor that
// runs after tandem's own per-thread storage is gone (the object is built
// before the thread's first call, so it is destroyed after): the same factors
// and info as any call. Touching the destroyed storage would be a write to
// freed memory, which AddressSanitizer reports (tools/sanitize.sh).
struct FactorsAtThreadExit {
    std::vector<float>* a = nullptr;
    std::vector<int>* ipiv = nullptr;
    int* info = nullptr;
    ~FactorsAtThreadExit() {
        if (a) *info = sgetrf(8, 8, a->data(), 8, ipiv->data());
    }
};

TEST(ApiGetrf, CallWithoutReportAsItsThreadEnds) {
    const int n = 8;
    const std::vector<float> original = make_matrix(n, n, n, MatrixKind::random, test_seed());
    std::vector<float> a = original;
    std::vector<int> ipiv(n, 0);
    int info = -99;
    std::thread([&] {
        thread_local FactorsAtThreadExit at_exit;
        std::vector<float> first = original;
        std::vector<int> first_ipiv(n);
        EXPECT_EQ(sgetrf(n, n, first.data(), n, first_ipiv.data()), 0);
        at_exit.a = &a;
        at_exit.ipiv = &ipiv;
        at_exit.info = &info;
    }).join();
    const LapackFactors expected = lapack_getrf(n, n, original, n);
    EXPECT_EQ(info, expected.info);
    EXPECT_EQ(ipiv, expected.ipiv);
    EXPECT_EQ(first_bit_difference(a, expected.lu), -1);
}

}  // namespace
}  // namespace tandem::test
