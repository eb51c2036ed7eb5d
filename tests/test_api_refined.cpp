// tandem::sgesv_refined and sgesv_refined_gpu through the public API, on every
// backend (the emulated host devices round the updates' operands to TF32 or
// BF16, so refinement has real work there too). Oracles: the stopping test
// itself, recomputed here in double (||b_j - A x_j||_inf <= 2^-23 ||A||_inf
// ||x_j||_inf); A and B unchanged when it succeeds; and where it falls back,
// exactly tandem::sgesv's answer (A, ipiv, X, info) with the same options.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "api_backends.hpp"
#include "lapack_oracle.hpp"
#include "tandem/tandem.h"
#include "tandem/tandem.hpp"
#include "test_support.hpp"

namespace tandem::test {
namespace {

constexpr double kTest = 0x1p-23;  // the documented stopping test

struct Refined {
    int info = 0;
    int iter = 99;
    std::vector<float> a;
    std::vector<int> ipiv;
    std::vector<float> x;
    Report report;
};

Refined run_refined(const Options& options, int n, int nrhs, const std::vector<float>& a, int lda,
                    const std::vector<float>& b, int ldb, int ldx, bool device_api = false) {
    Refined r;
    r.a = a;
    r.ipiv.assign(static_cast<size_t>(std::max(n, 1)), -7);
    r.x.assign(static_cast<size_t>(ldx) * std::max(nrhs, 1), kPadding);
    r.info = device_api ? sgesv_refined_gpu(n, nrhs, r.a.data(), lda, r.ipiv.data(), b.data(), ldb,
                                            r.x.data(), ldx, &r.iter, options, &r.report)
                        : sgesv_refined(n, nrhs, r.a.data(), lda, r.ipiv.data(), b.data(), ldb,
                                        r.x.data(), ldx, &r.iter, options, &r.report);
    return r;
}

// tandem::sgesv with the same options: what a fallback must give.
struct Plain {
    int info;
    std::vector<float> a, x;
    std::vector<int> ipiv;
};
Plain run_sgesv(const Options& options, int n, int nrhs, const std::vector<float>& a, int lda,
                const std::vector<float>& b, int ldb) {
    Plain p{0, a, b, std::vector<int>(static_cast<size_t>(std::max(n, 1)), -7)};
    p.info = sgesv(n, nrhs, p.a.data(), lda, p.ipiv.data(), p.x.data(), ldb, options);
    return p;
}

std::string describe(const BackendCase& c, int n, int nrhs, uint64_t seed) {
    return c.name() + " n=" + std::to_string(n) + " nrhs=" + std::to_string(nrhs) +
           " seed=" + std::to_string(seed);
}

// Refinement succeeded: the test holds, A and B are as they were, X's
// padding is untouched. Or it fell back: the answer is sgesv's.
void check_answer(const BackendCase& c, const Options& options, int n, int nrhs,
                  const std::vector<float>& a, int lda, const std::vector<float>& b, int ldb,
                  int ldx, const Refined& r) {
    if (r.iter >= 0) {
        EXPECT_EQ(r.info, 0) << r.report.message;
        EXPECT_EQ(first_bit_difference(r.a, a), -1) << "A changed";
        EXPECT_LE(inf_backward_error(n, nrhs, a.data(), lda, r.x.data(), ldx, b.data(), ldb), kTest)
            << r.report.message;
        for (int i = 0; i < n; ++i) {
            EXPECT_GE(r.ipiv[i], i + 1);
            EXPECT_LE(r.ipiv[i], n);
        }
    } else {
        const Plain p = run_sgesv(options, n, nrhs, a, lda, b, ldb);
        EXPECT_EQ(r.info, p.info);
        EXPECT_EQ(first_bit_difference(r.a, p.a), -1);
        EXPECT_EQ(r.ipiv, p.ipiv);
        if (p.info == 0) {  // bit for bit (NaN included)
            std::vector<float> got, expected;
            for (int j = 0; j < nrhs; ++j)
                for (int i = 0; i < n; ++i) {
                    got.push_back(r.x[i + size_t(j) * ldx]);
                    expected.push_back(p.x[i + size_t(j) * ldb]);
                }
            EXPECT_EQ(first_bit_difference(got, expected), -1);
        }
    }
    for (int j = 0; j < nrhs; ++j)
        for (int i = n; i < ldx; ++i) EXPECT_EQ(r.x[i + size_t(j) * ldx], kPadding);
    EXPECT_EQ(r.report.info, r.info);
    if (c.backend == Backend::cpu) { EXPECT_EQ(r.iter, -1) << "the CPU path never refines"; }
}

class RefinedKinds : public BackendTest<std::tuple<BackendCase, MatrixKind>> {};

TEST_P(RefinedKinds, MeetsTheTestOrAnswersAsSgesv) {
    const BackendCase c = std::get<0>(GetParam());
    const MatrixKind kind = std::get<1>(GetParam());
    for (int n : {1, 17, 100, 300})
        for (int nrhs : {1, 3}) {
            const uint64_t seed = test_seed();
            SCOPED_TRACE(describe(c, n, nrhs, seed));
            const int lda = n + 1, ldb = n + 2, ldx = n + 3;
            const std::vector<float> a = make_matrix(n, n, lda, kind, seed);
            const std::vector<float> b = make_matrix(n, nrhs, ldb, MatrixKind::random, seed + 1);
            const Refined r = run_refined(c.options(), n, nrhs, a, lda, b, ldb, ldx);
            check_answer(c, c.options(), n, nrhs, a, lda, b, ldb, ldx, r);
            if (kind != MatrixKind::ill_conditioned && c.backend != Backend::cpu) {
                EXPECT_GE(r.iter, 0) << "a well-conditioned matrix fell back: " << r.report.message;
            }
        }
}

INSTANTIATE_TEST_SUITE_P(
    Api, RefinedKinds,
    testing::Combine(testing::ValuesIn(api_backend_cases_short()),
                     testing::Values(MatrixKind::random, MatrixKind::diagonally_dominant,
                                     MatrixKind::badly_scaled, MatrixKind::ill_conditioned)),
    [](const auto& p) {
        return std::get<0>(p.param).name() + "_" + kind_name(std::get<1>(p.param));
    });

class RefinedBackends : public BackendTest<BackendCase> {};

// Many steps whose updates round to TF32 / BF16: the first solve misses the
// test, so the corrections are what passes it.
TEST_P(RefinedBackends, CorrectsLowerPrecisionFactors) {
    const BackendCase c = GetParam();
    if (c.backend == Backend::cpu) GTEST_SKIP() << "the CPU path does not refine";
    for (UpdatePrecision precision : {UpdatePrecision::tf32, UpdatePrecision::bf16}) {
        const int n = 300, nrhs = 2, lda = n, ldb = n, ldx = n;
        const uint64_t seed = test_seed();
        SCOPED_TRACE(describe(c, n, nrhs, seed) + (precision == UpdatePrecision::tf32 ? " tf32" : " bf16"));
        Options options = c.options();
        options.block_size = 8;
        options.placement = PanelPlacement::device;
        options.update_precision = precision;
        const std::vector<float> a = make_matrix(n, n, lda, MatrixKind::random, seed);
        const std::vector<float> b = make_matrix(n, nrhs, ldb, MatrixKind::random, seed + 1);
        const Refined r = run_refined(options, n, nrhs, a, lda, b, ldb, ldx);
        check_answer(c, options, n, nrhs, a, lda, b, ldb, ldx, r);
        EXPECT_GE(r.iter, 1) << r.report.message;
        EXPECT_NE(r.report.message.find("refined: "), std::string::npos) << r.report.message;
    }
}

// U(j,j) = 0 exactly in any precision: iter -3 and sgesv's info and factors.
TEST_P(RefinedBackends, SingularMatrixFallsBackWithLapacksInfo) {
    const BackendCase c = GetParam();
    for (int n : {1, 65, 100}) {
        const uint64_t seed = test_seed();
        SCOPED_TRACE(describe(c, n, 2, seed));
        const int zero_column = n / 2;
        std::vector<float> a = make_matrix(n, n, n, MatrixKind::random, seed);
        for (int i = 0; i < n; ++i) a[static_cast<size_t>(i + zero_column * n)] = 0.0f;
        const std::vector<float> b = make_matrix(n, 2, n, MatrixKind::random, seed + 1);
        const Refined r = run_refined(c.options(), n, 2, a, n, b, n, n);
        EXPECT_EQ(r.info, zero_column + 1);
        EXPECT_EQ(r.iter, c.backend == Backend::cpu ? -1 : -3) << r.report.message;
        check_answer(c, c.options(), n, 2, a, n, b, n, n, r);
    }
}

// Inf or NaN in A, or NaN in B: never info 0 with a refined answer (iter -2),
// and sgesv's factors and answer.
TEST_P(RefinedBackends, InfAndNanFallBack) {
    const BackendCase c = GetParam();
    const int n = 100, nrhs = 2;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    for (int where : {0, 1, 2}) {
        const uint64_t seed = test_seed();
        SCOPED_TRACE(describe(c, n, nrhs, seed) + " case " + std::to_string(where));
        std::vector<float> a = make_matrix(n, n, n, MatrixKind::random, seed);
        std::vector<float> b = make_matrix(n, nrhs, n, MatrixKind::random, seed + 1);
        if (where == 0) a[40 + 60 * n] = nan;
        if (where == 1) a[3 + 70 * n] = inf;
        if (where == 2) b[50 + n] = nan;
        const Refined r = run_refined(c.options(), n, nrhs, a, n, b, n, n);
        EXPECT_EQ(r.iter, c.backend == Backend::cpu ? -1 : -2) << r.report.message;
        check_answer(c, c.options(), n, nrhs, a, n, b, n, n, r);
    }
}

TEST_P(RefinedBackends, RowMajorMatchesColumnMajorTest) {
    const BackendCase c = GetParam();
    const int n = 100, nrhs = 3, lda_row = n + 2, ldb_row = nrhs + 1, ldx_row = nrhs + 2;
    const uint64_t seed = test_seed();
    SCOPED_TRACE(describe(c, n, nrhs, seed));
    const std::vector<float> a = make_matrix(n, n, n, MatrixKind::random, seed);
    const std::vector<float> b = make_matrix(n, nrhs, n, MatrixKind::random, seed + 1);
    const std::vector<float> a_row = to_row_major(n, n, a.data(), n, lda_row);
    const std::vector<float> b_row = to_row_major(n, nrhs, b.data(), n, ldb_row);
    Refined r;
    r.a = a_row;
    r.ipiv.assign(n, -7);
    r.x.assign(static_cast<size_t>(n) * ldx_row, kPadding);
    r.info = sgesv_refined(n, nrhs, r.a.data(), lda_row, r.ipiv.data(), b_row.data(), ldb_row,
                           r.x.data(), ldx_row, &r.iter, c.options(Layout::row_major), &r.report);
    EXPECT_EQ(r.info, 0);
    std::vector<float> x(static_cast<size_t>(n) * nrhs);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < nrhs; ++j) x[i + size_t(j) * n] = r.x[size_t(i) * ldx_row + j];
    if (r.iter >= 0) {
        EXPECT_EQ(first_bit_difference(r.a, a_row), -1) << "A changed";
        EXPECT_LE(inf_backward_error(n, nrhs, a.data(), n, x.data(), n, b.data(), n), kTest);
    } else {
        EXPECT_LT(solve_residual(n, nrhs, a.data(), n, x.data(), n, b.data(), n), kResidualBound);
    }
}

// sgesv_refined_gpu: with the emulated devices, "GPU memory" is host memory.
TEST_P(RefinedBackends, DeviceMemoryCallOnHostDevices) {
    const BackendCase c = GetParam();
    if (c.backend != Backend::host) GTEST_SKIP() << "host memory is GPU memory only for backend host";
    Options options = c.options();
    options.num_devices = 1;
    const int n = 200, nrhs = 2, lda = n + 1, ldb = n, ldx = n + 1;
    const uint64_t seed = test_seed();
    SCOPED_TRACE(describe(c, n, nrhs, seed));
    const std::vector<float> a = make_matrix(n, n, lda, MatrixKind::random, seed);
    const std::vector<float> b = make_matrix(n, nrhs, ldb, MatrixKind::random, seed + 1);
    const Refined r = run_refined(options, n, nrhs, a, lda, b, ldb, ldx, true);
    EXPECT_GE(r.iter, 0) << r.report.message;
    check_answer(c, options, n, nrhs, a, lda, b, ldb, ldx, r);
}

INSTANTIATE_TEST_SUITE_P(Api, RefinedBackends, testing::ValuesIn(api_backend_cases_short()),
                         [](const auto& p) { return p.param.name(); });

TEST(RefinedArguments, BadArgumentsLeaveArraysUntouched) {
    const int n = 10;
    std::vector<float> a = make_matrix(n, n, n, MatrixKind::random, 1);
    std::vector<float> b = make_matrix(n, 1, n, MatrixKind::random, 2);
    const std::vector<float> a0 = a;
    std::vector<float> x(n, kPadding);
    std::vector<int> ipiv(n, -7);
    int iter = 99;
    Options bad_options;
    bad_options.lookahead = 5;
    EXPECT_EQ(sgesv_refined(n, 1, a.data(), n, ipiv.data(), b.data(), n, b.data(), n, &iter), -8);
    EXPECT_EQ(sgesv_refined(n, 1, a.data(), n, ipiv.data(), b.data(), n, nullptr, n, &iter), -8);
    EXPECT_EQ(sgesv_refined(n, 1, a.data(), n, ipiv.data(), b.data(), n, x.data(), n - 1, &iter), -9);
    EXPECT_EQ(sgesv_refined(n, 1, a.data(), n, ipiv.data(), b.data(), n, x.data(), n, nullptr), -10);
    EXPECT_EQ(sgesv_refined(n, 1, a.data(), n, ipiv.data(), b.data(), n, x.data(), n, &iter,
                            bad_options),
              -11);
    EXPECT_EQ(sgesv_refined(-1, 1, a.data(), n, ipiv.data(), b.data(), n, x.data(), n, &iter), -1);
    EXPECT_EQ(first_bit_difference(a, a0), -1);
    EXPECT_EQ(iter, 99);
    for (float v : x) EXPECT_EQ(v, kPadding);
    EXPECT_EQ(sgesv_refined_gpu(n, 1, a.data(), n, ipiv.data(), b.data(), n, x.data(), n, nullptr),
              -10);
    // Empty systems.
    EXPECT_EQ(sgesv_refined(0, 1, nullptr, 1, nullptr, nullptr, 1, nullptr, 1, &iter), 0);
    EXPECT_EQ(iter, 0);
}

TEST(RefinedArguments, CAbiCountsTheLayoutArgument) {
    const int n = 50;
    const std::vector<float> a0 = make_matrix(n, n, n, MatrixKind::random, 3);
    const std::vector<float> b = make_matrix(n, 1, n, MatrixKind::random, 4);
    std::vector<float> a = a0, x(n);
    std::vector<int> ipiv(n);
    int iter = 99;
    EXPECT_EQ(tandem_sgesv_refined(TANDEM_COL_MAJOR, n, 1, a.data(), n, ipiv.data(), b.data(), n,
                                   nullptr, n, &iter),
              -9);
    EXPECT_NE(std::string(tandem_last_error()).find("argument 9"), std::string::npos)
        << tandem_last_error();
    EXPECT_EQ(tandem_sgesv_refined(TANDEM_COL_MAJOR, n, 1, a.data(), n, ipiv.data(), b.data(), n,
                                   x.data(), n, &iter),
              0);
    if (iter >= 0) {
        EXPECT_EQ(first_bit_difference(a, a0), -1);
        EXPECT_LE(inf_backward_error(n, 1, a0.data(), n, x.data(), n, b.data(), n), kTest);
    } else {
        EXPECT_LT(solve_residual(n, 1, a0.data(), n, x.data(), n, b.data(), n), kResidualBound);
    }
}

}  // namespace
}  // namespace tandem::test
