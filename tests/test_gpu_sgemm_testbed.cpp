// The implementation of tests/sgemm_testbed.hpp (no tests of its own; named
// test_gpu_* so that the GPU test glob compiles it).
#include "tests/sgemm_testbed.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "gpu/device_buffer.hpp"
#include "gpu/sgemm_dispatch.hpp"
#include "tests/test_support.hpp"

namespace tandem::test {
namespace {

constexpr float kSentinel = 12345.0f;  // padding and guard zones
constexpr int64_t kGuard = 64;         // floats before and after each matrix
constexpr double kU = 1.0 / (1 << 24);

int64_t leading(int64_t width, SgemmLayout layout) {
    const int64_t w = std::max<int64_t>(1, width), up4 = (w + 3) / 4 * 4;
    switch (layout) {
        case SgemmLayout::aligned: return up4;
        case SgemmLayout::aligned_padded: return up4 + 4;
        case SgemmLayout::tight: return w;
        default: return w % 4 == 3 ? w + 2 : w + 1;  // never a multiple of 4
    }
}

// A rows x cols row-major matrix (leading dimension ld) `offset` floats into
// a buffer guarded by kGuard sentinels on both sides. Like BLAS, the storage
// ends with the last row's last element.
struct GuardedMatrix {
    int64_t rows, cols, ld, offset;
    std::vector<float> host;
    GuardedMatrix(int64_t r, int64_t c, int64_t ld_, int64_t off)
        : rows(r), cols(c), ld(ld_), offset(off),
          host(size_t(2 * kGuard + off + (r > 0 ? (r - 1) * ld_ + c : 0)), kSentinel) {}
    float& at(int64_t i, int64_t j) { return host[size_t(kGuard + offset + i * ld + j)]; }
    float at(int64_t i, int64_t j) const { return host[size_t(kGuard + offset + i * ld + j)]; }
    bool inside(size_t index) const {
        const int64_t e = int64_t(index) - kGuard - offset;
        return e >= 0 && e / ld < rows && e % ld < cols;
    }
};

void expect_cuda(cudaError_t status, const char* what) {
    ASSERT_EQ(status, cudaSuccess) << what << ": " << cudaGetErrorString(status);
}

}  // namespace

std::string describe(const SgemmCase& c) {
    static const char* const layouts[] = {"aligned", "aligned_padded", "tight", "odd"};
    return "m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) +
           " alpha=" + std::to_string(c.alpha) + " beta=" + std::to_string(c.beta) + " layout=" +
           layouts[int(c.layout)] + (c.nan_in_ab ? " NaN in A, B" : "");
}

void SgemmGpuTest::SetUp() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        (void)cudaGetLastError();
        GTEST_SKIP() << "no CUDA device";
    }
    seed_ = test_seed();
    rng_.seed(seed_);
    expect_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    ASSERT_EQ(cublasCreate(&handle_), CUBLAS_STATUS_SUCCESS);
}

void SgemmGpuTest::TearDown() {
    if (handle_) cublasDestroy(handle_);
    if (stream_) cudaStreamDestroy(stream_);
}

bool SgemmGpuTest::check(const std::string& variant, const SgemmCase& c) {
    return !run_and_check(c, variant, nullptr).empty();
}

std::string SgemmGpuTest::check_dispatch(const gpu::SgemmTuningTable& table, const SgemmCase& c) {
    return run_and_check(c, "", &table);
}

