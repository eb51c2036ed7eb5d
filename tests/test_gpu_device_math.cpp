// The CUDA device's arithmetic against references computed on the host in
// double: U12 by inv(L11) (GEMM, the inverse sent or made on the device) and
// by TRSM, the trailing update, storing the panel, the solve with trans N / T
// / C (LAPACK's residual test), and offsets past 2^31 elements. Error bounds are the classical componentwise ones
// (Higham), so the checks are strict without depending on summation order.
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "tests/gpu_device_fixture.hpp"

namespace tandem::test {
namespace {

// Compares the rows x cols block at (r0, c0) of `got` (column-major, ld) with
// `ref` and its componentwise error bound `bound` (both rows x cols, ld = rows);
// everything outside the block must equal `before` exactly. Returns the count of failures.
int64_t compare_block(const Vec& got, const Vec& before, int64_t ld, int64_t n, int64_t r0,
                      int64_t c0, int64_t rows, int64_t cols, const std::vector<double>& ref,
                      const std::vector<double>& bound) {
    int64_t wrong = 0;
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < ld; ++i) {
            const float g = got[i + j * ld];
            if (i >= r0 && i < r0 + rows && j >= c0 && j < c0 + cols) {
                const size_t k = static_cast<size_t>((i - r0) + (j - c0) * rows);
                wrong += !(std::fabs(double(g) - ref[k]) <= bound[k]);  // NaN fails
            } else {
                wrong += std::memcmp(&g, &before[i + j * ld], sizeof g) != 0;
            }
        }
    return wrong;
}

TEST_F(GpuDevice, FormU12ByInverseAndByTrsmMatchesForwardSubstitution) {
    SCOPED_TRACE(seed_note());
    struct Case { int64_t m, n; int width; int64_t r0, c0, cols; };
    // The last case is wider than the staging buffer allows: the inverse path goes in chunks.
    for (const Case c : {Case{200, 150, 48, 30, 7, 130}, Case{5, 4, 1, 2, 0, 4},
                         Case{64, 17000, 64, 0, 0, 17000}})
        for (const bool use_inverse : {true, false}) {
            SCOPED_TRACE("width " + std::to_string(c.width) + (use_inverse ? " GEMM" : " TRSM"));
            device_->allocate(c.m, c.n, c.width);
            const Vec before = fill_storage(c.m, c.n);
            const Panel p = make_panel(c.m - c.r0, c.width, seed_ + 1);
            device_->receive_panel(Queue::transfer, p.lu.data(), p.rows, p.rows, c.width,
                                   use_inverse ? p.inv.data() : nullptr, c.width);
            device_->wait(Queue::compute, device_->record(Queue::transfer));
            device_->form_u12(Queue::compute, c.r0, c.width, c.c0, c.cols, use_inverse);

            // x = inv(L11) a12 by forward substitution; |x - x^| <= c w u |inv| |L| |x|.
            const int w = c.width;
            std::vector<double> ref(static_cast<size_t>(w * c.cols)), bound(ref.size());
            std::vector<double> lx(static_cast<size_t>(w));
            for (int64_t j = 0; j < c.cols; ++j) {
                double* x = &ref[j * w];
                for (int i = 0; i < w; ++i) {
                    double s = before[(c.r0 + i) + (c.c0 + j) * c.m];
                    for (int k = 0; k < i; ++k) s -= p.l(i, k) * x[k];
                    x[i] = s;
                }
                for (int i = 0; i < w; ++i) {
                    lx[i] = 0.0;
                    for (int k = 0; k <= i; ++k) lx[i] += std::fabs(p.l(i, k) * x[k]);
                }
                for (int i = 0; i < w; ++i) {
                    double s = 0.0;
                    for (int k = 0; k <= i; ++k) s += std::fabs(p.inv[i + k * w]) * lx[k];
                    bound[i + j * w] = 4.0 * (w + 2) * kUnitRoundoff * s;
                }
            }
            EXPECT_EQ(compare_block(read_storage(c.m, c.n), before, c.m, c.n, c.r0, c.c0, w,
                                    c.cols, ref, bound),
                      0);
        }
}

// A device-factored panel inverted on the device (invert_panel_l11): its
// norm against inv(L11) in double, and U12 by the product with that inverse
// against forward substitution. The bound adds the inverse's own error, |X^
// - X| <= c w u |X| |L| |X| (X = inv(L11)). Widths 48 and 512 are a leaf and
// 64 x 8; 130 (65 x 2) is no leaf times a power of two, and is not inverted.
TEST_F(GpuDevice, InvertedPanelGivesU12ByProduct) {
    SCOPED_TRACE(seed_note());
    float* norm = device_->host_alloc(1);
    for (const int w : {48, 512, 130}) {
        SCOPED_TRACE("width " + std::to_string(w));
        const int64_t r0 = 5, c0 = 3, cols = 70, m = r0 + w + 40, n = c0 + w + cols + 2;
        device_->allocate(m, n, w);
        const Vec before = fill_storage(m, n);
        device_->synchronize();
        const Panel p = make_panel(m - r0, w, seed_ + w);
        device_->upload(Queue::transfer, p.lu.data(), p.rows, r0, c0, p.rows, w);
        *norm = kNaN;
        const bool inverted = device_->invert_panel_l11(Queue::transfer, r0, c0, w, 1, norm);
        device_->synchronize();
        device_->take_panel(Queue::compute, r0, c0, p.rows, w);
        if (w == 130) {
            EXPECT_FALSE(inverted);
            EXPECT_THROW(device_->form_u12(Queue::compute, r0, w, c0 + w, cols, true), Error);
            continue;
        }
        ASSERT_TRUE(inverted);
        double norm_ref = 0.0;
        for (int j = 0; j < w; ++j) {
            double sum = 0.0;
            for (int i = j; i < w; ++i) sum += std::fabs(p.inv[i + j * w]);
            norm_ref = std::max(norm_ref, sum);
        }
        EXPECT_NEAR(*norm, norm_ref, 1e-2 * norm_ref);
        device_->form_u12(Queue::compute, r0, w, c0 + w, cols, true);
        Vec expected_before = before;  // the panel's columns now hold the uploaded LU
        for (int j = 0; j < w; ++j)
            for (int64_t i = 0; i < p.rows; ++i)
                expected_before[(r0 + i) + (c0 + j) * m] = p.lu[i + j * p.rows];
        std::vector<double> ref(static_cast<size_t>(w * cols)), bound(ref.size());
        std::vector<double> x_abs(static_cast<size_t>(w));
        auto times_abs_l = [&](const std::vector<double>& in, std::vector<double>& out) {
            for (int i = 0; i < w; ++i) {
                out[i] = 0.0;
                for (int k = 0; k <= i; ++k) out[i] += std::fabs(p.l(i, k)) * in[k];
            }
        };
        auto times_abs_inv = [&](const std::vector<double>& in, std::vector<double>& out) {
            for (int i = 0; i < w; ++i) {
                out[i] = 0.0;
                for (int k = 0; k <= i; ++k) out[i] += std::fabs(p.inv[i + k * w]) * in[k];
            }
        };
        std::vector<double> v1(x_abs.size()), v2(v1.size()), v3(v1.size()), v4(v1.size());
        for (int64_t j = 0; j < cols; ++j) {
            double* x = &ref[j * w];
            for (int i = 0; i < w; ++i) {
                double s = before[(r0 + i) + (c0 + w + j) * m];
                for (int k = 0; k < i; ++k) s -= p.l(i, k) * x[k];
                x[i] = s;
                x_abs[i] = std::fabs(s);
            }
            times_abs_l(x_abs, v1);
            times_abs_inv(v1, v2);
            times_abs_l(v2, v3);
            times_abs_inv(v3, v4);
            for (int i = 0; i < w; ++i)
                bound[i + j * w] = 4.0 * (w + 2) * kUnitRoundoff * (v2[i] + 2.0 * v4[i]);
        }
        EXPECT_EQ(compare_block(read_storage(m, n), expected_before, m, n, r0, c0 + w, w, cols, ref,
                                bound),
                  0);
        // A panel at another place has no inverse.
        device_->take_panel(Queue::compute, r0 + 1, c0, p.rows - 1, w);
        EXPECT_THROW(device_->form_u12(Queue::compute, r0, w, c0 + w, cols, true), Error);
    }
    device_->host_free(norm);
}

TEST_F(GpuDevice, UpdateTrailingMatchesDoubleProduct) {
    SCOPED_TRACE(seed_note());
    const int64_t m = 300, n = 200, r0 = 25, c0 = 13, cols = 150;
    const int w = 40;
    for (const int64_t rows : {m - r0 - w, int64_t(100)}) {
        device_->allocate(m, n, 64);
        const Vec before = fill_storage(m, n);
        const int64_t prows = m - r0;
        const Vec panel = random(prows * w);
        device_->receive_panel(Queue::compute, panel.data(), prows, prows, w, nullptr, 0);
        device_->update_trailing(Queue::compute, r0, w, rows, c0, cols);

        // |c - c^| <= gamma_(w+1) (|c| + |L21| |U12|)
        std::vector<double> ref(static_cast<size_t>(rows * cols)), bound(ref.size());
        for (int64_t j = 0; j < cols; ++j)
            for (int64_t i = 0; i < rows; ++i) {
                const double c = before[(r0 + w + i) + (c0 + j) * m];
                double s = c, a = std::fabs(c);
                for (int k = 0; k < w; ++k) {
                    const double lu = double(panel[(w + i) + k * prows]) *
                                      before[(r0 + k) + (c0 + j) * m];
                    s -= lu;
                    a += std::fabs(lu);
                }
                ref[i + j * rows] = s;
                bound[i + j * rows] = 2.0 * (w + 2) * kUnitRoundoff * a;
            }
        EXPECT_EQ(compare_block(read_storage(m, n), before, m, n, r0 + w, c0, rows, cols, ref,
                                bound),
                  0)
            << rows << " rows";
    }
}

TEST_F(GpuDevice, StorePanelCopiesTheWorkspace) {
    SCOPED_TRACE(seed_note());
    const int64_t m = 100, n = 60, r0 = 30, c0 = 20;
    const int w = 16;
    device_->allocate(m, n, w);
    const Vec before = fill_storage(m, n);
    const Vec panel = random((m - r0) * w);
    device_->receive_panel(Queue::transfer, panel.data(), m - r0, m - r0, w, nullptr, 0);
    device_->wait(Queue::compute, device_->record(Queue::transfer));
    device_->store_panel(Queue::compute, r0, c0, m - r0, w);
    std::vector<double> ref(panel.begin(), panel.end()), exact(ref.size(), 0.0);
    EXPECT_EQ(compare_block(read_storage(m, n), before, m, n, r0, c0, m - r0, w, ref, exact), 0);
}

TEST_F(GpuDevice, SolveMeetsLapackResidualBound) {
    SCOPED_TRACE(seed_note());
    const int64_t n = 257, nrhs = 3, ldb = n + 4;
    const Vec a = make_matrix(n, n, n, MatrixKind::random, seed_);
    Vec lu = a;
    std::vector<int> ipiv(static_cast<size_t>(n));
    ASSERT_EQ(LAPACKE_sgetrf(LAPACK_COL_MAJOR, n, n, lu.data(), n, ipiv.data()), 0);
    device_->allocate(n + 3, n + 5, 32);  // storage larger than the matrix: ld != n
    device_->upload(Queue::transfer, lu.data(), n, 0, 0, n, n);
    for (const char trans : {'N', 'T', 'C'}) {
        SCOPED_TRACE(std::string("trans ") + trans);
        Vec b = make_matrix(n, nrhs, ldb, MatrixKind::random, seed_ + 7);
        Vec x = b;
        device_->solve(trans, n, nrhs, ipiv.data(), x.data(), ldb);
        const double residual = trans == 'N'
                                    ? solve_residual(n, nrhs, a.data(), n, x.data(), ldb,
                                                     b.data(), ldb)
                                    : solve_residual_trans(n, nrhs, a.data(), n, x.data(), ldb,
                                                           b.data(), ldb);
        EXPECT_LT(residual, kResidualBound);
        EXPECT_EQ(padding_changes(n, nrhs, ldb, x.data()), 0);
    }
}

// n * ld beyond 2^31 elements (the limit of 32-bit offsets is n = 46341).
TEST_F(GpuDevice, OffsetsBeyond32Bits) {
    SCOPED_TRACE(seed_note());
    const int64_t m = 70000, n = 32768;  // 9.2 GB of storage
    if (device_->free_bytes() < (int64_t(12) << 30)) GTEST_SKIP() << "needs 12 GiB free";
    device_->allocate(m, n, 64);
    const int64_t r0 = m - 100, c0 = n - 68, rows = 100, cols = 68;
    ASSERT_GT(r0 * n, int64_t(1) << 31);
    const Vec block = random(rows * cols);
    device_->upload(Queue::compute, block.data(), rows, r0, c0, rows, cols);

    // Swap the last row of storage with row 1000 above the block (also uploaded).
    const Vec far_row = random(cols);
    device_->upload(Queue::compute, far_row.data(), 1, r0 - 1000, c0, 1, cols);
    std::vector<int> ipiv(static_cast<size_t>(m), 0);
    ipiv[r0 - 1000] = static_cast<int>(m);  // 1-based: the last row
    device_->swap_rows(Queue::compute, c0, cols, r0 - 1000, r0 - 999, ipiv.data());
    Vec got(block.size(), kNaN), got_row(far_row.size(), kNaN);
    device_->download(Queue::compute, got.data(), rows, r0, c0, rows, cols);
    device_->download(Queue::compute, got_row.data(), 1, r0 - 1000, c0, 1, cols);
    device_->synchronize();
    Vec expected = block, expected_row = far_row;
    for (int64_t j = 0; j < cols; ++j) std::swap(expected[(rows - 1) + j * rows], expected_row[j]);
    EXPECT_EQ(first_bit_difference(got, expected), -1);
    EXPECT_EQ(first_bit_difference(got_row, expected_row), -1);

    // A22 -= L21 U12 on the block: U12 = its first w rows, A22 the rest.
    const int w = 32;
    const Vec panel = random(rows * w);
    device_->receive_panel(Queue::compute, panel.data(), rows, rows, w, nullptr, 0);
    device_->update_trailing(Queue::compute, r0, w, rows - w, c0, cols);
    device_->download(Queue::compute, got.data(), rows, r0, c0, rows, cols);
    device_->synchronize();
    int64_t wrong = 0;
    for (int64_t j = 0; j < cols; ++j)
        for (int64_t i = 0; i < rows; ++i) {
            double s = expected[i + j * rows], a = std::fabs(s);
            for (int k = 0; i >= w && k < w; ++k) {
                const double lu = double(panel[i + k * rows]) * expected[k + j * rows];
                s -= lu;
                a += std::fabs(lu);
            }
            wrong += !(std::fabs(got[i + j * rows] - s) <= 2.0 * (w + 2) * kUnitRoundoff * a);
        }
    EXPECT_EQ(wrong, 0);
}

// Update precision tf32x3: the split product against a double reference, to
// about 22 bits a product (a single TF32 product keeps 11, which the bound
// below tells apart); L21 is split once per workspace fill, so a second
// update of the same fill and an update after a new fill must each use the
// right panel.
TEST_F(GpuDevice, SplitTf32UpdateMatchesDoubleProduct) {
    SCOPED_TRACE(seed_note());
    const int64_t m = 400, n = 300, r0 = 20;
    const int w = 64;
    const int64_t rows = m - r0 - w, prows = m - r0;
    device_->set_update_precision(UpdatePrecision::tf32x3);
    device_->allocate(m, n, w);
    const Vec before = fill_storage(m, n);
    const Vec first = random(prows * w), second = random(prows * w);
    // (panel, first column, columns): two updates of one fill, then a new fill.
    struct Update {
        const Vec* panel;
        int64_t c0, cols;
    };
    const Update updates[] = {{&first, 10, 50}, {&first, 100, 120}, {&second, 230, 70}};
    for (const Update& u : updates) {
        if (&u == &updates[0] || u.panel != (&u - 1)->panel)
            device_->receive_panel(Queue::compute, u.panel->data(), prows, prows, w, nullptr, 0);
        device_->update_trailing(Queue::compute, r0, w, rows, u.c0, u.cols);
    }
    const Vec after = read_storage(m, n);
    device_->set_update_precision(UpdatePrecision::fp32);
    for (const Update& u : updates) {
        // |c - c^| <= (2 (w + 2) u + 8 2^-22) (|c| + |L21| |U12|): FP32's
        // accumulation and the split's 22 bits a product.
        std::vector<double> ref(static_cast<size_t>(rows * u.cols)), bound(ref.size());
        for (int64_t j = 0; j < u.cols; ++j)
            for (int64_t i = 0; i < rows; ++i) {
                const double c = before[(r0 + w + i) + (u.c0 + j) * m];
                double s = c, a = std::fabs(c);
                for (int k = 0; k < w; ++k) {
                    const double lu = double((*u.panel)[(w + i) + k * prows]) *
                                      before[(r0 + k) + (u.c0 + j) * m];
                    s -= lu;
                    a += std::fabs(lu);
                }
                ref[i + j * rows] = s;
                bound[i + j * rows] = (2.0 * (w + 2) * kUnitRoundoff + 8.0 * std::ldexp(1.0, -22)) * a;
            }
        int wrong = 0;
        for (int64_t j = 0; j < u.cols; ++j)
            for (int64_t i = 0; i < rows; ++i) {
                const double got = after[(r0 + w + i) + (u.c0 + j) * m];
                wrong += !(std::fabs(got - ref[i + j * rows]) <= bound[i + j * rows]);
            }
        EXPECT_EQ(wrong, 0) << "columns " << u.c0 << ".." << u.c0 + u.cols;
    }
}

}  // namespace
}  // namespace tandem::test
