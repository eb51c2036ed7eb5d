// sgetrf and sgesv on HOST memory when the plan is one device panel over the
// whole matrix (the matrix copied column-major to the GPU, factored there and
// copied back, the factors kept for the solve), from pageable and from pinned
// memory; and the automatic backend's choice between LAPACK and the GPU, from a
// model whose timed calls put the crossover at a known size. Skips without a
// usable GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gpu/cuda_device.hpp"
#include "gpu/permute_rows.hpp"
#include "gpu/recursive_panel.hpp"
#include "scheduler/cache_file.hpp"
#include "scheduler/gpu_backend.hpp"
#include "scheduler/performance_model.hpp"
#include "src/model_cache.hpp"
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

// The timeline of a call whose copies ran beside it: each part goes up, then
// is factored (part 0 after its upload, each later part after its own), the
// rows of the factors go back in pieces, the last of them after the last
// part's factorization began; nothing before the call or after it. A call that
// copied, then factored, has its one span.
void expect_parts_timeline(const Report& report, bool beside) {
    std::vector<TimelineSpan> uploads, panels, downloads;
    for (const TimelineSpan& span : report.timeline) {
        EXPECT_GE(span.start, 0.0);
        EXPECT_LE(span.start, span.end) << span.phase << " " << span.step;
        if (span.phase == "upload") uploads.push_back(span);
        if (span.phase == "panel") panels.push_back(span);
        if (span.phase == "download") downloads.push_back(span);
    }
    if (!beside) {
        EXPECT_EQ(report.timeline.size(), 1u);
        return;
    }
    ASSERT_GE(uploads.size(), 2u);
    ASSERT_EQ(panels.size(), uploads.size());
    ASSERT_GE(downloads.size(), 1u);
    for (size_t k = 0; k < uploads.size(); ++k) {
        EXPECT_EQ(uploads[k].step, static_cast<int>(k));
        EXPECT_EQ(panels[k].step, static_cast<int>(k));
        EXPECT_NE(uploads[k].lane.find(" copy"), std::string::npos) << uploads[k].lane;
        EXPECT_NE(panels[k].lane.find(" compute"), std::string::npos) << panels[k].lane;
        EXPECT_GE(panels[k].start, uploads[k].end - 1e-6) << "part " << k;
        if (k > 0) { EXPECT_GE(panels[k].start, panels[k - 1].end - 1e-6) << "part " << k; }
    }
    EXPECT_GE(downloads.back().end, panels.back().start);
    EXPECT_GE(downloads.front().start, panels.front().end - 1e-6);
    EXPECT_LE(downloads.back().end, report.seconds + 1e-3);
}

TEST_F(GpuHostOnePanel, FactorsPageableAndPinnedMatricesAsLapack) {
    struct Case {
        int m, n;
        bool pinned;
    };
    // Pageable blocks of 256 KiB and more go through the pinned bounce
    // buffers; 60 x 40 and 40 x 60 in one copy each way, 1000 x 1000 and
    // 700 x 700 in several chunks. From 2^20 floats on, with n <= m, the
    // copies overlap the factorization: the columns go up in parts, each
    // factored while the next arrives, and the rows go back in pieces as they
    // become final (2100 x 2100, 1536 x 1536 pinned and 2500 x 1200 pinned in
    // three parts, 3000 x 1100 in two; the tall ones with a tall last piece;
    // 1100 x 3000 is wide and moves whole). From 2^22 floats the leaves'
    // interchanges reach the columns away from them later, in passes
    // (2100 x 2100, and 3001 x 2999, whose recursion splits off ragged leaves).
    const Case cases[] = {{1000, 1000, false}, {1000, 1000, true},  {60, 40, false},
                          {40, 60, true},      {700, 700, false},   {2100, 2100, false},
                          {1536, 1536, true},  {3000, 1100, false}, {2500, 1200, true},
                          {1100, 3000, false}, {3001, 2999, false}};
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
        const bool beside = int64_t(c.m) * c.n >= gpu::kOverlappedCopyLeastFloats && c.n <= c.m;
        EXPECT_EQ(report.plan.find("copies beside the factorization") != std::string::npos, beside)
            << report.plan;
        expect_parts_timeline(report, beside);
    }
}

