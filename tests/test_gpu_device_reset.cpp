// An application's cudaDeviceReset() between tandem calls destroys the
// context that tandem's streams, handles, buffers and kernel settings (shared
// memory limits, leaf cluster sizes) belong to. After
// tandem::release_resources(), the next calls must set everything up again
// and answer correctly: many steps, so that the swap kernels and the
// clustered leaves (panels taller than 2048 rows) run after the reset too.
// Skips without a GPU. Each ctest runs it in a process of its own.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scheduler/gpu_backend.hpp"
#include "tandem/tandem.hpp"
#include "test_support.hpp"

namespace tandem::test {
namespace {

TEST(GpuAfterDeviceReset, ReleaseResourcesThenSolveAgain) {
    if (gpu::device_count() == 0) GTEST_SKIP() << "no usable CUDA device: " << gpu::unavailable_reason();
    Options options;
    options.backend = Backend::gpu;
    options.block_size = 256;
    options.placement = PanelPlacement::device;
    const int n = 3000, nrhs = 2;
    for (int round = 0; round < 3; ++round) {
        const uint64_t seed = test_seed();
        SCOPED_TRACE("round " + std::to_string(round) + " seed " + std::to_string(seed));
        const std::vector<float> a = make_matrix(n, n, n, MatrixKind::random, seed);
        const std::vector<float> b = make_matrix(n, nrhs, n, MatrixKind::random, seed + 1);
        std::vector<float> lu = a, x = b;
        std::vector<int> ipiv(n);
        ASSERT_EQ(sgesv(n, nrhs, lu.data(), n, ipiv.data(), x.data(), n, options), 0);
        EXPECT_LT(solve_residual(n, nrhs, a.data(), n, x.data(), n, b.data(), n), kResidualBound);
        EXPECT_LT(factorization_residual(n, n, a.data(), n, lu.data(), n, ipiv.data()), kResidualBound);
        ASSERT_EQ(cudaDeviceReset(), cudaSuccess);
        release_resources();
    }
}

}  // namespace
}  // namespace tandem::test
