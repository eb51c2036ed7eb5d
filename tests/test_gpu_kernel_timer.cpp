// KernelTimer (gpu/kernel_timer.hpp): what it times and how it recovers when
// the timed work waits for the held stream. Results only, never durations.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cmath>

#include "scheduler/gpu_backend.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/kernel_timer.hpp"

namespace tandem::test {
namespace {

class KernelTimerTest : public ::testing::Test {
protected:
    void SetUp() override {
        if (gpu::device_count() == 0) GTEST_SKIP() << "no usable CUDA device: " << gpu::unavailable_reason();
        ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
        ASSERT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
    }
    void TearDown() override {
        if (stream_) (void)cudaStreamDestroy(stream_);
    }
    cudaStream_t stream_ = nullptr;
};

// The work runs once untimed and then `repeats` times, each run's result lands,
// and the stream is never left held.
TEST_F(KernelTimerTest, RunsTheWorkRepeatsPlusOneTimesAndReleasesTheStream) {
    gpu::DeviceBuffer buffer(64 << 20, "timed copy");
    char* const base = reinterpret_cast<char*>(buffer.floats());
    const size_t half = buffer.bytes() / 2;
    ASSERT_EQ(cudaMemsetAsync(base, 7, half, stream_), cudaSuccess);
    int runs = 0;
    gpu::KernelTimer timer(stream_);
    for (bool cold : {false, true}) {
        runs = 0;
        ASSERT_EQ(cudaMemsetAsync(base + half, 0, half, stream_), cudaSuccess);
        const double seconds = timer.median_seconds(
            [&] {
                ++runs;
                ASSERT_EQ(cudaMemcpyAsync(base + half, base, half, cudaMemcpyDeviceToDevice, stream_), cudaSuccess);
            },
            5, cold);
        EXPECT_EQ(runs, 6);
        EXPECT_TRUE(std::isfinite(seconds));
        EXPECT_GT(seconds, 0.0);
        EXPECT_EQ(cudaStreamQuery(stream_), cudaSuccess);  // nothing left waiting
        unsigned char last = 0;
        ASSERT_EQ(cudaMemcpy(&last, base + buffer.bytes() - 1, 1, cudaMemcpyDeviceToHost), cudaSuccess);
        EXPECT_EQ(last, 7);
    }
    EXPECT_TRUE(timer.holds());
    const double empty = timer.empty_kernel_seconds(3);
    EXPECT_TRUE(std::isfinite(empty));
    EXPECT_GT(empty, 0.0);
}

// Work that synchronizes its stream cannot finish while the stream is held:
// the hold times out (one second), the run is timed again without it, and so
// are later runs.
TEST_F(KernelTimerTest, WorkThatSynchronizesEndsTheHoldInsteadOfHanging) {
    gpu::DeviceBuffer buffer(1 << 20, "timed memset");
    gpu::KernelTimer timer(stream_);
    int runs = 0;
    const double seconds = timer.median_seconds(
        [&] {
            ++runs;
            ASSERT_EQ(cudaMemsetAsync(buffer.floats(), 0, buffer.bytes(), stream_), cudaSuccess);
            ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
        },
        1, false);
    EXPECT_FALSE(timer.holds());
    EXPECT_TRUE(std::isfinite(seconds));
    EXPECT_EQ(runs, 3);  // warm-up, the held run that timed out, its untimed-hold repeat
    EXPECT_EQ(cudaStreamQuery(stream_), cudaSuccess);
}

}  // namespace
}  // namespace tandem::test
