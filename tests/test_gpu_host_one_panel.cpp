// sgetrf and sgesv on HOST memory when the plan is one device panel over the
// whole matrix (the matrix copied column-major to the GPU, factored there and
// copied back, the factors kept for the solve), from pageable and from pinned
// memory; and the automatic backend's choice between LAPACK and the GPU for
// small and large matrices. Skips without a usable GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gpu/cuda_backend.hpp"
#include "lapack_oracle.hpp"
#include "tandem/tandem.hpp"
#include "test_support.hpp"

namespace tandem::test {
namespace {

class GpuHostOnePanel : public ::testing::Test {
protected:
    void SetUp() override {
        if (gpu::device_count() == 0)
            GTEST_SKIP() << "no usable CUDA device: " << gpu::unavailable_reason();
    }
};

// `floats` floats of pinned host memory holding `values`, freed at scope exit.
struct PinnedCopy {
    float* data = nullptr;
    explicit PinnedCopy(const std::vector<float>& values) {
        EXPECT_EQ(cudaMallocHost(reinterpret_cast<void**>(&data), values.size() * sizeof(float)),
                  cudaSuccess);
        if (data) std::copy(values.begin(), values.end(), data);
    }
    ~PinnedCopy() { cudaFreeHost(data); }
    PinnedCopy(const PinnedCopy&) = delete;
    PinnedCopy& operator=(const PinnedCopy&) = delete;
};

Options one_device_panel(int n) {
    Options o;
    o.backend = Backend::gpu;
    o.num_devices = 1;
    o.block_size = n;
    o.placement = PanelPlacement::device;
    return o;
}

TEST_F(GpuHostOnePanel, FactorsPageableAndPinnedMatricesAsLapack) {
    struct Case {
        int m, n;
        bool pinned;
    };
    // 1000 x 1000 goes through the pinned bounce buffers (pageable); 60 x 40
    // and 40 x 60 in one copy each way.
    const Case cases[] = {{1000, 1000, false}, {1000, 1000, true}, {60, 40, false},
                          {40, 60, true},      {700, 700, false}};
    for (const Case& c : cases) {
        const uint64_t seed = test_seed();
        SCOPED_TRACE("m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) +
                     (c.pinned ? " pinned" : " pageable") + " seed=" + std::to_string(seed));
        const int lda = c.m + 3;
        const std::vector<float> a = make_matrix(c.m, c.n, lda, MatrixKind::random, seed);
        std::vector<float> pageable = a;
        PinnedCopy pinned(a);
        ASSERT_NE(pinned.data, nullptr);
        float* const target = c.pinned ? pinned.data : pageable.data();
        std::vector<int> ipiv(static_cast<size_t>(std::min(c.m, c.n)), -7);
        Report report;
        const int info = sgetrf(c.m, c.n, target, lda, ipiv.data(),
                                one_device_panel(std::min(c.m, c.n)), &report);
        const std::vector<float> lu(target, target + a.size());
        EXPECT_EQ(info, lapack_getrf(c.m, c.n, a, lda).info);
        EXPECT_LT(factorization_residual(c.m, c.n, a.data(), lda, lu.data(), lda, ipiv.data()),
                  kResidualBound);
        EXPECT_EQ(padding_changes(c.m, c.n, lda, lu.data()), 0);
        EXPECT_EQ(report.backend, Backend::gpu);
        EXPECT_NE(report.plan.find("column-major copy"), std::string::npos) << report.plan;
    }
}

TEST_F(GpuHostOnePanel, ReportsAnExactlyZeroPivotAsLapack) {
    const int n = 300, lda = n;
    std::vector<float> a = make_matrix(n, n, lda, MatrixKind::random, test_seed());
    for (int i = 0; i < n; ++i) a[static_cast<size_t>(i + 120 * lda)] = 0.0f;  // column 121 zero
    std::vector<float> lu = a;
    std::vector<int> ipiv(n);
    const int info = sgetrf(n, n, lu.data(), lda, ipiv.data(), one_device_panel(n));
    EXPECT_EQ(info, lapack_getrf(n, n, a, lda).info);
    EXPECT_GT(info, 0);
}

TEST_F(GpuHostOnePanel, SolvesWithTheFactorsKeptOnTheGpu) {
    const int n = 900, lda = n + 2, ldb = n + 1;
    for (int nrhs : {1, 20}) {
        for (bool pinned_b : {false, true}) {
            const uint64_t seed = test_seed();
            SCOPED_TRACE("nrhs=" + std::to_string(nrhs) + (pinned_b ? " pinned B" : "") +
                         " seed=" + std::to_string(seed));
            const std::vector<float> a = make_matrix(n, n, lda, MatrixKind::random, seed);
            const std::vector<float> b = make_matrix(n, nrhs, ldb, MatrixKind::random, seed + 1);
            std::vector<float> lu = a, pageable_b = b;
            PinnedCopy pinned(b);
            ASSERT_NE(pinned.data, nullptr);
            float* const x = pinned_b ? pinned.data : pageable_b.data();
            std::vector<int> ipiv(n);
            Report report;
            ASSERT_EQ(sgesv(n, nrhs, lu.data(), lda, ipiv.data(), x, ldb, one_device_panel(n),
                            &report),
                      0);
            EXPECT_EQ(report.backend, Backend::gpu);
            EXPECT_LT(solve_residual(n, nrhs, a.data(), lda, x, ldb, b.data(), ldb),
                      kResidualBound);
            EXPECT_EQ(padding_changes(n, nrhs, ldb, x), 0);
            // The factors in A are the same as sgetrf's.
            EXPECT_LT(factorization_residual(n, n, a.data(), lda, lu.data(), lda, ipiv.data()),
                      kResidualBound);
        }
    }
}

TEST_F(GpuHostOnePanel, AutomaticBackendTakesTheCpuForTinyAndTheGpuForLargeMatrices) {
    struct Case {
        int n;
        Backend expected;
    };
    // LAPACK factors 16 x 16 in microseconds, a GPU call costs tens of them;
    // at 4096 the GPU is many times faster than the CPU.
    for (const Case c : {Case{16, Backend::cpu}, Case{4096, Backend::gpu}}) {
        SCOPED_TRACE("n=" + std::to_string(c.n));
        const std::vector<float> a = make_matrix(c.n, c.n, c.n, MatrixKind::random, test_seed());
        const std::vector<float> b = make_matrix(c.n, 1, c.n, MatrixKind::random, test_seed());
        std::vector<float> lu = a, x = b;
        std::vector<int> ipiv(static_cast<size_t>(c.n));
        Report report;
        ASSERT_EQ(sgesv(c.n, 1, lu.data(), c.n, ipiv.data(), x.data(), c.n, Options{}, &report), 0);
        EXPECT_EQ(report.backend, c.expected) << report.message;
        EXPECT_NE(report.message.find(c.expected == Backend::cpu ? "automatic: the CPU"
                                                                  : "automatic: the GPU"),
                  std::string::npos)
            << report.message;
        EXPECT_LT(solve_residual(c.n, 1, a.data(), c.n, x.data(), c.n, b.data(), c.n),
                  kResidualBound);
    }
}

}  // namespace
}  // namespace tandem::test