TEST_F(GpuHostOnePanel, CusolversPanelCopiesBeforeAndAfter) {
    const int n = 1200;
    const std::vector<float> a = make_matrix(n, n, n, MatrixKind::random, test_seed());
    std::vector<float> lu = a;
    std::vector<int> ipiv(static_cast<size_t>(n));
    Options options = one_device_panel(n);
    options.device_panel = DevicePanelMethod::cusolver;
    Report report;
    ASSERT_EQ(sgetrf(n, n, lu.data(), n, ipiv.data(), options, &report), 0);
    EXPECT_LT(factorization_residual(n, n, a.data(), n, lu.data(), n, ipiv.data()), kResidualBound);
    EXPECT_NE(report.plan.find("column-major copy"), std::string::npos) << report.plan;
    EXPECT_EQ(report.plan.find("copies beside"), std::string::npos) << report.plan;
}

// The parts of the overlapped call and the fold of its pivots: host code,
// run with or without a GPU.
TEST(OverlappedParts, ThirdsInWhole128sFromAMillionFloats) {
    EXPECT_TRUE(gpu::overlapped_parts(1000, 1000).empty());  // below 2^20 floats
    EXPECT_TRUE(gpu::overlapped_parts(65536, 16).empty());   // too narrow to split
    EXPECT_EQ(gpu::overlapped_parts(1024, 1024), std::vector<int64_t>{384});
    EXPECT_EQ(gpu::overlapped_parts(1600, 1600), (std::vector<int64_t>{256, 640}));
    EXPECT_EQ(gpu::overlapped_parts(2100, 2100), (std::vector<int64_t>{256, 768}));
    EXPECT_EQ(gpu::overlapped_parts(3000, 1100), std::vector<int64_t>{384});
    EXPECT_EQ(gpu::overlapped_parts(8192, 8192), (std::vector<int64_t>{384, 1024, 2816}));
    for (const int64_t n : {int64_t(1024), int64_t(3001), int64_t(4096), int64_t(32768)}) {
        const std::vector<int64_t> parts = gpu::overlapped_parts(n, n);
        ASSERT_FALSE(parts.empty()) << n;
        for (size_t k = 0; k < parts.size(); ++k) {
            EXPECT_EQ(parts[k] % 128, 0) << n;
            EXPECT_LT(parts[k], n) << n;
            if (k > 0) { EXPECT_GT(parts[k], parts[k - 1]) << n; }
        }
    }
}

TEST(FoldPivots, IsTheInterchangesAppliedInOrder) {
    const int rows = 10;
    const std::vector<int> ipiv = {3, 3, 10, 4, 7, 10};  // 1-based, LAPACK's
    std::vector<int> moved(rows);
    for (int i = 0; i < rows; ++i) moved[static_cast<size_t>(i)] = i;
    for (size_t k = 0; k < ipiv.size(); ++k) std::swap(moved[k], moved[static_cast<size_t>(ipiv[k] - 1)]);
    EXPECT_EQ(gpu::fold_pivots(ipiv.data(), static_cast<int64_t>(ipiv.size()), rows, "test"), moved);
    EXPECT_EQ(gpu::fold_pivots(ipiv.data(), 0, 3, "test"), (std::vector<int>{0, 1, 2}));
    // A pivot above its column's diagonal: a solve may be given it, no LU gives it.
    const std::vector<int> above = {2, 1};
    EXPECT_EQ(gpu::fold_pivots(above.data(), 2, 3, "test"), (std::vector<int>{0, 1, 2}));
    EXPECT_THROW(gpu::fold_pivots(above.data(), 2, 3, "test", true), Error);
    for (const int bad : {0, 11, -2}) {
        const std::vector<int> wrong = {2, bad};
        try {
            gpu::fold_pivots(wrong.data(), 2, rows, "test");
            ADD_FAILURE() << "pivot " << bad << " accepted";
        } catch (const Error& e) {
            EXPECT_EQ(e.code(), TANDEM_ERROR_INTERNAL);
            EXPECT_NE(std::string(e.what()).find("test: ipiv[1]"), std::string::npos) << e.what();
        }
    }
}

