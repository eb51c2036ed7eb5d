// The GPU's recursive panel (gpu/recursive_panel.cpp) with its device
// operations replaced by host code that keeps their contracts: a leaf factors
// its block with partial pivoting and leaves its rows where they were,
// reporting the net moves; apply_leaf_moves and catch_up_columns move rows of
// a column range; the TRSM and the products run through CBLAS. So the order in
// which the recursion hands each leaf's interchanges to the columns (at once,
// or later in passes: PanelRecursion) is checked where there is no GPU: every
// column must take every leaf's moves, in order, before anything reads it.
// The passes change only when rows move, not the arithmetic, so a panel that
// leaves its interchanges for later must give bit for bit the factors of the
// same panel applying them at every leaf. Built without the library (these
// functions stand in for its GPU ones), where the CUDA toolkit's headers are.
#include <cblas.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gpu/gemm.hpp"
#include "gpu/panel_leaf.hpp"
#include "gpu/recursive_panel.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {

// What the stand-ins saw: leaves wider than this many rows are 16 columns
// wide (the real leaves narrow as panels grow taller), and the passes made.
namespace {
int64_t narrow_leaves_above_rows = 1 << 30;
int catch_up_passes = 0;

float& at(float* a, int64_t ld, bool column_major, int64_t i, int64_t j) {
    return column_major ? a[i + j * ld] : a[i * ld + j];
}

// Rows [first, first + n) of columns [0, cols) take a moves list: every
// source read before any destination is written.
void move_rows(float* a, int64_t ld, bool column_major, int64_t cols, int64_t first, const int* moves) {
    const int count = moves[0];
    std::vector<float> held(static_cast<size_t>(count));
    for (int64_t j = 0; j < cols; ++j) {
        for (int i = 0; i < count; ++i) held[i] = at(a, ld, column_major, first + moves[2 + 2 * i], j);
        for (int i = 0; i < count; ++i) at(a, ld, column_major, first + moves[1 + 2 * i], j) = held[i];
    }
}
}  // namespace

int leaf_width_for(int64_t rows) { return rows > narrow_leaves_above_rows ? 16 : 32; }

// LAPACK's unblocked LU on a copy with the rows interchanged, then each row
// written back where it started, and the net permutation listed.
void factor_leaf(float* a, int64_t ld, bool column_major, int64_t rows, int width, int* ipiv,
                 int pivot_base, int* info, int info_base, int* moves, cudaStream_t) {
    if (width <= 0 || width > kLeafMaxWidth || width > rows)
        throw Error(TANDEM_ERROR_INTERNAL, "factor_leaf: not a leaf");
    std::vector<float> lu(static_cast<size_t>(rows * width));
    std::vector<int64_t> origin(static_cast<size_t>(rows));  // lu's row i started at row origin[i]
    for (int64_t i = 0; i < rows; ++i) {
        origin[i] = i;
        for (int j = 0; j < width; ++j) lu[i * width + j] = at(a, ld, column_major, i, j);
    }
    for (int j = 0; j < width; ++j) {
        int64_t p = j;
        for (int64_t i = j + 1; i < rows; ++i)
            if (std::fabs(lu[i * width + j]) > std::fabs(lu[p * width + j])) p = i;
        ipiv[j] = pivot_base + 1 + static_cast<int>(p);
        if (p != j) {
            for (int k = 0; k < width; ++k) std::swap(lu[p * width + k], lu[j * width + k]);
            std::swap(origin[p], origin[j]);
        }
        const float pivot = lu[j * width + j];
        if (pivot == 0.0f) {
            if (*info == 0) *info = info_base + j + 1;
            continue;
        }
        for (int64_t i = j + 1; i < rows; ++i) {
            const float l = lu[i * width + j] / pivot;
            lu[i * width + j] = l;
            for (int k = j + 1; k < width; ++k) lu[i * width + k] -= l * lu[j * width + k];
        }
    }
    int count = 0;
    for (int64_t i = 0; i < rows; ++i) {
        for (int j = 0; j < width; ++j) at(a, ld, column_major, origin[i], j) = lu[i * width + j];
        if (origin[i] != i) {  // row i must receive what now lies at row origin[i]
            moves[1 + 2 * count] = static_cast<int>(i);
            moves[2 + 2 * count] = static_cast<int>(origin[i]);
            ++count;
        }
    }
    moves[0] = count;
}

void apply_leaf_moves(float* a, int64_t ld, bool column_major, int64_t cols, const int* moves,
                      cudaStream_t) {
    move_rows(a, ld, column_major, cols, 0, moves);
}

