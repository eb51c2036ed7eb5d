// copy_floats_streaming: every length and both alignments of source and
// destination (the non-temporal stores need 16-byte alignment, so the head and
// tail take another path), and nothing written outside the destination; the
// team a host copy takes.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "scheduler/streaming_copy.hpp"
#include "tests/test_support.hpp"

namespace tandem::test {
namespace {

TEST(StreamingCopy, CopiesEveryLengthAtEveryAlignment) {
    const uint64_t seed = test_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    constexpr float kPoison = -12345.0f;
    for (int count : {0, 1, 3, 4, 15, 16, 17, 31, 33, 64, 100, 1000, 4099})
        for (int to_offset = 0; to_offset < 4; ++to_offset)
            for (int from_offset = 0; from_offset < 4; ++from_offset) {
                SCOPED_TRACE("count=" + std::to_string(count) + " offsets " +
                             std::to_string(to_offset) + "," + std::to_string(from_offset));
                std::vector<float> from(count + 8), to(count + 8, kPoison);
                for (float& x : from) x = value(rng);
                copy_floats_streaming(to.data() + to_offset, from.data() + from_offset, count);
                for (int i = 0; i < to_offset; ++i) EXPECT_EQ(to[i], kPoison);
                EXPECT_EQ(std::memcmp(to.data() + to_offset, from.data() + from_offset,
                                      sizeof(float) * count),
                          0);
                for (int i = to_offset + count; i < count + 8; ++i) EXPECT_EQ(to[i], kPoison);
            }
}

TEST(StreamingCopy, HostCopiesTakeTheThreadsTeamUpToTheCap) {
    const int saved = omp_get_max_threads();
    for (int threads : {1, 3, kMostHostCopyThreads, kMostHostCopyThreads + 1, 4 * kMostHostCopyThreads}) {
        omp_set_num_threads(threads);
        EXPECT_EQ(host_copy_threads(), std::min(threads, kMostHostCopyThreads)) << threads;
    }
    omp_set_num_threads(saved);
    // The cap is per calling thread: a thread with a smaller share keeps it.
    int on_thread = 0;
#pragma omp parallel num_threads(2)
    {
#pragma omp single
        {
            omp_set_num_threads(2);
            on_thread = host_copy_threads();
        }
    }
    EXPECT_EQ(on_thread, 2);
}

}  // namespace
}  // namespace tandem::test