TEST_F(GpuHostOnePanel, ReportsAnExactlyZeroPivotAsLapack) {
    struct Case {
        int n, zero_column;
    };
    // 1600 x 1600 overlaps its copies in parts [0, 256), [256, 640) and
    // [640, 1600): column 101 lies in the first, 301 in the second and 1201
    // in the last. 2600 x 2600 also leaves its leaves' interchanges for later
    // passes; its column 2001 lies in the last part.
    for (const Case c : {Case{300, 120}, Case{1600, 100}, Case{1600, 300}, Case{1600, 1200},
                         Case{2600, 2000}}) {
        SCOPED_TRACE("n=" + std::to_string(c.n) + " zero column " + std::to_string(c.zero_column + 1));
        const int n = c.n, lda = n;
        std::vector<float> a = make_matrix(n, n, lda, MatrixKind::random, test_seed());
        for (int i = 0; i < n; ++i) a[static_cast<size_t>(i + int64_t(c.zero_column) * lda)] = 0.0f;
        std::vector<float> lu = a;
        std::vector<int> ipiv(static_cast<size_t>(n));
        const int info = sgetrf(n, n, lu.data(), lda, ipiv.data(), one_device_panel(n));
        EXPECT_EQ(info, lapack_getrf(n, n, a, lda).info);
        EXPECT_EQ(info, c.zero_column + 1);
        EXPECT_LT(factorization_residual(n, n, a.data(), lda, lu.data(), lda, ipiv.data()),
                  kResidualBound);
    }
}

TEST_F(GpuHostOnePanel, SolvesWithTheFactorsKeptOnTheGpu) {
    struct Case {
        int n, nrhs;
        bool pinned_b;
    };
    // 900: the copies, then the factorization; 1200: the copies beside it.
    for (const Case c : {Case{900, 1, false}, Case{900, 1, true}, Case{900, 20, false},
                         Case{900, 20, true}, Case{1200, 1, false}, Case{1200, 20, true}}) {
        const int n = c.n, lda = n + 2, ldb = n + 1;
        const uint64_t seed = test_seed();
        SCOPED_TRACE("n=" + std::to_string(n) + " nrhs=" + std::to_string(c.nrhs) +
                     (c.pinned_b ? " pinned B" : "") + " seed=" + std::to_string(seed));
        const std::vector<float> a = make_matrix(n, n, lda, MatrixKind::random, seed);
        const std::vector<float> b = make_matrix(n, c.nrhs, ldb, MatrixKind::random, seed + 1);
        std::vector<float> lu = a, pageable_b = b;
        PinnedCopy pinned(b);
        ASSERT_NE(pinned.data, nullptr);
        float* const x = c.pinned_b ? pinned.data : pageable_b.data();
        std::vector<int> ipiv(static_cast<size_t>(n));
        Report report;
        ASSERT_EQ(sgesv(n, c.nrhs, lu.data(), lda, ipiv.data(), x, ldb, one_device_panel(n),
                        &report),
                  0);
        EXPECT_EQ(report.backend, Backend::gpu);
        EXPECT_LT(solve_residual(n, c.nrhs, a.data(), lda, x, ldb, b.data(), ldb), kResidualBound);
        EXPECT_EQ(padding_changes(n, c.nrhs, ldb, x), 0);
        // The factors in A are the same as sgetrf's.
        EXPECT_LT(factorization_residual(n, n, a.data(), lda, lu.data(), lda, ipiv.data()),
                  kResidualBound);
    }
}

