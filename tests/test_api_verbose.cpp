// TANDEM_VERBOSE: one line a call on stderr, naming the routine, its sizes,
// info, the backend and why, the time and the rate; nothing when unset or 0;
// a bad value ignored with a warning.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "tandem/tandem.hpp"
#include "test_support.hpp"

namespace tandem::test {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

// Runs a good sgesv and one with a bad lda on the CPU backend; returns stderr.
std::string two_calls() {
    const int n = 30;
    std::vector<float> a = make_matrix(n, n, n, MatrixKind::diagonally_dominant, test_seed());
    std::vector<float> b(n, 1.0f);
    std::vector<int> ipiv(n);
    Options cpu;
    cpu.backend = Backend::cpu;
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(sgesv(n, 1, a.data(), n, ipiv.data(), b.data(), n, cpu), 0);
    EXPECT_EQ(sgetrf(n, n, a.data(), n - 1, ipiv.data(), cpu), -4);
    return ::testing::internal::GetCapturedStderr();
}

TEST(ApiVerbose, OneLinePerCallWhenAsked) {
    ScopedEnvironmentVariable on("TANDEM_VERBOSE", "1");
    const std::vector<std::string> lines = lines_of(two_calls());
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0].rfind("tandem: sgesv m=30 n=30 nrhs=1 info=0 backend=cpu ", 0), 0u) << lines[0];
    EXPECT_NE(lines[0].find(" ms "), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("GFLOP/s"), std::string::npos) << lines[0];
    EXPECT_EQ(lines[1].rfind("tandem: sgetrf m=30 n=30 info=-4 ", 0), 0u) << lines[1];
    EXPECT_NE(lines[1].find("argument 4"), std::string::npos) << lines[1];
}

TEST(ApiVerbose, SilentWhenUnsetOrZeroAndABadValueWarnsOnce) {
    {
        ScopedEnvironmentVariable off("TANDEM_VERBOSE", nullptr);
        EXPECT_EQ(two_calls(), "");
    }
    {
        ScopedEnvironmentVariable off("TANDEM_VERBOSE", "0");
        EXPECT_EQ(two_calls(), "");
    }
    ScopedEnvironmentVariable bad("TANDEM_VERBOSE", "yes");
    const std::string first = two_calls();
    const std::string second = two_calls();
    EXPECT_EQ(first + second, "tandem: TANDEM_VERBOSE='yes' is not 0 or 1; ignored\n");
}

}  // namespace
}  // namespace tandem::test
