// tandem's own CPU panel (cpu/recursive_panel.hpp) against LAPACK's sgetrf on
// the same panels. Oracles: LAPACK's INFO, the residual ||P A - L U|| / (m ||A||
// eps) < 30, padding untouched, and LAPACK's pivots. Both codes pick the largest
// |value| (first row on ties), but they round differently, so on two nearly equal
// candidates they may pick different rows; pivots must then agree up to the
// first difference, and there the two chosen |U(k,k)| must agree to rounding (a
// wrong pivot shows as a gap, a near tie does not).
#include <cblas.h>
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/blas_threads.hpp"
#include "scheduler/cpu_backend.hpp"
#include "scheduler/cpu_panel.hpp"
#include "cpu/recursive_panel.hpp"
#include "lapack_oracle.hpp"
#include "tandem/tandem.hpp"
#include "test_support.hpp"

namespace tandem::test {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

struct PanelCase {
    int rows;
    int width;
    int threads;
    int base_width;  // 0 = automatic
};

std::string describe(const PanelCase& c, uint64_t seed) {
    return std::to_string(c.rows) + " x " + std::to_string(c.width) + ", threads " +
           std::to_string(c.threads) + ", base width " + std::to_string(c.base_width) + ", seed " +
           std::to_string(seed) + " (TANDEM_TEST_SEED reproduces it)";
}

int leading_dimension(const PanelCase& c) { return c.rows + 3; }

struct PanelFactors {
    std::vector<float> lu;
    std::vector<int> ipiv;
    int info = 0;
};

PanelFactors factor_copy(const PanelCase& c, const std::vector<float>& a) {
    PanelFactors f{a, std::vector<int>(static_cast<size_t>(c.width), -7), 0};
    PanelOptions options;
    options.threads = c.threads;
    options.base_width = c.base_width;
    f.info = factor_panel_recursive(c.rows, c.width, f.lu.data(), leading_dimension(c),
                                    f.ipiv.data(), options);
    return f;
}

testing::AssertionResult pivots_match(const PanelFactors& ours, const LapackFactors& lapack,
                                      int ld) {
    const size_t width = ours.ipiv.size();
    size_t k = 0;
    while (k < width && ours.ipiv[k] == lapack.ipiv[k]) ++k;
    if (k == width) return testing::AssertionSuccess();
    const float ours_u = std::fabs(ours.lu[k + k * static_cast<size_t>(ld)]);
    const float lapack_u = std::fabs(lapack.lu[k + k * static_cast<size_t>(ld)]);
    const float gap = std::fabs(ours_u - lapack_u);
    if (gap <= 1e-4f * std::max(ours_u, lapack_u))
        return testing::AssertionSuccess() << "near tie at column " << k;
    return testing::AssertionFailure()
           << "pivot of column " << k << ": ours row " << ours.ipiv[k] << " (|U(k,k)| " << ours_u
           << "), LAPACK row " << lapack.ipiv[k] << " (|U(k,k)| " << lapack_u << ")";
}

// Factors a copy of `a` and checks it against LAPACK; returns our factors.
PanelFactors check_panel(const PanelCase& c, const std::vector<float>& a, bool compare_pivots) {
    const int ld = leading_dimension(c);
    const PanelFactors ours = factor_copy(c, a);
    const LapackFactors lapack = lapack_getrf(c.rows, c.width, a, ld);
    EXPECT_EQ(ours.info, lapack.info);
    EXPECT_LT(
        factorization_residual(c.rows, c.width, a.data(), ld, ours.lu.data(), ld, ours.ipiv.data()),
        kResidualBound);
    EXPECT_EQ(padding_changes(c.rows, c.width, ld, ours.lu.data()), 0);
    if (compare_pivots) { EXPECT_TRUE(pivots_match(ours, lapack, ld)); }
    return ours;
}

PanelFactors check_random_panel(const PanelCase& c) {
    const uint64_t seed = test_seed();
    SCOPED_TRACE(describe(c, seed));
    return check_panel(
        c, make_matrix(c.rows, c.width, leading_dimension(c), MatrixKind::random, seed), true);
}

// Widths around the base case and group sizes, odd row counts; the big widths
// with modest row counts (the residual check costs m n^2 / 2 in double).
const PanelCase kShapes[] = {
    {1001, 1, 0, 0},  {999, 2, 0, 0},   {1003, 3, 0, 0},   {777, 31, 0, 0},  {777, 32, 0, 0},
    {777, 33, 0, 0},  {513, 64, 0, 0},  {401, 100, 0, 0},  {383, 255, 0, 0}, {300, 256, 0, 0},
    {301, 257, 0, 0}, {601, 512, 0, 0}, {1031, 1024, 0, 0}};

// (threads, base width): automatic; 4 threads; the smallest groups; base widths
// that are not multiples of the group width (groups then straddle the threads'
// row blocks); a recursion down to single columns.
struct Config {
    int threads;
    int base_width;
};
const Config kConfigs[] = {{0, 0}, {4, 0}, {3, 16}, {2, 24}, {3, 12}, {1, 1}};

TEST(CpuPanel, MatchesLapackOverWidthsThreadsAndBaseWidths) {
    for (const PanelCase& shape : kShapes) {
        for (const Config& config : kConfigs) {
            if (shape.width == 1024 && config.base_width == 1) continue;  // slow, adds nothing
            check_random_panel({shape.rows, shape.width, config.threads, config.base_width});
        }
    }
}

TEST(CpuPanel, RowsEqualToWidth) {
    for (const int n : {1, 2, 3, 17, 64, 100, 257})
        for (const int base_width : {0, 16}) check_random_panel({n, n, 4, base_width});
}

TEST(CpuPanel, TinyPanelsAndMoreThreadsThanRows) {
    const PanelCase cases[] = {{1, 1, 1, 0}, {2, 1, 1, 0}, {1, 1, 8, 0}, {2, 1, 8, 0},
                               {3, 2, 8, 0}, {5, 5, 8, 0}, {5, 3, 8, 1}, {40, 7, 64, 0}};
    for (const PanelCase& c : cases) check_random_panel(c);
}

// Every thread count on one panel (its GEMMs split by rows round differently per
// split, so the factors agree with LAPACK's to rounding, not bit for bit).
TEST(CpuPanel, ThreadCounts) {
    const uint64_t seed = test_seed();
    const PanelCase c{997, 96, 1, 32};
    SCOPED_TRACE(describe(c, seed));
    const std::vector<float> a =
        make_matrix(c.rows, c.width, leading_dimension(c), MatrixKind::random, seed);
    for (const int threads : {1, 2, 3, 4, 7, 8, 31}) {
        SCOPED_TRACE("threads " + std::to_string(threads));
        check_panel({c.rows, c.width, threads, c.base_width}, a, true);
    }
}

// The automatic team: all of OpenMP's threads down to 512 rows a thread, at
// most max_threads when that is set (the factorization's CPU panels);
// an explicit count goes down to 32 rows a thread and ignores the cap.
TEST(CpuPanel, AutomaticTeamIsCapped) {
    const int all = omp_get_max_threads();
    PanelOptions capped;
    capped.max_threads = 3;
    EXPECT_EQ(panel_threads(int64_t(1) << 20, capped), std::min(all, 3));
    EXPECT_EQ(panel_threads(int64_t(1) << 20), all);
    EXPECT_EQ(panel_threads(600, capped), 1);  // short panels keep their small team
    PanelOptions explicit_count = capped;
    explicit_count.threads = 5;
    EXPECT_EQ(panel_threads(600, explicit_count), 5);
    EXPECT_GE(cpu_panel_team_size(), 1);
    EXPECT_LE(cpu_panel_team_size(), std::max(1, all / 2));
    PanelOptions negative;
    negative.max_threads = -1;
    std::vector<float> a(100, 1.0f);
    std::vector<int> ipiv(10);
    EXPECT_THROW(factor_panel_recursive(10, 2, a.data(), 10, ipiv.data(), negative), Error);
}

// How the team spent a panel: the threads that ran, the factorization's wall
// time, the least CPU time of one of them (never above the wall time) and
// their involuntary context switches; LAPACK's panel says nothing (zeros,
// over a usage left from an earlier call).
TEST(CpuPanel, ReportsHowItsTeamSpentThePanel) {
    const uint64_t seed = test_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    const int rows = 3000, width = 96;
    const std::vector<float> a = make_matrix(rows, width, rows, MatrixKind::random, seed);
    for (const int threads : {1, 2, 3}) {
        SCOPED_TRACE("threads=" + std::to_string(threads));
        std::vector<float> lu = a;
        std::vector<int> ipiv(width);
        PanelTeamUsage usage;
        EXPECT_EQ(factor_panel(rows, width, lu.data(), rows, ipiv.data(), PanelMethod::recursive,
                               threads, &usage),
                  0);
        PanelOptions capped;
        capped.max_threads = threads;
        EXPECT_GE(usage.threads, 1);
        EXPECT_LE(usage.threads, panel_threads(rows, capped));
        EXPECT_GT(usage.seconds, 0.0);
        EXPECT_GE(usage.least_thread_cpu_seconds, 0.0);
        EXPECT_LE(usage.least_thread_cpu_seconds, usage.seconds + 1e-3);
        EXPECT_GE(usage.involuntary_switches, 0);
        EXPECT_LT(factorization_residual(rows, width, a.data(), rows, lu.data(), rows, ipiv.data()),
                  kResidualBound);
        lu = a;
        EXPECT_EQ(factor_panel(rows, width, lu.data(), rows, ipiv.data(), PanelMethod::lapack,
                               threads, &usage),
                  0);
        EXPECT_EQ(usage.threads, 0);
        EXPECT_EQ(usage.seconds, 0.0);
        EXPECT_EQ(usage.involuntary_switches, 0);
    }
}

// A panel that starts anywhere in memory (the threads' row blocks follow the
// cache lines of its columns) and inside a larger matrix.
TEST(CpuPanel, PanelInsideALargerMatrix) {
    for (const int offset : {1, 5, 9, 13}) {
        const uint64_t seed = test_seed();
        const PanelCase c{613, 45, 4, 12};
        SCOPED_TRACE(describe(c, seed) + ", panel at float offset " + std::to_string(offset));
        const int ld = leading_dimension(c);
        std::vector<float> a = make_matrix(c.rows, c.width, ld, MatrixKind::random, seed);
        std::vector<float> shifted(a.size() + 16, kPadding);
        std::copy(a.begin(), a.end(), shifted.begin() + offset);
        std::vector<int> ipiv(static_cast<size_t>(c.width));
        PanelOptions options;
        options.threads = c.threads;
        options.base_width = c.base_width;
        const int info = factor_panel_recursive(c.rows, c.width, shifted.data() + offset, ld,
                                                ipiv.data(), options);
        const std::vector<float> lu(shifted.begin() + offset, shifted.begin() + offset + a.size());
        const LapackFactors lapack = lapack_getrf(c.rows, c.width, a, ld);
        EXPECT_EQ(info, lapack.info);
        EXPECT_LT(factorization_residual(c.rows, c.width, a.data(), ld, lu.data(), ld, ipiv.data()),
                  kResidualBound);
        EXPECT_TRUE(pivots_match({lu, ipiv, info}, lapack, ld));
        EXPECT_EQ(padding_changes(c.rows, c.width, ld, lu.data()), 0);
        for (int i = 0; i < offset; ++i) EXPECT_EQ(shifted[static_cast<size_t>(i)], kPadding);
    }
}

// Panels factored concurrently from an enclosing parallel region (each by a team
// of one, nested parallelism being off): right results, and OpenBLAS's thread
// count, which a panel sets to 1 while it runs, restored afterwards.
TEST(CpuPanel, ConcurrentPanelsRestoreBlasThreads) {
    const int blas_threads = openblas_get_num_threads();
    const uint64_t seed = test_seed();
    const PanelCase c{500, 70, 0, 0};
    SCOPED_TRACE(describe(c, seed));
    const std::vector<float> a =
        make_matrix(c.rows, c.width, leading_dimension(c), MatrixKind::random, seed);
    const LapackFactors lapack = lapack_getrf(c.rows, c.width, a, leading_dimension(c));
    std::vector<PanelFactors> results(4);
#pragma omp parallel for num_threads(4)
    for (int k = 0; k < 4; ++k) results[static_cast<size_t>(k)] = factor_copy(c, a);
    for (const PanelFactors& f : results) {
        EXPECT_EQ(f.info, lapack.info);
        EXPECT_TRUE(pivots_match(f, lapack, leading_dimension(c)));
        EXPECT_LT(factorization_residual(c.rows, c.width, a.data(), leading_dimension(c),
                                         f.lu.data(), leading_dimension(c), f.ipiv.data()),
                  kResidualBound);
    }
    EXPECT_EQ(openblas_get_num_threads(), blas_threads);
}

// Where tandem chose the CPU, LAPACK's small solves of a few right-hand sides
// run on one of OpenBLAS's threads (LapackThreads::by_size): the solutions are
// right, and OpenBLAS's thread count is the caller's after each call, on one
// thread or not.
TEST(CpuLapackPath, SolvesBySizeRestoreBlasThreads) {
    const int blas_threads = openblas_get_num_threads();
    for (const int n : {64, 300, 700})
        for (const int nrhs : {1, 3, 8, 20}) {
            const uint64_t seed = test_seed();
            SCOPED_TRACE("n=" + std::to_string(n) + " nrhs=" + std::to_string(nrhs) +
                         " seed=" + std::to_string(seed));
            const std::vector<float> a = make_matrix(n, n, n, MatrixKind::random, seed);
            const std::vector<float> b = make_matrix(n, nrhs, n, MatrixKind::random, seed + 1);
            std::vector<float> lu = a, x = b;
            std::vector<int> ipiv(static_cast<size_t>(n));
            ASSERT_EQ(tandem::lapack_getrf(n, n, lu.data(), n, ipiv.data()), 0);
            EXPECT_LT(factorization_residual(n, n, a.data(), n, lu.data(), n, ipiv.data()),
                      kResidualBound);
            tandem::lapack_getrs('N', n, nrhs, lu.data(), n, ipiv.data(), x.data(), n,
                                 LapackThreads::by_size);
            EXPECT_EQ(openblas_get_num_threads(), blas_threads);
            EXPECT_LT(solve_residual(n, nrhs, a.data(), n, x.data(), n, b.data(), n), kResidualBound);
        }
}

TEST(CpuPanel, ZeroColumnsGiveLapacksInfo) {
    const std::vector<std::vector<int>> zero_columns = {{0}, {50}, {99}, {17, 60}, {64, 65}};
    for (const Config& config : {Config{3, 16}, Config{4, 0}}) {
        const PanelCase c{403, 100, config.threads, config.base_width};
        for (const std::vector<int>& columns : zero_columns) {
            const uint64_t seed = test_seed();
            SCOPED_TRACE(describe(c, seed) + ", first zero column " + std::to_string(columns[0]));
            std::vector<float> a =
                make_matrix(c.rows, c.width, leading_dimension(c), MatrixKind::random, seed);
            for (const int j : columns)
                std::fill_n(a.begin() + j * leading_dimension(c), c.rows, 0.0f);
            const PanelFactors f = check_panel(c, a, true);
            EXPECT_EQ(f.info, columns[0] + 1);
            for (const int j : columns) EXPECT_EQ(f.ipiv[static_cast<size_t>(j)], j + 1);
        }
    }
}

TEST(CpuPanel, ZeroPanelKeepsDiagonalPivots) {
    const PanelCase c{130, 40, 3, 16};
    const std::vector<float> a(static_cast<size_t>(leading_dimension(c) * c.width), 0.0f);
    const PanelFactors f = factor_copy(c, a);
    EXPECT_EQ(f.info, 1);
    for (int k = 0; k < c.width; ++k) EXPECT_EQ(f.ipiv[static_cast<size_t>(k)], k + 1);
    EXPECT_EQ(first_bit_difference(f.lu, a), -1);
}

// Equal |values| in different threads' rows: the first row wins, as in isamax.
TEST(CpuPanel, TiesGoToTheFirstRow) {
    const uint64_t seed = test_seed();
    const PanelCase c{1000, 8, 4, 0};
    SCOPED_TRACE(describe(c, seed));
    std::vector<float> a =
        make_matrix(c.rows, c.width, leading_dimension(c), MatrixKind::random, seed);
    for (int i = 0; i < c.rows; ++i) a[static_cast<size_t>(i)] *= 0.5f;
    a[900] = 1.0f;
    a[300] = -1.0f;
    a[301] = 1.0f;
    a[700] = -1.0f;
    const PanelFactors f = check_panel(c, a, true);
    EXPECT_EQ(f.ipiv[0], 301);
}

// A pivot below sfmin (1 / pivot overflows): LAPACK divides instead of scaling.
TEST(CpuPanel, TinyPivotDividesInsteadOfScaling) {
    const uint64_t seed = test_seed();
    const PanelCase c{300, 4, 2, 0};
    SCOPED_TRACE(describe(c, seed));
    std::vector<float> a =
        make_matrix(c.rows, c.width, leading_dimension(c), MatrixKind::random, seed);
    for (int i = 0; i < c.rows; ++i) a[static_cast<size_t>(i)] = std::ldexp(a[i], -130);
    // LAPACK's own scaling here is not the oracle: some builds multiply by an
    // infinite 1 / pivot.
    const PanelFactors f = check_panel(c, a, false);
    std::vector<float> column(a.begin(), a.begin() + c.rows);  // P applied to column 0
    for (int k = 0; k < c.width; ++k)
        std::swap(column[static_cast<size_t>(k)], column[static_cast<size_t>(f.ipiv[k] - 1)]);
    for (int i = 1; i < c.rows; ++i) {
        ASSERT_TRUE(std::isfinite(f.lu[static_cast<size_t>(i)])) << "row " << i;
        EXPECT_EQ(f.lu[static_cast<size_t>(i)], column[static_cast<size_t>(i)] / column[0])
            << "row " << i;
    }
}

TEST(CpuPanel, OtherMatrixKinds) {
    const PanelCase c{517, 130, 3, 32};
    for (const MatrixKind kind :
         {MatrixKind::diagonally_dominant, MatrixKind::badly_scaled, MatrixKind::ill_conditioned}) {
        const uint64_t seed = test_seed();
        SCOPED_TRACE(describe(c, seed) + ", " + kind_name(kind));
        const std::vector<float> a = make_matrix(c.rows, c.width, leading_dimension(c), kind, seed);
        const PanelFactors f = check_panel(c, a, kind != MatrixKind::ill_conditioned);
        if (kind == MatrixKind::diagonally_dominant) {
            for (int k = 0; k < c.width; ++k) EXPECT_EQ(f.ipiv[static_cast<size_t>(k)], k + 1);
        }
    }
}

TEST(CpuPanel, RejectsInvalidPanels) {
    std::vector<float> a(100, 1.0f);
    std::vector<int> ipiv(10);
    EXPECT_THROW(factor_panel_recursive(5, 6, a.data(), 10, ipiv.data()), Error);  // rows < width
    EXPECT_THROW(factor_panel_recursive(10, 2, a.data(), 9, ipiv.data()), Error);  // ld < rows
    EXPECT_THROW(factor_panel_recursive(10, 0, a.data(), 10, ipiv.data()), Error);
    PanelOptions negative;
    negative.threads = -1;
    EXPECT_THROW(factor_panel_recursive(10, 2, a.data(), 10, ipiv.data(), negative), Error);
}

// inv(L11) of a factored panel's unit lower triangle: L11 * inv = I to
// rounding, zero above the diagonal, with OpenBLAS held single-threaded (as in
// the factorization) and not. The returned 1-norm is the inverse's.
TEST(CpuPanel, InvertUnitLowerBothWays) {
    const uint64_t seed = test_seed();
    SCOPED_TRACE("seed " + std::to_string(seed));
    for (const bool held : {true, false}) {
        std::unique_ptr<SingleThreadedBlas> single;
        if (held) single = std::make_unique<SingleThreadedBlas>();
        else if (openblas_get_num_threads() < 2) openblas_set_num_threads(2);
        for (const int width : {1, 31, 64, 65, 200, 512}) {
            SCOPED_TRACE((held ? "held, width " : "width ") + std::to_string(width));
            const int ld = width + 3, ldi = width + 1;
            std::vector<float> panel = make_matrix(width, width, ld, MatrixKind::random, seed);
            std::vector<int> ipiv(static_cast<size_t>(width));
            ASSERT_EQ(factor_panel(width, width, panel.data(), ld, ipiv.data(), PanelMethod::lapack), 0);
            std::vector<float> inv(static_cast<size_t>(ldi) * width, kNaN);
            const float norm = invert_unit_lower(width, panel.data(), ld, inv.data(), ldi);
            double worst = 0.0, expected_norm = 0.0;
            for (int j = 0; j < width; ++j) {
                double column = 0.0;
                for (int i = 0; i < width; ++i) {
                    const double x = inv[static_cast<size_t>(i + j * ldi)];
                    if (i < j) { EXPECT_EQ(x, 0.0) << i << ", " << j; }
                    column += std::fabs(x);
                    double product = 0.0;  // (L11 inv)(i, j), L11 unit lower
                    for (int k = 0; k <= i; ++k)
                        product += (k == i ? 1.0 : panel[static_cast<size_t>(i + k * ld)]) *
                                   inv[static_cast<size_t>(k + j * ldi)];
                    worst = std::max(worst, std::fabs(product - (i == j ? 1.0 : 0.0)));
                }
                expected_norm = std::max(expected_norm, column);
            }
            EXPECT_LT(worst, 1e-4 * std::max(1.0, expected_norm));
            EXPECT_NEAR(norm, expected_norm, 1e-5 * expected_norm);
        }
    }
}

}  // namespace
}  // namespace tandem::test
