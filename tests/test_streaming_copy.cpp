// copy_floats_streaming: every length and both alignments of source and
// destination (the non-temporal stores need 16-byte alignment, so the head and
// tail take another path), and nothing written outside the destination.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace tandem::test
