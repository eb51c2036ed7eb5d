// The several-device collector alone (scheduler/factor_collector.hpp): pieces
// of the devices' storage go down in chunks through each device's ring of
// slots and are placed in their columns of the caller's array. Oracle: the
// matrix the devices were given. Chunks of a few floats send each piece round
// the rings many times; a team of one places what it sends itself. Host
// devices run everywhere, CUDA devices where there are enough of them.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "scheduler/blocking_plan.hpp"
#include "scheduler/factor_collector.hpp"
#include "scheduler/gpu_backend.hpp"
#include "scheduler/step_context.hpp"
#include "src/backend.hpp"
#include "tandem/tandem.hpp"

namespace tandem::test {
namespace {

// `count` devices of `backend`: host devices made for the test, or the kept
// CUDA devices under their lock.
detail::BackendChoice devices_of(Backend backend, int count) {
    detail::BackendChoice choice;
    choice.backend = backend;
    choice.num_devices = count;
    return choice;
}

// OpenMP's thread count on this thread for one scope (the collector's team is
// half of it).
class OmpThreads {
public:
    explicit OmpThreads(int threads) : saved_(omp_get_max_threads()) { omp_set_num_threads(threads); }
    ~OmpThreads() { omp_set_num_threads(saved_); }
    OmpThreads(const OmpThreads&) = delete;
    OmpThreads& operator=(const OmpThreads&) = delete;

private:
    int saved_;
};

// Backend, devices, the OpenMP threads of the calling thread, and the floats a chunk holds.
using Case = std::tuple<Backend, int, int, int64_t>;

class Collector : public ::testing::TestWithParam<Case> {
protected:
    void SetUp() override {
        if (std::get<0>(GetParam()) == Backend::gpu && gpu::device_count() < std::get<1>(GetParam()))
            GTEST_SKIP() << "fewer than " << std::get<1>(GetParam()) << " usable GPUs";
    }
};

TEST_P(Collector, PlacesEveryPieceInItsColumns) {
    const auto [backend, count, threads, chunk_floats] = GetParam();
    const int64_t m = 37, n = 53;
    const BlockingPlan plan(m, n, 5, count);  // blocks of 5 columns, the last of 3, dealt cyclically
    const detail::DeviceLease lease(devices_of(backend, count));
    std::vector<Device*> devices = lease.devices();

    // A(i, j) = 1 + i + m j, exact in floats; each device holds its blocks.
    std::vector<float> a(static_cast<size_t>(m * n));
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i + 1);
    for (int d = 0; d < count; ++d)
        devices[d]->allocate(m, plan.local_cols(d), plan.workspace_width(), plan.last_panel_width());
    for (int64_t b = 0; b < plan.blocks(); ++b) {
        const int d = plan.owner(b);
        devices[d]->upload(Queue::copy, a.data() + plan.block_begin(b) * m, m, 0,
                               plan.local_begin(d, plan.block_begin(b)), m, plan.block_width(b));
    }
    for (Device* device : devices) device->synchronize();

    std::vector<float> out(a.size(), -1.0f);
    std::vector<DeviceSpan> spans;
    StepContext ctx{devices, plan, spans};
    int pieces = 0;
    {
        const OmpThreads scope(threads);
        FactorCollector collector(ctx, out.data(), m, chunk_floats);
        // Bands of 7 rows (the last of 2); each device's columns in two pieces.
        for (int64_t r0 = 0; r0 < m; r0 += 7) {
            const int64_t rows = std::min<int64_t>(7, m - r0);
            for (int d = 0; d < count; ++d) {
                const int64_t cols = plan.local_cols(d), split = cols / 3;
                const Event ready = devices[d]->record(Queue::compute);
                for (const auto& [c0, width] : {std::pair<int64_t, int64_t>{0, split}, {split, cols - split}}) {
                    if (width == 0) continue;
                    collector.add({d, ready, r0, rows, c0, width, static_cast<int>(r0 / 7)});
                    ++pieces;
                }
            }
        }
        collector.finish(ctx.spans, ctx.host_spans);
        EXPECT_TRUE(collector.wrote_output());
    }
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i)
            ASSERT_EQ(out[static_cast<size_t>(i + j * m)], a[static_cast<size_t>(i + j * m)])
                << "A(" << i << ", " << j << ")";
    // One span a piece on its device's copy queue, one on the collector's lane.
    EXPECT_EQ(static_cast<int>(spans.size()), pieces);
    EXPECT_EQ(static_cast<int>(ctx.host_spans.size()), pieces);
}

TEST_P(Collector, FinishesWithNothingAdded) {
    const auto [backend, count, threads, chunk_floats] = GetParam();
    const BlockingPlan plan(20, 20, 4, count);
    const detail::DeviceLease lease(devices_of(backend, count));
    std::vector<Device*> devices = lease.devices();
    for (int d = 0; d < count; ++d)
        devices[d]->allocate(20, plan.local_cols(d), plan.workspace_width(), plan.last_panel_width());
    std::vector<float> out(400, -1.0f);
    std::vector<DeviceSpan> spans;
    StepContext ctx{devices, plan, spans};
    const OmpThreads scope(threads);
    FactorCollector collector(ctx, out.data(), 20, chunk_floats);
    collector.finish(ctx.spans, ctx.host_spans);
    EXPECT_FALSE(collector.wrote_output());
    EXPECT_TRUE(spans.empty());
    for (float x : out) ASSERT_EQ(x, -1.0f);
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
    const auto [backend, count, threads, chunk_floats] = info.param;
    return std::string(backend == Backend::gpu ? "gpu" : "host") + "_d" + std::to_string(count) +
           "_t" + std::to_string(threads) + "_chunk" + std::to_string(chunk_floats);
}

// Chunks of 5 floats hold one column of a 7-row piece (less than a column),
// of 20 two, of 4 MiB whole pieces; 2 threads make a team of one, 8 of four.
INSTANTIATE_TEST_SUITE_P(
    Devices, Collector,
    ::testing::Combine(::testing::Values(Backend::host, Backend::gpu), ::testing::Values(1, 2, 3),
                       ::testing::Values(2, 8),
                       ::testing::Values(int64_t(5), int64_t(20), FactorCollector::kChunkFloats)),
    case_name);

}  // namespace
}  // namespace tandem::test