std::string SgemmGpuTest::run_and_check(const SgemmCase& c, const std::string& variant,
                                        const gpu::SgemmTuningTable* table) {
    const std::string what = (table ? std::string("dispatch") : variant) + " " + describe(c) +
                             " seed=" + std::to_string(seed_);
    const int64_t misalign = c.layout == SgemmLayout::odd ? 1 : 0;
    GuardedMatrix a(c.m, c.k, leading(c.k, c.layout), misalign);
    GuardedMatrix b(c.k, c.n, leading(c.n, c.layout), misalign);
    GuardedMatrix c0(c.m, c.n, leading(c.n, c.layout), misalign);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (int64_t i = 0; i < c.m; ++i)
        for (int64_t p = 0; p < c.k; ++p) a.at(i, p) = c.nan_in_ab ? nan : uniform(rng_);
    for (int64_t p = 0; p < c.k; ++p)
        for (int64_t j = 0; j < c.n; ++j) b.at(p, j) = c.nan_in_ab ? nan : uniform(rng_);
    for (int64_t i = 0; i < c.m; ++i)
        for (int64_t j = 0; j < c.n; ++j) c0.at(i, j) = c.beta == 0.0f ? nan : uniform(rng_);

    gpu::DeviceBuffer a_dev(a.host.size() * 4, "A"), b_dev(b.host.size() * 4, "B"),
        c_dev(c0.host.size() * 4, "C");
    auto upload = [](const gpu::DeviceBuffer& dev, const GuardedMatrix& m) {
        expect_cuda(cudaMemcpy(dev.floats(), m.host.data(), m.host.size() * 4, cudaMemcpyHostToDevice),
                    "upload");
    };
    upload(a_dev, a), upload(b_dev, b), upload(c_dev, c0);
    // cudaMemcpy from pageable memory may return before its DMA has landed, and
    // the product runs on a non-blocking stream that does not wait for it.
    expect_cuda(cudaDeviceSynchronize(), "the uploads");
    gpu::SgemmArgs args;
    args.m = c.m, args.n = c.n, args.k = c.k, args.alpha = c.alpha, args.beta = c.beta;
    args.a = a_dev.floats() + kGuard + a.offset, args.lda = a.ld;
    args.b = b_dev.floats() + kGuard + b.offset, args.ldb = b.ld;
    args.c = c_dev.floats() + kGuard + c0.offset, args.ldc = c0.ld;

    std::string ran;
    try {
        if (table) {
            ran = gpu::sgemm_rm(*table, args, where());
        } else {
            if (!gpu::sgemm_variant_can_run(variant, args, where())) return "";
            gpu::run_sgemm_variant(variant, args, where());
            ran = variant;
        }
    } catch (const std::exception& e) {
        ADD_FAILURE() << what << ": threw " << e.what();
        return "";
    }
    expect_cuda(cudaStreamSynchronize(stream_), "the product");
    std::vector<float> got(c0.host.size());
    expect_cuda(cudaMemcpy(got.data(), c_dev.floats(), got.size() * 4, cudaMemcpyDeviceToHost), "download");

    int failures = 0;
    for (size_t e = 0; e < got.size() && failures < 5; ++e)
        if (!c0.inside(e) && std::memcmp(&got[e], &c0.host[e], 4) != 0) {
            ADD_FAILURE() << what << ": float " << e << " of C's buffer outside C changed to " << got[e];
            ++failures;
        }
    std::vector<double> dot(size_t(c.n)), magnitude(size_t(c.n));
    for (int64_t i = 0; i < c.m && failures < 5; ++i) {
        std::fill(dot.begin(), dot.end(), 0.0);
        std::fill(magnitude.begin(), magnitude.end(), 0.0);
        for (int64_t p = 0; p < c.k && c.alpha != 0.0f; ++p) {
            const double aip = a.at(i, p);
            for (int64_t j = 0; j < c.n; ++j) {
                dot[size_t(j)] += aip * b.at(p, j);
                magnitude[size_t(j)] += std::fabs(aip * b.at(p, j));
            }
        }
        for (int64_t j = 0; j < c.n && failures < 5; ++j) {
            const double old = c.beta == 0.0f ? 0.0 : double(c0.at(i, j));
            const double expected = double(c.alpha) * dot[size_t(j)] + double(c.beta) * old;
            const double bound = 2.0 * double(c.k + 3) * kU *
                                 (std::fabs(c.alpha) * magnitude[size_t(j)] + std::fabs(c.beta * old));
            const float value = got[size_t(kGuard + c0.offset + i * c0.ld + j)];
            if (!(std::fabs(value - expected) <= bound)) {
                ADD_FAILURE() << what << " (ran " << ran << "): C(" << i << "," << j << ") = " << value
                              << ", expected " << expected << " within " << bound;
                ++failures;
            }
        }
    }
    return ran;
}

}  // namespace tandem::test
