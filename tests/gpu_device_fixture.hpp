// Shared by the CUDA device tests (test_gpu_device*.cpp): a fixture that skips
// without a usable CUDA device and hands out fresh random data from a printed
// seed (TANDEM_TEST_SEED reproduces a failure), and the host-side inputs the
// device operations take.
#ifndef TANDEM_TESTS_GPU_DEVICE_FIXTURE_HPP
#define TANDEM_TESTS_GPU_DEVICE_FIXTURE_HPP

#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gpu/cuda_device.hpp"
#include "scheduler/gpu_backend.hpp"
#include "tandem/tandem.hpp"
#include "tests/test_support.hpp"

namespace tandem::test {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();  // poison for outputs
constexpr double kUnitRoundoff = 1.0 / (1 << 24);

using Vec = std::vector<float>;

class GpuDevice : public ::testing::Test {
protected:
    void SetUp() override {
        if (gpu::device_count() == 0)
            GTEST_SKIP() << "no usable CUDA device: " << gpu::unavailable_reason();
        seed_ = test_seed();
        rng_.seed(seed_);
        device_ = gpu::make_cuda_device(0);
    }

    std::string seed_note() const { return "seed " + std::to_string(seed_); }

    // count floats uniform in [-1, 1].
    Vec random(int64_t count) {
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        Vec v(static_cast<size_t>(count));
        for (float& x : v) x = u(rng_);
        return v;
    }

    // Fills storage rows x cols with a random matrix and returns it (column-major, ld = rows).
    Vec fill_storage(int64_t rows, int64_t cols) {
        Vec a = random(rows * cols);
        device_->upload(Queue::compute, a.data(), std::max<int64_t>(rows, 1), 0, 0, rows, cols);
        return a;
    }

    // The whole rows x cols storage, column-major with ld = rows.
    Vec read_storage(int64_t rows, int64_t cols) {
        Vec out(static_cast<size_t>(rows * cols), kNaN);
        device_->download(Queue::compute, out.data(), std::max<int64_t>(rows, 1), 0, 0, rows,
                          cols);
        device_->synchronize();
        return out;
    }

    uint64_t seed_ = 0;
    std::mt19937_64 rng_;
    std::unique_ptr<gpu::CudaDevice> device_;
};

// A factored panel as the CPU sends it: LAPACK's LU of a random rows x width
// matrix (so |L| <= 1, as partial pivoting gives), and inv(L11) computed in
// double by forward substitution.
struct Panel {
    int64_t rows = 0;
    int width = 0;
    Vec lu;   // rows x width, column-major, ld = rows (U11 above the diagonal: never read)
    Vec inv;  // width x width, column-major, ld = width: ones on the diagonal, zeros above
    double l(int64_t i, int64_t k) const {
        return i == k ? 1.0 : i > k ? double(lu[i + k * rows]) : 0.0;
    }
};

inline Panel make_panel(int64_t rows, int width, uint64_t seed) {
    Panel p;
    p.rows = rows;
    p.width = width;
    p.lu = make_matrix(rows, width, rows, MatrixKind::random, seed);
    std::vector<int> ipiv(static_cast<size_t>(width));
    EXPECT_EQ(LAPACKE_sgetrf(LAPACK_COL_MAJOR, static_cast<int>(rows), width, p.lu.data(),
                             static_cast<int>(rows), ipiv.data()),
              0);
    std::vector<double> x(static_cast<size_t>(width) * width, 0.0);  // L11 X = I
    for (int j = 0; j < width; ++j)
        for (int i = j; i < width; ++i) {
            double s = i == j ? 1.0 : 0.0;
            for (int k = j; k < i; ++k) s -= p.l(i, k) * x[k + j * width];
            x[i + j * width] = s;
        }
    p.inv.assign(x.begin(), x.end());
    return p;
}

}  // namespace tandem::test

#endif  // TANDEM_TESTS_GPU_DEVICE_FIXTURE_HPP
