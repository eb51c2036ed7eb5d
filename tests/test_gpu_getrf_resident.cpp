// tandem::sgetrf_gpu on a matrix in CUDA device memory: LAPACK's INFO, the
// residual, the padding rows of the device array untouched, each panel
// placement, and the same factors as sgetrf on host memory with the same
// plan. Skips without a usable GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "gpu/panel_leaf.hpp"
#include "scheduler/gpu_backend.hpp"
#include "lapack_oracle.hpp"
#include "tandem/tandem.hpp"
#include "test_support.hpp"

namespace tandem::test {
namespace {

#define ASSERT_CUDA(call) ASSERT_EQ((call), cudaSuccess) << #call

class GpuGetrfResident : public ::testing::Test {
protected:
    void SetUp() override {
        if (gpu::device_count() == 0)
            GTEST_SKIP() << "no usable CUDA device: " << gpu::unavailable_reason();
    }
    void TearDown() override {
        if (d_a_) cudaFree(d_a_);
    }
    // A device copy of `host` (lda x n floats).
    void upload(const std::vector<float>& host) {
        if (d_a_) cudaFree(d_a_);
        d_a_ = nullptr;
        ASSERT_CUDA(cudaMalloc(reinterpret_cast<void**>(&d_a_), host.size() * sizeof(float)));
        ASSERT_CUDA(
            cudaMemcpy(d_a_, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
    }
    std::vector<float> download(size_t floats) {
        std::vector<float> host(floats);
        EXPECT_EQ(cudaMemcpy(host.data(), d_a_, floats * sizeof(float), cudaMemcpyDeviceToHost),
                  cudaSuccess);
        return host;
    }
    float* d_a_ = nullptr;
};

struct Case {
    int m, n, block_size;
    PanelPlacement placement;
};

TEST_F(GpuGetrfResident, MatchesLapackInfoWithSmallResidual) {
    const Case cases[] = {
        {1, 1, 0, PanelPlacement::automatic},
        {7, 7, 0, PanelPlacement::automatic},
        {100, 37, 0, PanelPlacement::automatic},
        {37, 100, 0, PanelPlacement::automatic},
        {513, 513, 128, PanelPlacement::cpu},
        {513, 513, 128, PanelPlacement::device},
        {1000, 1000, 0, PanelPlacement::automatic},
        {2048, 2048, 0, PanelPlacement::automatic},
        {1500, 700, 256, PanelPlacement::device},
        {1000, 1000, 1000, PanelPlacement::device},  // one device panel: cuSOLVER on A in place
        {300, 200, 200, PanelPlacement::device},     // the same, tall
        {200, 300, 200, PanelPlacement::device},     // the same, wide
    };
    for (const Case& c : cases) {
        const uint64_t seed = test_seed();
        SCOPED_TRACE("m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) +
                     " nb=" + std::to_string(c.block_size) + " seed=" + std::to_string(seed));
        const int lda = c.m + 5;
        const std::vector<float> a = make_matrix(c.m, c.n, lda, MatrixKind::random, seed);
        ASSERT_NO_FATAL_FAILURE(upload(a));
        Options o;
        o.backend = Backend::gpu;
        o.block_size = c.block_size;
        o.placement = c.placement;
        std::vector<int> ipiv(static_cast<size_t>(std::min(c.m, c.n)), -7);
        Report report;
        const int info = sgetrf_gpu(c.m, c.n, d_a_, lda, ipiv.data(), o, &report);
        const LapackFactors expected = lapack_getrf(c.m, c.n, a, lda);
        EXPECT_EQ(info, expected.info);
        const std::vector<float> lu = download(a.size());
        EXPECT_LT(factorization_residual(c.m, c.n, a.data(), lda, lu.data(), lda, ipiv.data()),
                  kResidualBound);
        EXPECT_EQ(padding_changes(c.m, c.n, lda, lu.data()), 0);
        EXPECT_EQ(report.backend, Backend::gpu);
    }
}

TEST_F(GpuGetrfResident, SameFactorsAsSgetrfOnHostMemory) {
    // Forced widths and sites: both calls follow the same plan and issue the
    // same device operations; only where A comes from and goes to differs.
    const int n = 1200, lda = n;
    const std::vector<float> a = make_matrix(n, n, lda, MatrixKind::random, test_seed());
    for (PanelPlacement placement : {PanelPlacement::cpu, PanelPlacement::device}) {
        SCOPED_TRACE(placement == PanelPlacement::cpu ? "cpu panels" : "device panels");
        Options o;
        o.backend = Backend::gpu;
        o.num_devices = 1;  // sgetrf would use every GPU; sgetrf_gpu uses the one holding A
        o.block_size = 256;
        o.placement = placement;
        o.stream_matrix = false;
        std::vector<float> host = a;
        std::vector<int> ipiv_host(n), ipiv_resident(n);
        ASSERT_EQ(sgetrf(n, n, host.data(), lda, ipiv_host.data(), o), 0);
        ASSERT_NO_FATAL_FAILURE(upload(a));
        ASSERT_EQ(sgetrf_gpu(n, n, d_a_, lda, ipiv_resident.data(), o), 0);
        EXPECT_EQ(ipiv_resident, ipiv_host);
        EXPECT_EQ(first_bit_difference(download(a.size()), host), -1);
    }
}

TEST_F(GpuGetrfResident, SolvesInGpuMemory) {
    const int n = 1500, nrhs = 5, lda = n + 3, ldb = n + 1;
    const uint64_t seed = test_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    const std::vector<float> a = make_matrix(n, n, lda, MatrixKind::random, seed);
    const std::vector<float> b = make_matrix(n, nrhs, ldb, MatrixKind::random, seed + 1);
    ASSERT_NO_FATAL_FAILURE(upload(a));
    float* d_b = nullptr;
    ASSERT_CUDA(cudaMalloc(reinterpret_cast<void**>(&d_b), b.size() * sizeof(float)));
    auto reset_b = [&] {
        ASSERT_CUDA(cudaMemcpy(d_b, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice));
    };
    auto download_b = [&] {
        std::vector<float> x(b.size());
        EXPECT_EQ(cudaMemcpy(x.data(), d_b, x.size() * sizeof(float), cudaMemcpyDeviceToHost),
                  cudaSuccess);
        return x;
    };
    Options o;
    o.backend = Backend::gpu;
    std::vector<int> ipiv(n);
    ASSERT_EQ(sgetrf_gpu(n, n, d_a_, lda, ipiv.data(), o), 0);
    for (char trans : {'N', 'T'}) {
        SCOPED_TRACE(std::string("trans ") + trans);
        ASSERT_NO_FATAL_FAILURE(reset_b());
        Report report;
        EXPECT_EQ(sgetrs_gpu(trans, n, nrhs, d_a_, lda, ipiv.data(), d_b, ldb, o, &report), 0);
        const std::vector<float> x = download_b();
        const double residual =
            trans == 'N'
                ? solve_residual(n, nrhs, a.data(), lda, x.data(), ldb, b.data(), ldb)
                : solve_residual_trans(n, nrhs, a.data(), lda, x.data(), ldb, b.data(), ldb);
        EXPECT_LT(residual, kResidualBound);
        EXPECT_EQ(padding_changes(n, nrhs, ldb, x.data()), 0);
        EXPECT_EQ(report.backend, Backend::gpu);
    }
    // Host memory for B under backend gpu: argument 7, B untouched.
    std::vector<float> host_b = b;
    EXPECT_EQ(sgetrs_gpu('N', n, nrhs, d_a_, lda, ipiv.data(), host_b.data(), ldb, o), -7);
    EXPECT_EQ(first_bit_difference(host_b, b), -1);
    // sgesv_gpu on a fresh copy.
    ASSERT_NO_FATAL_FAILURE(upload(a));
    ASSERT_NO_FATAL_FAILURE(reset_b());
    EXPECT_EQ(sgesv_gpu(n, nrhs, d_a_, lda, ipiv.data(), d_b, ldb, o), 0);
    const std::vector<float> x = download_b();
    EXPECT_LT(solve_residual(n, nrhs, a.data(), lda, x.data(), ldb, b.data(), ldb), kResidualBound);
    cudaFree(d_b);
}

// The host routines never dereference GPU memory: such an array, or an ipiv
// in GPU memory, is a bad argument, and nothing is written.
TEST_F(GpuGetrfResident, HostRoutinesRejectGpuMemory) {
    const int n = 64;
    const std::vector<float> a = make_matrix(n, n, n, MatrixKind::random, test_seed());
    ASSERT_NO_FATAL_FAILURE(upload(a));
    int* d_ipiv = nullptr;
    ASSERT_CUDA(cudaMalloc(reinterpret_cast<void**>(&d_ipiv), sizeof(int) * n));
    std::vector<float> host = a, b(n, 1.0f);
    std::vector<int> ipiv(n, 1);
    Report report;
    EXPECT_EQ(sgetrf(n, n, d_a_, n, ipiv.data(), {}, &report), -3);
    EXPECT_NE(report.message.find("sgetrf_gpu"), std::string::npos) << report.message;
    EXPECT_EQ(sgetrf(n, n, host.data(), n, d_ipiv, {}), -5);
    EXPECT_EQ(sgetrs('N', n, 1, d_a_, n, ipiv.data(), b.data(), n, {}), -4);
    EXPECT_EQ(sgetrs('N', n, 1, host.data(), n, d_ipiv, b.data(), n, {}), -6);
    EXPECT_EQ(sgesv(n, 1, host.data(), n, ipiv.data(), d_a_, n, {}), -6);
    Options o;
    o.backend = Backend::gpu;
    EXPECT_EQ(sgetrf_gpu(n, n, d_a_, n, d_ipiv, o), -5);
    EXPECT_EQ(first_bit_difference(host, a), -1);
    EXPECT_EQ(first_bit_difference(download(a.size()), a), -1);
    EXPECT_EQ(b, std::vector<float>(n, 1.0f));
    cudaFree(d_ipiv);
}

// One device panel over the caller's column-major matrix, by each route:
// tandem's recursive panel (its leaves held by thread block clusters beyond
// 2048 rows: 4096 and 4100 rows in 4 and 5 blocks of 32-wide leaves, 9000 in
// 5 blocks of 16-wide leaves) and cuSOLVER's getrf (when asked). LAPACK's info (an exactly zero
// column in a later leaf), the residual bound, the padding untouched. The
// pivots are not compared with LAPACK's here: over hundreds of columns two
// candidates can lie within the rounding by which the routes differ (seen
// once at 600 x 600); the panel tests of test_gpu_device.cpp compare them.
TEST_F(GpuGetrfResident, OneDevicePanelByEachRoute) {
    for (DevicePanelMethod method : {DevicePanelMethod::automatic, DevicePanelMethod::recursive,
                                     DevicePanelMethod::cusolver})
        for (auto [m, n] : {std::pair<int, int>{600, 600}, {1100, 333}, {4096, 4096}, {4100, 300}, {9000, 700}}) {
            const uint64_t seed = test_seed();
            SCOPED_TRACE("method " + std::to_string(static_cast<int>(method)) + " m=" +
                         std::to_string(m) + " n=" + std::to_string(n) +
                         " seed=" + std::to_string(seed));
            const int lda = m + 3;
            std::vector<float> a = make_matrix(m, n, lda, MatrixKind::random, seed);
            for (int i = 0; i < m; ++i) a[static_cast<size_t>(i + 190 * lda)] = 0.0f;
            ASSERT_NO_FATAL_FAILURE(upload(a));
            Options o;
            o.backend = Backend::gpu;
            o.block_size = n;
            o.placement = PanelPlacement::device;
            o.device_panel = method;
            std::vector<int> ipiv(static_cast<size_t>(n), -7);
            Report report;
            const int info = sgetrf_gpu(m, n, d_a_, lda, ipiv.data(), o, &report);
            const LapackFactors expected = lapack_getrf(m, n, a, lda);
            EXPECT_EQ(info, expected.info);
            EXPECT_EQ(info, 191);
            const std::vector<float> lu = download(a.size());
            EXPECT_LT(factorization_residual(m, n, a.data(), lda, lu.data(), lda, ipiv.data()),
                      kResidualBound);
            EXPECT_EQ(padding_changes(m, n, lda, lu.data()), 0);
            EXPECT_NE(report.plan.find("in place"), std::string::npos) << report.plan;
        }
}

TEST_F(GpuGetrfResident, SingularMatrix) {
    const int n = 700, lda = n;
    std::vector<float> a = make_matrix(n, n, lda, MatrixKind::random, test_seed());
    for (int i = 0; i < n; ++i) a[static_cast<size_t>(i + 300 * lda)] = 0.0f;
    const LapackFactors expected = lapack_getrf(n, n, a, lda);
    ASSERT_NO_FATAL_FAILURE(upload(a));
    std::vector<int> ipiv(n);
    Options o;
    o.backend = Backend::gpu;
    EXPECT_EQ(sgetrf_gpu(n, n, d_a_, lda, ipiv.data(), o), expected.info);
    EXPECT_GT(expected.info, 0);
}

// With one-block leaves only, the leaves of a 4096 x 4096 matrix in one
// device panel are 8 columns wide, and the right half of the recursion's top
// node takes the interchanges of 256 leaves: more than one launch of
// catch_up_columns takes, so its passes go in several launches, in order.
// Checked by LAPACK's INFO and the solve with the factors (O(n^2) on the host).
TEST_F(GpuGetrfResident, InterchangesOfManyLeavesCatchUpInSeveralLaunches) {
    struct ClustersBackOn {  // however the test ends
        ~ClustersBackOn() { gpu::set_leaf_cluster_limit(gpu::kDefaultLeafClusterLimit); }
    } clusters_back_on;
    gpu::set_leaf_cluster_limit(1);
    const int n = 4096, lda = n;
    const uint64_t seed = test_seed();
    SCOPED_TRACE("seed " + std::to_string(seed));
    const std::vector<float> a = make_matrix(n, n, lda, MatrixKind::random, seed);
    ASSERT_NO_FATAL_FAILURE(upload(a));
    Options o;
    o.backend = Backend::gpu;
    o.block_size = n;
    o.placement = PanelPlacement::device;
    o.device_panel = DevicePanelMethod::recursive;
    std::vector<int> ipiv(static_cast<size_t>(n), -7);
    Report report;
    ASSERT_EQ(sgetrf_gpu(n, n, d_a_, lda, ipiv.data(), o, &report), 0);
    EXPECT_NE(report.plan.find("in place"), std::string::npos) << report.plan;
    std::vector<float> lu = download(a.size());
    const std::vector<float> b = make_matrix(n, 1, n, MatrixKind::random, seed + 1);
    std::vector<float> x = b;
    ASSERT_EQ(LAPACKE_sgetrs(LAPACK_COL_MAJOR, 'N', n, 1, lu.data(), lda, ipiv.data(), x.data(), n),
              0);
    EXPECT_LT(inf_backward_error(n, 1, a.data(), lda, x.data(), n, b.data(), n), kResidualBound);
}

}  // namespace
}  // namespace tandem::test
