// Every SGEMM variant (the sgemm_rm menu, tall_skinny, cublas) and the
// dispatcher against the double-precision CPU reference of sgemm_testbed.hpp:
// shapes on every tile edge, leading dimensions wider than the matrices,
// misaligned pointers, and the special values of alpha and beta.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gpu/device_buffer.hpp"
#include "gpu/sgemm_cublaslt.hpp"
#include "gpu/sgemm_dispatch.hpp"
#include "gpu/sgemm_variants.hpp"
#include "gpu/tall_skinny.hpp"
#include "tandem/tandem.hpp"
#include "tests/sgemm_testbed.hpp"

namespace tandem::test {
namespace {

using gpu::SgemmVariant;

const int64_t kEdgeDims[] = {0, 1, 7, 63, 64, 65, 1000};
struct Scalars {
    float alpha, beta;
};
// (1, 0) and (-1, 0) run on C poisoned with NaN; (0, x) must not read A and B.
const Scalars kScalars[] = {{-1, 1}, {1, 0}, {0, 0.5f}, {0.75f, -1.5f}, {1, 1}, {-1, 0}, {0, 0}};
const SgemmLayout kLayouts[] = {SgemmLayout::aligned, SgemmLayout::tight, SgemmLayout::aligned_padded,
                                SgemmLayout::aligned, SgemmLayout::odd};

// Every (m, n, k) of kEdgeDims with at most one 1000 (324 cases); the scalars
// and layouts cycle with coprime periods (7, 5), so every pairing occurs.
std::vector<SgemmCase> edge_cases() {
    std::vector<SgemmCase> cases;
    for (int64_t m : kEdgeDims)
        for (int64_t n : kEdgeDims)
            for (int64_t k : kEdgeDims) {
                if ((m == 1000) + (n == 1000) + (k == 1000) > 1) continue;
                SgemmCase c;
                c.m = m, c.n = n, c.k = k;
                const size_t index = cases.size();
                c.alpha = kScalars[index % 7].alpha, c.beta = kScalars[index % 7].beta;
                c.layout = kLayouts[index % 5];
                cases.push_back(c);
            }
    return cases;
}

const SgemmVariant& variant_named(const std::string& name) {
    const SgemmVariant* variant = gpu::find_sgemm_variant(name);
    if (!variant) throw std::runtime_error("no variant " + name);
    return *variant;
}

// Which cases a variant must accept, from the layout rules (not from its own predicate).
bool should_run(const SgemmVariant& variant, const SgemmCase& c) {
    if (variant.name == gpu::kTallSkinnyVariant) return c.n <= gpu::kTallSkinnyMaxN;
    if (variant.shape.block_m == 0 || !variant.shape.vector_loads) return true;  // cublas, scalar
    return c.layout == SgemmLayout::aligned || c.layout == SgemmLayout::aligned_padded ||
           (c.layout == SgemmLayout::tight && c.n > 0 && c.n % 4 == 0);
}

class SgemmVariantTest : public SgemmGpuTest, public testing::WithParamInterface<std::string> {};

TEST_P(SgemmVariantTest, EdgeShapesMatchTheReference) {
    const SgemmVariant& variant = variant_named(GetParam());
    int ran = 0;
    for (const SgemmCase& c : edge_cases()) {
        const bool runs = check(variant.name, c);
        EXPECT_EQ(runs, should_run(variant, c)) << variant.name << " " << describe(c);
        ran += runs;
        if (HasFailure()) break;  // one failing case tells enough
    }
    EXPECT_GT(ran, 100);
}

// Several tiles in both directions, more k steps than pipeline stages, and
// more tile rows than one rasterization group (kGroupTileRows = 8).
TEST_P(SgemmVariantTest, ManyTilesAndLongK) {
    const SgemmVariant& variant = variant_named(GetParam());
    const SgemmCase cases[] = {
        {259, 261, 300, -1.0f, 1.0f, SgemmLayout::aligned, false},
        {1100, 70, 20, 1.0f, 0.0f, SgemmLayout::aligned_padded, false},
        {2100, 33, 45, 0.5f, 2.0f, SgemmLayout::odd, false},
        {5000, 16, 100, -1.0f, 1.0f, SgemmLayout::tight, false},
        {3000, 64, 129, 1.0f, -1.0f, SgemmLayout::aligned, false},
    };
    for (const SgemmCase& c : cases) {
        EXPECT_EQ(check(variant.name, c), should_run(variant, c)) << variant.name << " " << describe(c);
        if (HasFailure()) break;
    }
}

INSTANTIATE_TEST_SUITE_P(Menu, SgemmVariantTest, testing::ValuesIn(gpu::sgemm_variant_names()),
                         [](const testing::TestParamInfo<std::string>& info) { return info.param; });

// BLAS semantics: with alpha == 0 the kernels must not read A or B (here NaN).
TEST_F(SgemmGpuTest, AlphaZeroReadsNeitherANorB) {
    for (const SgemmVariant& variant : gpu::sgemm_variants()) {
        if (variant.name == gpu::kCublasVariant) continue;  // not ours to test
        for (float beta : {0.0f, 0.5f}) {
            const SgemmCase c{65, 63, 7, 0.0f, beta, SgemmLayout::aligned, true};
            EXPECT_TRUE(check(variant.name, c)) << variant.name;
        }
    }
}

TEST_F(SgemmGpuTest, DispatcherFollowsTheTable) {
    const SgemmCase c{300, 200, 64, -1.0f, 1.0f, SgemmLayout::aligned, false};
    const gpu::SgemmBucket bucket = gpu::sgemm_bucket(c.m, c.n, c.k);
    gpu::SgemmTuningTable table = gpu::SgemmTuningTable::sm90_defaults();
    for (const std::string& name : gpu::sgemm_variant_names()) {
        if (name == gpu::kTallSkinnyVariant) continue;  // n = 200 is too wide for it
        table.set_variant(bucket, name);
        EXPECT_EQ(check_dispatch(table, c), name);
    }
}

TEST_F(SgemmGpuTest, DispatcherFallsBackWhereTheChoiceCannotRun) {
    gpu::SgemmTuningTable table = gpu::SgemmTuningTable::sm90_defaults();
    // Misaligned B and C: only the scalar configuration runs them.
    const SgemmCase odd{300, 200, 64, -1.0f, 1.0f, SgemmLayout::odd, false};
    table.set_variant(gpu::sgemm_bucket(odd.m, odd.n, odd.k), "sgemm_rm_256x128x8_16x8_s3");
    EXPECT_EQ(check_dispatch(table, odd), gpu::kAnyAlignmentVariant);
    // tall_skinny named for a shape with n > 64: the default variant runs it.
    const SgemmCase wide_n{1000, 100, 64, -1.0f, 1.0f, SgemmLayout::aligned, false};
    table.set_variant(gpu::sgemm_bucket(wide_n.m, wide_n.n, wide_n.k), gpu::kTallSkinnyVariant);
    EXPECT_EQ(check_dispatch(table, wide_n), gpu::kDefaultVariant);
    // cublas named but no handle given: the default variant runs it.
    table.set_variant(gpu::sgemm_bucket(wide_n.m, wide_n.n, wide_n.k), gpu::kCublasVariant);
    with_cublas_handle_ = false;
    EXPECT_EQ(check_dispatch(table, wide_n), gpu::kDefaultVariant);
}

// The cuBLASLt variant takes aligned products with its own configuration on
// Hopper (the GPUs its configuration was chosen on) and hands the rest to
// cublasSgemm (whose results the menu tests above check).
TEST_F(SgemmGpuTest, CublasLtVariantTakesAlignedProductsOnHopperAndSurvivesARelease) {
    int device = 0;
    cudaDeviceProp properties{};
    ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
    ASSERT_EQ(cudaGetDeviceProperties(&properties, device), cudaSuccess);
    gpu::DeviceBuffer a(4 * 520 * 520, "A"), b(4 * 520 * 520, "B"), c(4 * 520 * 520, "C");
    gpu::SgemmArgs args;
    args.m = args.n = args.k = 512, args.alpha = -1.0f, args.beta = 1.0f;
    args.a = a.floats(), args.b = b.floats(), args.c = c.floats();
    args.lda = args.ldb = args.ldc = 512;
    if (properties.major == 9) { EXPECT_TRUE(gpu::cublaslt_takes(args)); }
    gpu::SgemmArgs misaligned = args;
    misaligned.c = c.floats() + 1;
    EXPECT_FALSE(gpu::cublaslt_takes(misaligned));
    gpu::SgemmArgs odd_leading = args;
    odd_leading.lda = 513;
    EXPECT_FALSE(gpu::cublaslt_takes(odd_leading));
    // Its handles, released (tandem::release_resources), are made again by the next product.
    const SgemmCase product{300, 260, 64, -1.0f, 1.0f, SgemmLayout::aligned, false};
    EXPECT_TRUE(check(gpu::kCublasLtVariant, product));
    gpu::release_cublaslt_handles();
    EXPECT_TRUE(check(gpu::kCublasLtVariant, product));
    if (properties.major == 9) { EXPECT_TRUE(gpu::cublaslt_takes(args)); }
}

TEST_F(SgemmGpuTest, BadArgumentsThrowBeforeAnyLaunch) {
    gpu::SgemmArgs args;
    args.m = 4, args.n = 4, args.k = 4, args.lda = 3, args.ldb = 4, args.ldc = 4;  // lda < k
    EXPECT_THROW(gpu::run_sgemm_variant(gpu::kDefaultVariant, args, where()), Error);
    EXPECT_THROW(gpu::run_sgemm_variant("no_such_variant", args, where()), Error);
}

}  // namespace
}  // namespace tandem::test