void catch_up_columns(float* a, int64_t ld, int64_t rows, int64_t cols,
                      const std::vector<PendingLeaf>& leaves, cudaStream_t) {
    if (leaves.empty() || rows - leaves.front().first_row > kCatchUpMaxRows)
        throw Error(TANDEM_ERROR_INTERNAL, "catch_up_columns: no leaves, or a column too tall");
    for (size_t l = 0; l < leaves.size(); ++l) {
        if (l > 0 && leaves[l].first_row <= leaves[l - 1].first_row)
            throw Error(TANDEM_ERROR_INTERNAL, "catch_up_columns: leaves out of order");
        move_rows(a, ld, true, cols, leaves[l].first_row, leaves[l].moves);
    }
    ++catch_up_passes;
}

void trsm_unit_lower_left(const BlasQueue&, int64_t m, int64_t n, const float* l, int64_t ldl,
                          float* b, int64_t ldb, bool column_major) {
    cblas_strsm(column_major ? CblasColMajor : CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans,
                CblasUnit, static_cast<int>(m), static_cast<int>(n), 1.0f, l, static_cast<int>(ldl), b,
                static_cast<int>(ldb));
}

namespace {

struct Factors {
    std::vector<float> a;
    std::vector<int> ipiv;
    int info = 0;
    int passes = 0;
    std::vector<std::pair<int64_t, std::vector<float>>> final_rows;  // rows [0, r) when reported
};

// Uniform in [-1, 1), padding rows included.
std::vector<float> random_matrix(int64_t n, int64_t ld, uint32_t seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> a(static_cast<size_t>(ld * n));
    for (float& x : a) x = u(gen);
    return a;
}

// The m x n column-major matrix (leading dimension ld) factored by the
// recursion, its moves lists room for a list a column (`own_lists`) or for
// one; with `first_part` > 0 as the one-panel call from host memory does it:
// columns [0, first_part) as a panel of their own, their interchanges then
// applied to the rest, then finish_panel_recursive, reporting final rows.
Factors factor(std::vector<float> a, int64_t m, int n, int64_t ld, bool own_lists, int first_part) {
    Factors f;
    f.ipiv.assign(static_cast<size_t>(n), 0);
    std::vector<int> moves(static_cast<size_t>(own_lists ? n * kLeafMovesInts : kLeafMovesInts));
    const DevicePanel whole{a.data(), ld, true, m, n, f.ipiv.data(), &f.info, moves.data(),
                            own_lists ? n : 1};
    const BlasQueue queue{nullptr, nullptr};
    const SubtractProduct subtract = [&](int64_t rows, int64_t cols, int64_t k, const float* x,
                                         const float* y, float* c) {
        cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows),
                    static_cast<int>(cols), static_cast<int>(k), -1.0f, x, static_cast<int>(ld), y,
                    static_cast<int>(ld), 1.0f, c, static_cast<int>(ld));
    };
    catch_up_passes = 0;
    if (first_part <= 0) {
        factor_panel_recursive(whole, queue, subtract);
    } else {
        DevicePanel part = whole;
        part.width = first_part;
        factor_panel_recursive(part, queue, subtract);
        for (int k = 0; k < first_part; ++k)  // the part's interchanges, in order, on the rest
            for (int64_t j = first_part; j < n; ++j)
                std::swap(a[k + j * ld], a[(f.ipiv[k] - 1) + j * ld]);
        const RowsFinal rows_final = [&](int64_t r) {
            std::vector<float> rows(static_cast<size_t>(r * n));
            for (int64_t j = 0; j < n; ++j)
                for (int64_t i = 0; i < r; ++i) rows[i + j * r] = a[i + j * ld];
            f.final_rows.emplace_back(r, std::move(rows));
        };
        finish_panel_recursive(whole, first_part, queue, subtract, rows_final);
    }
    f.passes = catch_up_passes;
    f.a = std::move(a);
    return f;
}

