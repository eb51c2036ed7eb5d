// Where a call runs: Backend::gpu without a GPU is a clear run-time error that
// leaves the arrays untouched, and TANDEM_BACKEND (auto, cpu, gpu, host, host:N)
// steers Backend::automatic only, as src/backend.cpp documents.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "tandem/tandem.hpp"
#include "test_support.hpp"

namespace tandem::test {
namespace {

// Sets TANDEM_BACKEND (nullptr: unsets it) for one scope.
class ScopedBackendVariable : public ScopedEnvironmentVariable {
public:
    explicit ScopedBackendVariable(const char* value) : ScopedEnvironmentVariable("TANDEM_BACKEND", value) {}
};

// Runs `call`, expecting tandem::Error(TANDEM_ERROR_BACKEND_UNAVAILABLE) whose
// message mentions `needle`.
void expect_unavailable(const std::function<void()>& call, const std::string& needle) {
    try {
        call();
        ADD_FAILURE() << "no tandem::Error thrown";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), TANDEM_ERROR_BACKEND_UNAVAILABLE);
        EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
}

TEST(ApiBackendChoice, GpuWithoutGpuThrowsAndLeavesArraysUntouched) {
    if (gpu_available()) GTEST_SKIP() << "a GPU is present";
    ScopedBackendVariable unset(nullptr);
    EXPECT_EQ(gpu_count(), 0);
    Options gpu;
    gpu.backend = Backend::gpu;
    const uint64_t seed = test_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    const int n = 16;
    std::vector<float> a = make_matrix(n, n, n, MatrixKind::random, seed);
    std::vector<float> b = make_matrix(n, 2, n, MatrixKind::random, seed + 1);
    std::vector<int> ipiv(n, 1);
    const std::vector<float> a0 = a, b0 = b;
    const std::vector<int> ipiv0 = ipiv;
    // The message must say what is missing: a CUDA device or the CUDA backend.
    expect_unavailable([&] { resolve_backend(gpu); }, "CUDA");
    expect_unavailable([&] { sgetrf(n, n, a.data(), n, ipiv.data(), gpu); }, "CUDA");
    expect_unavailable([&] { sgetrs('N', n, 2, a.data(), n, ipiv.data(), b.data(), n, gpu); },
                       "CUDA");
    expect_unavailable([&] { sgesv(n, 2, a.data(), n, ipiv.data(), b.data(), n, gpu); }, "CUDA");
    EXPECT_EQ(first_bit_difference(a, a0), -1);
    EXPECT_EQ(first_bit_difference(b, b0), -1);
    EXPECT_EQ(ipiv, ipiv0);
    // And it names the reason: no driver at all (not CUDA's "driver version is
    // insufficient"), or a build without the CUDA backend.
#ifdef TANDEM_HAVE_CUDA
    const bool driver_present = std::ifstream("/proc/driver/nvidia/version").good();
    if (!driver_present)
        expect_unavailable([&] { resolve_backend(gpu); }, "no NVIDIA driver is installed");
#else
    expect_unavailable([&] { resolve_backend(gpu); }, "built without the CUDA backend");
#endif
}

TEST(ApiBackendChoice, EnvironmentSteersAutomaticOnly) {
    const Options automatic;
    Options cpu;
    cpu.backend = Backend::cpu;
    {
        ScopedBackendVariable unset(nullptr);
        EXPECT_EQ(resolve_backend(automatic), gpu_available() ? Backend::gpu : Backend::cpu);
    }
    {
        ScopedBackendVariable env("cpu");
        EXPECT_EQ(resolve_backend(automatic), Backend::cpu);
    }
    {
        ScopedBackendVariable env("host");
        EXPECT_EQ(resolve_backend(automatic), Backend::host);
        EXPECT_EQ(resolve_backend(cpu), Backend::cpu);  // an explicit choice wins
    }
    {
        ScopedBackendVariable env("host:2");
        EXPECT_EQ(resolve_backend(automatic), Backend::host);
        // And a call made under it runs there and factors correctly.
        const uint64_t seed = test_seed();
        SCOPED_TRACE("seed=" + std::to_string(seed));
        const int n = 40;
        const std::vector<float> a = make_matrix(n, n, n, MatrixKind::random, seed);
        std::vector<float> lu = a;
        std::vector<int> ipiv(n, -7);
        Report report;
        EXPECT_EQ(sgetrf(n, n, lu.data(), n, ipiv.data(), automatic, &report), 0);
        EXPECT_EQ(report.backend, Backend::host);
        EXPECT_LT(factorization_residual(n, n, a.data(), n, lu.data(), n, ipiv.data()),
                  kResidualBound);
    }
    // Any case, spaces anywhere, and auto (no override) as tandem-bench spells it.
    for (const char* spelled : {"CPU", " cpu", "Cpu ", " c p u "}) {
        SCOPED_TRACE(spelled);
        ScopedBackendVariable env(spelled);
        EXPECT_EQ(resolve_backend(automatic), Backend::cpu);
    }
    for (const char* spelled : {"host: 2", " HOST:2 "}) {
        SCOPED_TRACE(spelled);
        ScopedBackendVariable env(spelled);
        EXPECT_EQ(resolve_backend(automatic), Backend::host);
    }
    for (const char* spelled : {"auto", " AUTO ", "automatic", "   "}) {
        SCOPED_TRACE(spelled);
        ScopedBackendVariable env(spelled);
        EXPECT_EQ(resolve_backend(automatic), gpu_available() ? Backend::gpu : Backend::cpu);
    }
    for (const char* junk : {"junk", "host:0", "host:x", "cpux", "host:65"}) {
        SCOPED_TRACE(junk);
        ScopedBackendVariable env(junk);
        expect_unavailable([&] { resolve_backend(automatic); }, "TANDEM_BACKEND");
        EXPECT_EQ(resolve_backend(cpu), Backend::cpu);
    }
    if (!gpu_available()) {
        ScopedBackendVariable env("gpu");
        expect_unavailable([&] { resolve_backend(automatic); }, "CUDA");
    }
}

// The suite's fixture (tests/CMakeLists.txt: machine_model_calibrated): the
// automatic plan for a mid-size matrix, which on a GPU calibrates and caches
// this machine's model before the other tests start.
TEST(MachineModel, CalibratedOnceForTheSuite) {
    // The default model, and the one of the tf32x3 updates that sgesv_refined
    // factors with (a model is measured per update precision).
    for (const UpdatePrecision precision : {UpdatePrecision::fp32, UpdatePrecision::tf32x3}) {
        Options options;
        options.update_precision = precision;
        std::string plan;
        EXPECT_NO_THROW(plan = describe_plan(4096, 4096, options));
        EXPECT_NE(plan.find("backend "), std::string::npos) << plan;
    }
}

// A call that measures the machine (no model kept in the process or cached)
// says so in its one-line message; the next call, which finds the model, does not.
TEST(MachineModel, ACallThatCalibratesSaysSo) {
    Options options;
    if (resolve_backend(options) != Backend::gpu) GTEST_SKIP() << "only GPU calls use the model";
    namespace fs = std::filesystem;
    const fs::path dir =
        fs::temp_directory_path() / ("tandem-calibration-note-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    options.cache_dir = dir.string();
    release_resources();  // also forgets the models kept in this process
    const int n = 1024;
    const std::vector<float> a = make_matrix(n, n, n, MatrixKind::random, test_seed());
    std::vector<int> ipiv(n);
    Report first, second;
    std::vector<float> lu = a;
    ASSERT_EQ(sgetrf(n, n, lu.data(), n, ipiv.data(), options, &first), 0);
    EXPECT_NE(first.message.find("performance model calibrated"), std::string::npos) << first.message;
    lu = a;
    ASSERT_EQ(sgetrf(n, n, lu.data(), n, ipiv.data(), options, &second), 0);
    EXPECT_EQ(second.message.find("calibrated"), std::string::npos) << second.message;
    release_resources();
    fs::remove_all(dir);
}

}  // namespace
}  // namespace tandem::test
