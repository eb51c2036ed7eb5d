// The CUDA device against the host device (cpu/host_device.cpp), the oracle:
// the same sequence of device operations on the same inputs must leave the
// same storage (to rounding) and the same pivots. The sequences are those of
// the blocked LU: panels factored on the device or received from the host
// (with inv(L11) or without), taken into the workspace, row interchanges,
// U12, trailing updates, and a left-looking catch-up of deferred columns.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/cpu_backend.hpp"
#include "tests/gpu_device_fixture.hpp"

namespace tandem::test {
namespace {

// Both devices, with the same storage.
class GpuAgainstHost : public GpuDevice {
protected:
    void SetUp() override {
        GpuDevice::SetUp();
        if (IsSkipped()) return;
        host_ = make_host_device(0);
    }
    void allocate(int64_t rows, int64_t cols, int max_width) {
        for (Device* d : both()) d->allocate(rows, cols, max_width);
        rows_ = rows;
        cols_ = cols;
        const Vec a = random(rows * cols);
        for (Device* d : both()) d->upload(Queue::compute, a.data(), rows, 0, 0, rows, cols);
    }
    std::vector<Device*> both() { return {device_.get(), host_.get()}; }
    // The largest difference of the two storages, relative to max(1, |host's entry|).
    double storage_difference() {
        Vec got(static_cast<size_t>(rows_ * cols_)), want(got.size());
        device_->download(Queue::compute, got.data(), rows_, 0, 0, rows_, cols_);
        host_->download(Queue::compute, want.data(), rows_, 0, 0, rows_, cols_);
        device_->synchronize();
        double worst = 0.0;
        for (size_t i = 0; i < got.size(); ++i) {
            const double d = std::fabs(double(got[i]) - want[i]) / std::max(1.0, std::fabs(double(want[i])));
            worst = std::isnan(d) ? INFINITY : std::max(worst, d);
        }
        return worst;
    }
    std::unique_ptr<Device> host_;
    int64_t rows_ = 0, cols_ = 0;
};

// A right-looking LU of the whole storage in steps of w, each panel factored
// by the device itself: pivots equal (random data has no ties), factors equal
// to rounding.
TEST_F(GpuAgainstHost, StepsWithDevicePanels) {
    SCOPED_TRACE(seed_note());
    const int64_t m = 300, n = 260;
    const int w = 48;
    allocate(m, n, w);
    std::vector<int> ipiv_gpu(static_cast<size_t>(n)), ipiv_host(ipiv_gpu.size());
    float* pivot_block[2] = {device_->host_alloc(w + 1), host_->host_alloc(w + 1)};
    for (int64_t j = 0; j < std::min(m, n); j += w) {
        const int width = static_cast<int>(std::min<int64_t>(w, std::min(m, n) - j));
        const int64_t right = j + width, rows = m - j;
        for (int d = 0; d < 2; ++d) {
            Device& dev = *both()[d];
            std::vector<int>& ipiv = d == 0 ? ipiv_gpu : ipiv_host;
            int* pivots = reinterpret_cast<int*>(pivot_block[d]);
            dev.factor_panel(Queue::compute, j, j, rows, width, pivots);
            dev.synchronize();
            ASSERT_EQ(pivots[width], 0) << "info at step " << j;
            for (int i = 0; i < width; ++i) ipiv[j + i] = pivots[i] + static_cast<int>(j);
            dev.take_panel(Queue::compute, j, j, rows, width);
            dev.swap_rows(Queue::compute, 0, j, j, right, ipiv.data());
            dev.swap_rows(Queue::compute, right, n - right, j, right, ipiv.data());
            dev.form_u12(Queue::compute, j, width, right, n - right, false);
            dev.update_trailing(Queue::compute, j, width, m - right, right, n - right);
            dev.synchronize();
        }
        ASSERT_EQ(ipiv_gpu, ipiv_host) << "pivots after the panel at column " << j;
    }
    EXPECT_LT(storage_difference(), 2e-4);
    device_->host_free(pivot_block[0]);
    host_->host_free(pivot_block[1]);
}

// Panels received from the host, with inv(L11) (U12 by a product) and
// without (TRSM), stored into the owner's columns, then the interchanges and
// the update; and the last panel's columns caught up left-looking.
TEST_F(GpuAgainstHost, ReceivedPanelsAndCatchUp) {
    SCOPED_TRACE(seed_note());
    const int64_t m = 256, n = 256;
    const int w = 32;
    allocate(m, n, w);
    std::vector<int> ipiv(static_cast<size_t>(n));
    for (int64_t j = 0; j < 128; j += w) {
        const Panel p = make_panel(m - j, w, seed_ + static_cast<uint64_t>(j));
        for (int i = 0; i < w; ++i)  // interchanges within the next rows, none repeated
            ipiv[j + i] = static_cast<int>(j + i + 1 + (i * 7) % std::min<int64_t>(40, m - j - i));
        const bool use_inverse = (j / w) % 2 == 0;
        for (Device* dev : both()) {
            dev->receive_panel(Queue::compute, p.lu.data(), p.rows, p.rows, w,
                               use_inverse ? p.inv.data() : nullptr, w);
            dev->store_panel(Queue::compute, j, j, p.rows, w);
            dev->swap_rows(Queue::compute, 0, j, j, j + w, ipiv.data());
            // Columns 192.. are left for the catch-up below.
            dev->swap_rows(Queue::compute, j + w, 192 - (j + w), j, j + w, ipiv.data());
            dev->form_u12(Queue::compute, j, w, j + w, 192 - (j + w), use_inverse);
            dev->update_trailing(Queue::compute, j, w, m - j - w, j + w, 192 - (j + w));
            dev->synchronize();
        }
    }
    for (Device* dev : both()) {
        dev->catch_up(Queue::compute, 192, 64, 128, ipiv.data());
        dev->synchronize();
    }
    EXPECT_LT(storage_difference(), 2e-4);
}

// The same steps while both devices keep left factors, as several devices do
// while blocks arrive: each step's interchanges applied to the columns kept,
// then its panel kept. The catch-up then takes L from them, not from the
// storage (scribbled over first): the caught-up columns equal, to rounding,
// those of a host device that took L from its storage.
TEST_F(GpuAgainstHost, CatchUpFromLeftFactors) {
    SCOPED_TRACE(seed_note());
    const int64_t m = 256, n = 256;
    const int w = 32;
    allocate(m, n, w);
    const Vec a = random(m * n);
    std::unique_ptr<Device> reference = make_host_device(1);
    reference->allocate(m, n, w);
    const std::vector<Device*> all = {device_.get(), host_.get(), reference.get()};
    for (Device* dev : all) dev->upload(Queue::compute, a.data(), m, 0, 0, m, n);
    for (Device* dev : both()) dev->hold_left_factors(160);
    std::vector<int> ipiv(static_cast<size_t>(n));
    for (int64_t j = 0; j < 128; j += w) {
        const Panel p = make_panel(m - j, w, seed_ + static_cast<uint64_t>(j));
        for (int i = 0; i < w; ++i)  // interchanges within the next rows, none repeated
            ipiv[j + i] = static_cast<int>(j + i + 1 + (i * 5) % std::min<int64_t>(40, m - j - i));
        for (Device* dev : all) {
            const bool keeps = dev != reference.get();
            dev->receive_panel(Queue::compute, p.lu.data(), p.rows, p.rows, w, nullptr, w);
            dev->store_panel(Queue::compute, j, j, p.rows, w);
            dev->swap_rows(Queue::compute, 0, j, j, j + w, ipiv.data());
            if (keeps) {
                dev->swap_left_factor_rows(Queue::compute, j, j, j + w, ipiv.data());
                dev->keep_panel(Queue::compute, j);
            }
            dev->swap_rows(Queue::compute, j + w, 192 - (j + w), j, j + w, ipiv.data());
            dev->form_u12(Queue::compute, j, w, j + w, 192 - (j + w), false);
            dev->update_trailing(Queue::compute, j, w, m - j - w, j + w, 192 - (j + w));
            dev->synchronize();
        }
    }
    const Vec noise = random(m * 128);
    for (Device* dev : both()) dev->upload(Queue::compute, noise.data(), m, 0, 0, m, 128);
    for (Device* dev : all) {
        dev->catch_up(Queue::compute, 192, 64, 128, ipiv.data());
        dev->synchronize();
    }
    EXPECT_LT(storage_difference(), 2e-4);
    Vec got(static_cast<size_t>(m * 64)), want(got.size());
    device_->download(Queue::compute, got.data(), m, 0, 192, m, 64);
    reference->download(Queue::compute, want.data(), m, 0, 192, m, 64);
    device_->synchronize();
    double worst = 0.0;
    for (size_t i = 0; i < got.size(); ++i)
        worst = std::max(worst, std::fabs(double(got[i]) - want[i]) /
                                    std::max(1.0, std::fabs(double(want[i]))));
    EXPECT_LT(worst, 2e-4);
    const int64_t held = device_->left_factor_bytes();
    EXPECT_GE(held, int64_t(sizeof(float)) * m * 160);
    for (Device* dev : both()) dev->hold_left_factors(0);
    EXPECT_THROW(device_->keep_panel(Queue::compute, 0), Error);
    EXPECT_THROW(host_->keep_panel(Queue::compute, 0), Error);
    // The GPU, its memory far from half used, keeps the memory for the next
    // call's hold, through that call's allocate(); the host gives it back.
    EXPECT_EQ(host_->left_factor_bytes(), 0);
    EXPECT_EQ(device_->left_factor_bytes(), held);
    allocate(m, n, w);
    EXPECT_EQ(device_->left_factor_bytes(), held);
}

}  // namespace
}  // namespace tandem::test