// ||P A x - L (U x)||_inf / (||A||_inf ||x||_inf n eps) for a random x, in
// double: the factorization's residual on one vector, in O(m n).
double residual(const std::vector<float>& original, const Factors& f, int64_t m, int n, int64_t ld) {
    std::mt19937 gen(3);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> x(static_cast<size_t>(n)), ux(static_cast<size_t>(n), 0.0);
    for (double& v : x) v = u(gen);
    for (int64_t j = 0; j < n; ++j)  // U x
        for (int64_t i = 0; i <= j; ++i) ux[i] += f.a[i + j * ld] * x[j];
    std::vector<double> lux(static_cast<size_t>(m), 0.0);
    for (int64_t k = 0; k < n; ++k) {  // L (U x), L unit lower trapezoidal
        lux[k] += ux[k];
        for (int64_t i = k + 1; i < m; ++i) lux[i] += f.a[i + k * ld] * ux[k];
    }
    std::vector<int64_t> row(static_cast<size_t>(m));
    for (int64_t i = 0; i < m; ++i) row[i] = i;
    for (int k = 0; k < n; ++k) std::swap(row[k], row[f.ipiv[k] - 1]);
    double worst = 0.0, norm = 0.0;
    for (int64_t i = 0; i < m; ++i) {
        double pax = 0.0, row_sum = 0.0;
        for (int64_t j = 0; j < n; ++j) {
            pax += original[row[i] + j * ld] * x[j];
            row_sum += std::fabs(original[row[i] + j * ld]);
        }
        worst = std::max(worst, std::fabs(pax - lux[i]));
        norm = std::max(norm, row_sum);
    }
    return worst / (norm * n * std::ldexp(1.0, -24));
}

struct Case {
    int64_t m;
    int n;
    int first_part;            // > 0: factored as the one-panel call from host memory does
    int64_t narrow_above;      // leaves 16 wide on blocks taller than this
    int zero_column;           // >= 0: that column zero (LAPACK's info)
};

}  // namespace

// 2100 x 2100 and up are above the 2^22 floats from which a column-major
// panel defers its leaves' interchanges (defers_interchanges); one case has
// ragged leaves (2999 columns), one 16-column leaves on its taller blocks,
// one a zero column, and two go the overlapped call's way with final rows.
TEST(RecursivePanelOnHost, DeferredInterchangesGiveTheSameFactors) {
    const Case cases[] = {{2100, 2100, 0, 1 << 30, -1}, {3001, 2999, 0, 1 << 30, -1},
                          {4500, 1000, 0, 2048, -1},    {2600, 2600, 0, 1 << 30, 2000},
                          {2100, 2100, 700, 1 << 30, -1}, {3000, 2048, 384, 1 << 30, 1500}};
    for (const Case& c : cases) {
        SCOPED_TRACE(std::to_string(c.m) + " x " + std::to_string(c.n) + " first part " +
                     std::to_string(c.first_part) + " zero column " + std::to_string(c.zero_column));
        narrow_leaves_above_rows = c.narrow_above;
        const int64_t ld = c.m + 5;
        std::vector<float> a = random_matrix(c.n, ld, 17u + static_cast<uint32_t>(c.n));
        if (c.zero_column >= 0)
            for (int64_t i = 0; i < c.m; ++i) a[i + c.zero_column * ld] = 0.0f;
        const Factors deferred = factor(a, c.m, c.n, ld, true, c.first_part);
        const Factors eager = factor(a, c.m, c.n, ld, false, c.first_part);
        EXPECT_GT(deferred.passes, 0);
        EXPECT_EQ(eager.passes, 0);
        EXPECT_EQ(deferred.info, eager.info);
        EXPECT_EQ(deferred.info, c.zero_column >= 0 ? c.zero_column + 1 : 0);
        EXPECT_EQ(deferred.ipiv, eager.ipiv);
        EXPECT_TRUE(deferred.a == eager.a) << "the factors differ";
        if (c.zero_column < 0) {
            EXPECT_LT(residual(a, deferred, c.m, c.n, ld), 30.0);
        }
        // Rows reported final hold their final values then.
        EXPECT_EQ(deferred.final_rows.size() > 0, c.first_part > 0);
        for (const auto& [r, rows] : deferred.final_rows)
            for (int64_t j = 0; j < c.n; ++j)
                for (int64_t i = 0; i < r; ++i)
                    ASSERT_EQ(rows[i + j * r], deferred.a[i + j * ld]) << "row " << i << " column " << j
                                                                     << " reported final at " << r;
    }
    narrow_leaves_above_rows = 1 << 30;
}

// Up to 2^22 floats, or 256 columns or fewer, the leaves apply their
// interchanges to every column at once: no passes.
TEST(RecursivePanelOnHost, SmallPanelsApplyInterchangesAtOnce) {
    for (const auto& [m, n] : {std::pair<int64_t, int>{2048, 2048}, {12000, 256}, {1000, 1000}}) {
        const std::vector<float> a = random_matrix(n, m, 5u);
        const Factors f = factor(a, m, n, m, true, 0);
        EXPECT_EQ(f.passes, 0) << m << " x " << n;
        EXPECT_LT(residual(a, f, m, n, m), 30.0) << m << " x " << n;
    }
}

}  // namespace tandem::gpu