// A complete model for this GPU whose timed calls put the crossover near
// n = 1120 (sgetrs's at n = 256 with one right-hand side, 128 with 16 and 75
// with 256), whatever this machine would measure: LAPACK 1 ms up to n = 1000
// and 100 ms at 2000, the GPU 2 ms and 3 ms (log-log between them).
void write_model_with_crossover(const std::string& dir) {
    std::unique_ptr<gpu::CudaDevice> device = gpu::make_cuda_device(0);
    device->set_gemm_policy(GemmKernel::automatic, dir);
    device->set_panel_method(DevicePanelMethod::automatic);
    PerformanceModel m;
    m.fingerprint = detail::machine_fingerprint(*device, PanelMethod::recursive);
    for (int64_t rows : {1024, 16384})
        for (int width : {128, 512}) {
            m.cpu_panels.push_back({rows, width, 1e-2});
            m.device_panels.push_back({rows, width, 1e-3});
        }
    for (int64_t size : {2048, 16384})
        for (int width : {128, 512}) m.updates.push_back({size, width, 2.0 * size * size * width / 3e13});
    m.device_whole = {{128, 2e-4}, {8192, 4e-2}};
    m.cpu_calls = {{16, 1e-3}, {1000, 1e-3}, {2000, 1e-1}};
    m.device_calls = {{16, 2e-3}, {1000, 2e-3}, {2000, 3e-3}};
    // sgetrs's routes meet at n = 256: LAPACK 0.1 ms at 64 and 10 ms at 1024,
    // the GPU 1 ms at both.
    m.cpu_solves = {{64, 1e-4}, {1024, 1e-2}};
    m.device_solves = {{64, 1e-3}, {1024, 1e-3}};
    // With 16 they meet at n = 128: LAPACK 0.5 ms at 64 and 8 ms at 1024.
    m.cpu_solves_several = {{64, 5e-4}, {1024, 8e-3}};
    m.device_solves_several = {{64, 1e-3}, {1024, 1e-3}};
    // With 256 at n = 75: LAPACK 0.8 ms at 64 and 100 ms at 1024, the GPU 1 and 2 ms.
    m.cpu_solves_many = {{64, 8e-4}, {1024, 1e-1}};
    m.device_solves_many = {{64, 1e-3}, {1024, 2e-3}};
    m.transfer_bytes_per_second = 5e10;
    m.host_copy_bytes_per_second = 3e10;
    m.device_panel_interference = 0.5;
    std::string error;
    ASSERT_TRUE(detail::write_cache_file(detail::model_cache_path(dir, m.fingerprint),
                                         m.serialize(), error))
        << error;
}

TEST_F(GpuHostOnePanel, AutomaticBackendTakesTheCpuBelowTheMeasuredCrossover) {
    const std::string dir =
        (std::filesystem::temp_directory_path() / ("tandem-crossover-" + std::to_string(test_seed())))
            .string();
    release_resources();  // no model or crossover of this process's earlier calls
    ASSERT_NO_FATAL_FAILURE(write_model_with_crossover(dir));
    Options options;
    options.cache_dir = dir;
    struct Case {
        int n;
        Backend expected;
    };
    for (const Case c : {Case{16, Backend::cpu}, Case{900, Backend::cpu}, Case{1300, Backend::gpu},
                         Case{1500, Backend::gpu}}) {
        SCOPED_TRACE("n=" + std::to_string(c.n));
        const std::vector<float> a = make_matrix(c.n, c.n, c.n, MatrixKind::random, test_seed());
        const std::vector<float> b = make_matrix(c.n, 1, c.n, MatrixKind::random, test_seed());
        std::vector<float> lu = a, x = b;
        std::vector<int> ipiv(static_cast<size_t>(c.n));
        Report report;
        ASSERT_EQ(sgesv(c.n, 1, lu.data(), c.n, ipiv.data(), x.data(), c.n, options, &report), 0);
        EXPECT_EQ(report.backend, c.expected) << report.message;
        EXPECT_NE(report.message.find(c.expected == Backend::cpu ? "automatic: the CPU"
                                                                  : "automatic: the GPU"),
                  std::string::npos)
            << report.message;
        EXPECT_LT(solve_residual(c.n, 1, a.data(), c.n, x.data(), c.n, b.data(), c.n),
                  kResidualBound);
    }
    EXPECT_NE(describe_plan(16, 16, options).find("backend cpu"), std::string::npos);
    release_resources();  // later tests measure this machine's own model
    std::filesystem::remove_all(dir);
}

