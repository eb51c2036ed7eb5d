// tandem::sgesv_refined_gpu and sgesv_refined on a GPU, with updates on the
// TF32 tensor cores over many steps, so that refinement has work to do:
// the stopping test recomputed in double, A, B untouched on success, and the
// fallbacks (zero pivot, NaN) answering as sgesv_gpu. Skips without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "scheduler/gpu_backend.hpp"
#include "tandem/tandem.hpp"
#include "test_support.hpp"

namespace tandem::test {
namespace {

#define ASSERT_CUDA(call) ASSERT_EQ((call), cudaSuccess) << #call

double backward_error(int n, int nrhs, const std::vector<float>& a, const std::vector<float>& x,
                      const std::vector<float>& b) {
    return inf_backward_error(n, nrhs, a.data(), n, x.data(), n, b.data(), n);
}

class GpuRefined : public ::testing::Test {
protected:
    void SetUp() override {
        if (gpu::device_count() == 0)
            GTEST_SKIP() << "no usable CUDA device: " << gpu::unavailable_reason();
    }
    void TearDown() override {
        for (float* p : owned_) cudaFree(p);
    }
    float* to_device(const std::vector<float>& host) {
        float* p = nullptr;
        EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&p), host.size() * sizeof(float)), cudaSuccess);
        owned_.push_back(p);
        EXPECT_EQ(cudaMemcpy(p, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice),
                  cudaSuccess);
        return p;
    }
    static std::vector<float> to_host(const float* d, size_t count) {
        std::vector<float> host(count);
        EXPECT_EQ(cudaMemcpy(host.data(), d, count * sizeof(float), cudaMemcpyDeviceToHost),
                  cudaSuccess);
        return host;
    }
    static Options many_tf32_steps() {
        Options o;
        o.backend = Backend::gpu;
        o.block_size = 128;
        o.placement = PanelPlacement::device;
        return o;
    }
    std::vector<float*> owned_;
};

TEST_F(GpuRefined, DeviceMemoryMeetsTheTestAndLeavesAUntouched) {
    for (UpdatePrecision precision : {UpdatePrecision::tf32, UpdatePrecision::bf16}) {
        const int n = 1500, nrhs = 2;
        const uint64_t seed = test_seed();
        SCOPED_TRACE("seed " + std::to_string(seed));
        const std::vector<float> a = make_matrix(n, n, n, MatrixKind::random, seed);
        const std::vector<float> b = make_matrix(n, nrhs, n, MatrixKind::random, seed + 1);
        float* d_a = to_device(a);
        float* d_b = to_device(b);
        float* d_x = to_device(std::vector<float>(size_t(n) * nrhs, 0.0f));
        std::vector<int> ipiv(n);
        int iter = 99;
        Options o = many_tf32_steps();
        o.update_precision = precision;
        Report report;
        EXPECT_EQ(sgesv_refined_gpu(n, nrhs, d_a, n, ipiv.data(), d_b, n, d_x, n, &iter, o, &report), 0);
        EXPECT_GE(iter, 1) << report.message;
        EXPECT_EQ(first_bit_difference(to_host(d_a, a.size()), a), -1);
        EXPECT_EQ(first_bit_difference(to_host(d_b, b.size()), b), -1);
        EXPECT_LE(backward_error(n, nrhs, a, to_host(d_x, b.size()), b), 0x1p-23) << report.message;
    }
}

TEST_F(GpuRefined, HostMemoryMeetsTheTest) {
    const int n = 1200, nrhs = 3;
    const uint64_t seed = test_seed();
    SCOPED_TRACE("seed " + std::to_string(seed));
    const std::vector<float> a = make_matrix(n, n, n, MatrixKind::random, seed);
    const std::vector<float> b = make_matrix(n, nrhs, n, MatrixKind::random, seed + 1);
    std::vector<float> a_work = a, x(b.size());
    std::vector<int> ipiv(n);
    int iter = 99;
    Report report;
    EXPECT_EQ(sgesv_refined(n, nrhs, a_work.data(), n, ipiv.data(), b.data(), n, x.data(), n, &iter,
                            many_tf32_steps(), &report),
              0);
    EXPECT_GE(iter, 1) << report.message;
    EXPECT_EQ(first_bit_difference(a_work, a), -1);
    EXPECT_LE(backward_error(n, nrhs, a, x, b), 0x1p-23) << report.message;
}

// A zero column (iter -3) and a NaN (iter -2): sgesv_gpu's info, factors and X.
TEST_F(GpuRefined, FallbacksAnswerAsSgesvGpu) {
    for (int which : {0, 1}) {
        const int n = 700, nrhs = 1;
        const uint64_t seed = test_seed();
        SCOPED_TRACE("seed " + std::to_string(seed) + " case " + std::to_string(which));
        std::vector<float> a = make_matrix(n, n, n, MatrixKind::random, seed);
        if (which == 0)
            for (int i = 0; i < n; ++i) a[i + size_t(300) * n] = 0.0f;
        else
            a[10 + size_t(500) * n] = std::numeric_limits<float>::quiet_NaN();
        const std::vector<float> b = make_matrix(n, nrhs, n, MatrixKind::random, seed + 1);
        float* d_a = to_device(a);
        float* d_b = to_device(b);
        float* d_x = to_device(std::vector<float>(b.size(), 0.0f));
        std::vector<int> ipiv(n), ipiv_plain(n);
        int iter = 99;
        const Options o = many_tf32_steps();
        const int info = sgesv_refined_gpu(n, nrhs, d_a, n, ipiv.data(), d_b, n, d_x, n, &iter, o);
        EXPECT_EQ(iter, which == 0 ? -3 : -2);
        float* d_plain = to_device(a);
        float* d_plain_b = to_device(b);
        const int plain = sgesv_gpu(n, nrhs, d_plain, n, ipiv_plain.data(), d_plain_b, n, o);
        EXPECT_EQ(info, plain);
        if (which == 0) { EXPECT_EQ(info, 301); }  // U(300,300) = 0 exactly
        EXPECT_EQ(ipiv, ipiv_plain);
        EXPECT_EQ(first_bit_difference(to_host(d_a, a.size()), to_host(d_plain, a.size())), -1);
        if (plain == 0) {
            EXPECT_EQ(first_bit_difference(to_host(d_x, b.size()), to_host(d_plain_b, b.size())), -1);
        }
    }
}

}  // namespace
}  // namespace tandem::test
