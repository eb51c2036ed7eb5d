// The C ABI (tandem.h): both layouts, every trans, LAPACKE's argument numbering
// (layout is argument 1) in info and in tandem_last_error()'s text, untouched
// arrays on error.
// The C calls use Backend::automatic; where that is the cpu backend (no GPU,
// TANDEM_BACKEND unset) LAPACKE is an exact oracle, elsewhere the residuals are.
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "tandem/tandem.h"
#include "tandem/tandem.hpp"
#include "test_support.hpp"

namespace tandem::test {
namespace {

bool runs_lapack() { return resolve_backend(Options{}) == Backend::cpu; }

const char* layout_name(int layout) {
    return layout == TANDEM_ROW_MAJOR ? "row-major" : "col-major";
}

// Column-major copy of an m x n matrix stored in `layout` with leading dimension ld.
std::vector<float> as_col_major(int layout, int m, int n, const std::vector<float>& x, int ld) {
    return layout == TANDEM_COL_MAJOR ? x : to_col_major(m, n, x.data(), ld, m);
}
int col_ld(int layout, int m, int ld) { return layout == TANDEM_COL_MAJOR ? ld : m; }

// A random m x n matrix in `layout` with leading dimension ld.
std::vector<float> random_in(int layout, int m, int n, int ld, uint64_t seed) {
    if (layout == TANDEM_COL_MAJOR) return make_matrix(m, n, ld, MatrixKind::random, seed);
    const std::vector<float> c = make_matrix(m, n, m, MatrixKind::random, seed);
    return to_row_major(m, n, c.data(), m, ld);
}

TEST(CAbi, SgetrfBothLayouts) {
    for (int layout : {TANDEM_COL_MAJOR, TANDEM_ROW_MAJOR})
        for (auto [m, n] : {std::pair{17, 17}, std::pair{30, 20}, std::pair{20, 30}}) {
            const uint64_t seed = test_seed();
            SCOPED_TRACE(std::string(layout_name(layout)) + " m=" + std::to_string(m) +
                         " n=" + std::to_string(n) + " seed=" + std::to_string(seed));
            const int lda = (layout == TANDEM_COL_MAJOR ? m : n) + 1;
            const std::vector<float> a = random_in(layout, m, n, lda, seed);
            std::vector<float> lu = a, expected = a;
            std::vector<int> ipiv(std::min(m, n)), expected_ipiv(std::min(m, n));
            EXPECT_EQ(tandem_sgetrf(layout, m, n, lu.data(), lda, ipiv.data()), 0);
            EXPECT_EQ(LAPACKE_sgetrf(layout, m, n, expected.data(), lda, expected_ipiv.data()), 0);
            const std::vector<float> a_col = as_col_major(layout, m, n, a, lda);
            const std::vector<float> lu_col = as_col_major(layout, m, n, lu, lda);
            const int ld = col_ld(layout, m, lda);
            EXPECT_LT(
                factorization_residual(m, n, a_col.data(), ld, lu_col.data(), ld, ipiv.data()),
                kResidualBound);
            if (runs_lapack()) {
                EXPECT_EQ(ipiv, expected_ipiv);
                EXPECT_EQ(first_bit_difference(lu, expected), -1);
            }
        }
}

TEST(CAbi, SgetrsEveryTransBothLayouts) {
    const int n = 23, nrhs = 3;
    for (int layout : {TANDEM_COL_MAJOR, TANDEM_ROW_MAJOR})
        for (char trans : {'N', 'T', 'C', 'n', 't', 'c'}) {
            const uint64_t seed = test_seed();
            SCOPED_TRACE(std::string(layout_name(layout)) + " trans=" + std::string(1, trans) +
                         " seed=" + std::to_string(seed));
            const int lda = n + 2, ldb = (layout == TANDEM_COL_MAJOR ? n : nrhs) + 1;
            const std::vector<float> a = random_in(layout, n, n, lda, seed);
            const std::vector<float> b = random_in(layout, n, nrhs, ldb, seed + 1);
            std::vector<float> lu = a;
            std::vector<int> ipiv(n);
            ASSERT_EQ(LAPACKE_sgetrf(layout, n, n, lu.data(), lda, ipiv.data()), 0);
            std::vector<float> x = b, expected = b;
            EXPECT_EQ(
                tandem_sgetrs(layout, trans, n, nrhs, lu.data(), lda, ipiv.data(), x.data(), ldb),
                0);
            LAPACKE_sgetrs(layout, trans, n, nrhs, lu.data(), lda, ipiv.data(), expected.data(),
                           ldb);
            const std::vector<float> a_col = as_col_major(layout, n, n, a, lda);
            const std::vector<float> x_col = as_col_major(layout, n, nrhs, x, ldb);
            const std::vector<float> b_col = as_col_major(layout, n, nrhs, b, ldb);
            const int lda_col = col_ld(layout, n, lda), ldb_col = col_ld(layout, n, ldb);
            const bool transposed = trans != 'N' && trans != 'n';
            const double residual =
                transposed ? solve_residual_trans(n, nrhs, a_col.data(), lda_col, x_col.data(),
                                                  ldb_col, b_col.data(), ldb_col)
                           : solve_residual(n, nrhs, a_col.data(), lda_col, x_col.data(), ldb_col,
                                            b_col.data(), ldb_col);
            EXPECT_LT(residual, kResidualBound);
            if (runs_lapack()) {
                EXPECT_EQ(first_bit_difference(x, expected), -1);
            }
        }
}

TEST(CAbi, SgesvBothLayoutsAndSingular) {
    const int n = 31, nrhs = 2;
    for (int layout : {TANDEM_COL_MAJOR, TANDEM_ROW_MAJOR})
        for (bool singular : {false, true}) {
            const uint64_t seed = test_seed();
            SCOPED_TRACE(std::string(layout_name(layout)) + (singular ? " singular" : "") +
                         " seed=" + std::to_string(seed));
            const int lda = n, ldb = layout == TANDEM_COL_MAJOR ? n : nrhs;
            std::vector<float> a = random_in(layout, n, n, lda, seed);
            if (singular)  // zero column 9, in either layout
                for (int i = 0; i < n; ++i)
                    a[layout == TANDEM_COL_MAJOR ? i + 9 * lda : i * lda + 9] = 0.0f;
            const std::vector<float> b = random_in(layout, n, nrhs, ldb, seed + 1);
            std::vector<float> lu = a, x = b;
            std::vector<int> ipiv(n);
            const int info =
                tandem_sgesv(layout, n, nrhs, lu.data(), lda, ipiv.data(), x.data(), ldb);
            if (singular) {
                EXPECT_EQ(info, 10);
                EXPECT_EQ(first_bit_difference(x, b), -1);
                continue;
            }
            EXPECT_EQ(info, 0);
            const std::vector<float> a_col = as_col_major(layout, n, n, a, lda);
            const std::vector<float> x_col = as_col_major(layout, n, nrhs, x, ldb);
            const std::vector<float> b_col = as_col_major(layout, n, nrhs, b, ldb);
            EXPECT_LT(solve_residual(n, nrhs, a_col.data(), n, x_col.data(), n, b_col.data(), n),
                      kResidualBound);
            if (runs_lapack()) {
                std::vector<float> expected_lu = a, expected_x = b;
                std::vector<int> expected_ipiv(n);
                LAPACKE_sgetrf(layout, n, n, expected_lu.data(), lda, expected_ipiv.data());
                LAPACKE_sgetrs(layout, 'N', n, nrhs, expected_lu.data(), lda, expected_ipiv.data(),
                               expected_x.data(), ldb);
                EXPECT_EQ(ipiv, expected_ipiv);
                EXPECT_EQ(first_bit_difference(lu, expected_lu), -1);
                EXPECT_EQ(first_bit_difference(x, expected_x), -1);
            }
        }
}

// Arrays for the argument tests: n = 6, nrhs = 2, leading dimensions up to 8.
struct Arrays {
    explicit Arrays(uint64_t seed)
        : a(make_matrix(8, 8, 8, MatrixKind::random, seed)),
          b(make_matrix(8, 8, 8, MatrixKind::random, seed + 1)) {}
    std::vector<float> a, b;
    std::vector<int> ipiv{2, 2, 5, 6, 5, 6, 8, 8};
};

void expect_rejected(const std::string& what, int expected,
                     const std::function<int(Arrays&)>& call) {
    const uint64_t seed = test_seed();
    SCOPED_TRACE(what + " seed=" + std::to_string(seed));
    Arrays x(seed);
    const Arrays before = x;
    EXPECT_EQ(call(x), expected);
    EXPECT_EQ(first_bit_difference(x.a, before.a), -1);
    EXPECT_EQ(first_bit_difference(x.b, before.b), -1);
    EXPECT_EQ(x.ipiv, before.ipiv);
    // The text names the C function and the argument its info names.
    const std::string text = tandem_last_error();
    EXPECT_EQ(text.rfind("tandem_", 0), 0u) << text;
    EXPECT_NE(text.find(": argument " + std::to_string(-expected) + " "), std::string::npos) << text;
}

TEST(CAbi, BadLayoutIsArgumentOne) {
    for (int layout : {0, -1, 100, 103, 1}) {
        const std::string l = "layout " + std::to_string(layout);
        expect_rejected(l + " sgetrf", -1, [&](Arrays& x) {
            return tandem_sgetrf(layout, 6, 6, x.a.data(), 8, x.ipiv.data());
        });
        expect_rejected(l + " sgetrs", -1, [&](Arrays& x) {
            return tandem_sgetrs(layout, 'N', 6, 2, x.a.data(), 8, x.ipiv.data(), x.b.data(), 8);
        });
        expect_rejected(l + " sgesv", -1, [&](Arrays& x) {
            return tandem_sgesv(layout, 6, 2, x.a.data(), 8, x.ipiv.data(), x.b.data(), 8);
        });
    }
}

// LAPACKE's numbering: the C++ position plus one, for the layout argument.
TEST(CAbi, BadArgumentsUseLapackeNumbering) {
    const int C = TANDEM_COL_MAJOR, R = TANDEM_ROW_MAJOR;
    expect_rejected("sgetrf m", -2, [&](Arrays& x) {
        return tandem_sgetrf(C, -1, 6, x.a.data(), 8, x.ipiv.data());
    });
    expect_rejected("sgetrf n", -3, [&](Arrays& x) {
        return tandem_sgetrf(C, 6, -1, x.a.data(), 8, x.ipiv.data());
    });
    expect_rejected("sgetrf a", -4,
                    [&](Arrays& x) { return tandem_sgetrf(C, 6, 6, nullptr, 8, x.ipiv.data()); });
    expect_rejected("sgetrf lda", -5, [&](Arrays& x) {
        return tandem_sgetrf(C, 6, 6, x.a.data(), 5, x.ipiv.data());
    });
    expect_rejected("sgetrf lda row-major", -5, [&](Arrays& x) {
        return tandem_sgetrf(R, 3, 7, x.a.data(), 6, x.ipiv.data());
    });
    expect_rejected("sgetrf ipiv", -6,
                    [&](Arrays& x) { return tandem_sgetrf(C, 6, 6, x.a.data(), 8, nullptr); });

    expect_rejected("sgetrs trans", -2, [&](Arrays& x) {
        return tandem_sgetrs(C, 'x', 6, 2, x.a.data(), 8, x.ipiv.data(), x.b.data(), 8);
    });
    expect_rejected("sgetrs n", -3, [&](Arrays& x) {
        return tandem_sgetrs(C, 'N', -1, 2, x.a.data(), 8, x.ipiv.data(), x.b.data(), 8);
    });
    expect_rejected("sgetrs nrhs", -4, [&](Arrays& x) {
        return tandem_sgetrs(C, 'N', 6, -1, x.a.data(), 8, x.ipiv.data(), x.b.data(), 8);
    });
    expect_rejected("sgetrs a", -5, [&](Arrays& x) {
        return tandem_sgetrs(C, 'N', 6, 2, nullptr, 8, x.ipiv.data(), x.b.data(), 8);
    });
    expect_rejected("sgetrs lda", -6, [&](Arrays& x) {
        return tandem_sgetrs(C, 'N', 6, 2, x.a.data(), 5, x.ipiv.data(), x.b.data(), 8);
    });
    expect_rejected("sgetrs ipiv", -7, [&](Arrays& x) {
        return tandem_sgetrs(C, 'N', 6, 2, x.a.data(), 8, nullptr, x.b.data(), 8);
    });
    expect_rejected("sgetrs ipiv value", -7, [&](Arrays& x) {
        const std::vector<int> bad{2, 2, 5, 7, 5, 6};  // 7 > n
        return tandem_sgetrs(C, 'N', 6, 2, x.a.data(), 8, bad.data(), x.b.data(), 8);
    });
    expect_rejected("sgetrs b", -8, [&](Arrays& x) {
        return tandem_sgetrs(C, 'N', 6, 2, x.a.data(), 8, x.ipiv.data(), nullptr, 8);
    });
    expect_rejected("sgetrs ldb", -9, [&](Arrays& x) {
        return tandem_sgetrs(C, 'N', 6, 2, x.a.data(), 8, x.ipiv.data(), x.b.data(), 5);
    });
    expect_rejected("sgetrs ldb row-major", -9, [&](Arrays& x) {
        return tandem_sgetrs(R, 'N', 6, 3, x.a.data(), 8, x.ipiv.data(), x.b.data(), 2);
    });

    expect_rejected("sgesv n", -2, [&](Arrays& x) {
        return tandem_sgesv(C, -1, 2, x.a.data(), 8, x.ipiv.data(), x.b.data(), 8);
    });
    expect_rejected("sgesv nrhs", -3, [&](Arrays& x) {
        return tandem_sgesv(C, 6, -1, x.a.data(), 8, x.ipiv.data(), x.b.data(), 8);
    });
    expect_rejected("sgesv a", -4, [&](Arrays& x) {
        return tandem_sgesv(C, 6, 2, nullptr, 8, x.ipiv.data(), x.b.data(), 8);
    });
    expect_rejected("sgesv lda", -5, [&](Arrays& x) {
        return tandem_sgesv(C, 6, 2, x.a.data(), 5, x.ipiv.data(), x.b.data(), 8);
    });
    expect_rejected("sgesv ipiv", -6, [&](Arrays& x) {
        return tandem_sgesv(C, 6, 2, x.a.data(), 8, nullptr, x.b.data(), 8);
    });
    expect_rejected("sgesv b", -7, [&](Arrays& x) {
        return tandem_sgesv(C, 6, 2, x.a.data(), 8, x.ipiv.data(), nullptr, 8);
    });
    expect_rejected("sgesv ldb", -8, [&](Arrays& x) {
        return tandem_sgesv(C, 6, 2, x.a.data(), 8, x.ipiv.data(), x.b.data(), 5);
    });
    expect_rejected("sgesv ldb row-major", -8, [&](Arrays& x) {
        return tandem_sgesv(R, 6, 3, x.a.data(), 8, x.ipiv.data(), x.b.data(), 2);
    });
}

// The last error belongs to the thread that made it.
TEST(CAbi, LastErrorIsPerThread) {
    float a = 1.0f;
    int ipiv = 0;
    ASSERT_EQ(tandem_sgetrf(TANDEM_COL_MAJOR, 1, 1, &a, 0, &ipiv), -5);
    EXPECT_GT(std::strlen(tandem_last_error()), 0u);
    std::string in_new_thread = "unset";
    std::thread([&] { in_new_thread = tandem_last_error(); }).join();
    EXPECT_EQ(in_new_thread, "");
}

}  // namespace
}  // namespace tandem::test