// sgetrs on factors in host memory: LAPACK below the measured solves'
// crossover (and below the smallest order timed, without a word), the GPU from
// it; one right-hand side by the one-column solves' crossover, 2-63 by that of
// 16, 64 and more by that of 256.
TEST_F(GpuHostOnePanel, AutomaticSolveTakesTheCpuBelowTheMeasuredCrossover) {
    const std::string dir = (std::filesystem::temp_directory_path() /
                             ("tandem-solve-crossover-" + std::to_string(test_seed())))
                                .string();
    release_resources();
    ASSERT_NO_FATAL_FAILURE(write_model_with_crossover(dir));
    Options options;
    options.cache_dir = dir;
    struct Case {
        int n, nrhs;
        Backend expected;
        const char* message;
        int crossover;  // the model's, up to the grid it is searched on
    };
    for (const Case c : {Case{40, 1, Backend::cpu, "", 0},
                         Case{40, 3, Backend::cpu, "", 0},
                         Case{200, 1, Backend::cpu, "automatic: the CPU, below n = ", 256},
                         Case{300, 1, Backend::gpu, "automatic: the GPU, from n = ", 256},
                         Case{100, 3, Backend::cpu, "automatic: the CPU, below n = ", 128},
                         Case{200, 3, Backend::gpu, "automatic: the GPU, from n = ", 128},
                         Case{200, 16, Backend::gpu, "automatic: the GPU, from n = ", 128},
                         Case{100, 40, Backend::cpu, "automatic: the CPU, below n = ", 128},
                         Case{70, 300, Backend::cpu, "automatic: the CPU, below n = ", 75},
                         Case{100, 300, Backend::gpu, "automatic: the GPU, from n = ", 75},
                         Case{100, 64, Backend::gpu, "automatic: the GPU, from n = ", 75}}) {
        SCOPED_TRACE("n=" + std::to_string(c.n) + " nrhs=" + std::to_string(c.nrhs));
        const std::vector<float> a = make_matrix(c.n, c.n, c.n, MatrixKind::random, test_seed());
        const std::vector<float> b = make_matrix(c.n, c.nrhs, c.n, MatrixKind::random, test_seed() + 1);
        const LapackFactors f = lapack_getrf(c.n, c.n, a, c.n);
        std::vector<float> x = b;
        Report report;
        ASSERT_EQ(sgetrs('N', c.n, c.nrhs, f.lu.data(), c.n, f.ipiv.data(), x.data(), c.n, options,
                         &report),
                  0);
        EXPECT_EQ(report.backend, c.expected) << report.message;
        if (*c.message != '\0') {
            EXPECT_EQ(report.message.rfind(c.message, 0), 0u) << report.message;
            const int64_t crossover = std::atoll(report.message.c_str() + std::strlen(c.message));
            EXPECT_GE(crossover, c.crossover - 6) << report.message;
            EXPECT_LE(crossover, c.crossover + 4) << report.message;
            EXPECT_EQ(report.message.find("16 right-hand sides") != std::string::npos,
                      c.nrhs > 1 && c.nrhs < 64)
                << report.message;
            EXPECT_EQ(report.message.find("256 right-hand sides") != std::string::npos, c.nrhs >= 64)
                << report.message;
        } else {
            EXPECT_EQ(report.message.find("automatic: the"), std::string::npos) << report.message;
        }
        EXPECT_LT(solve_residual(c.n, c.nrhs, a.data(), c.n, x.data(), c.n, b.data(), c.n),
                  kResidualBound);
    }
    release_resources();
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tandem::test
