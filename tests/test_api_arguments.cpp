// Bad arguments of the public C++ entry points: each must return -(position of
// the first bad argument), counted as in src/checks.cpp (Options counts too),
// and leave a, b and ipiv untouched byte for byte.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "api_backends.hpp"
#include "tandem/tandem.hpp"
#include "test_support.hpp"

namespace tandem::test {
namespace {

// Arrays large enough for every call below (n <= 8, ld <= 8), filled with
// random data and, for ipiv, pivots that are valid for n = 6.
struct Buffers {
    std::vector<float> a, b;
    std::vector<int> ipiv{3, 2, 6, 4, 6, 6, 8, 8};
    std::vector<float> a0, b0;
    std::vector<int> ipiv0;
    explicit Buffers(uint64_t seed)
        : a(make_matrix(8, 8, 8, MatrixKind::random, seed)),
          b(make_matrix(8, 8, 8, MatrixKind::random, seed + 1)),
          a0(a),
          b0(b),
          ipiv0(ipiv) {}
    bool untouched() const {
        return first_bit_difference(a, a0) == -1 && first_bit_difference(b, b0) == -1 &&
               ipiv == ipiv0;
    }
};

using Call = std::function<int(Buffers&)>;

void expect_rejected(const std::string& what, int expected, const Call& call) {
    const uint64_t seed = test_seed();
    SCOPED_TRACE(what + " seed=" + std::to_string(seed));
    Buffers buffers(seed);
    EXPECT_EQ(call(buffers), expected);
    EXPECT_TRUE(buffers.untouched());
}

// Each bad Options field, as the options argument at `position`.
void expect_bad_options_rejected(const Options& good, int position,
                                 const std::function<int(Buffers&, const Options&)>& call) {
    const auto with = [&](const char* what, auto change) {
        Options o = good;
        change(o);
        expect_rejected(what, -position, [&](Buffers& buf) { return call(buf, o); });
    };
    with("layout 7", [](Options& o) { o.layout = static_cast<Layout>(7); });
    with("backend 9", [](Options& o) { o.backend = static_cast<Backend>(9); });
    with("panel 5", [](Options& o) { o.panel = static_cast<PanelMethod>(5); });
    with("placement 5", [](Options& o) { o.placement = static_cast<PanelPlacement>(5); });
    with("gemm 5", [](Options& o) { o.gemm = static_cast<GemmKernel>(5); });
    with("device_panel 5", [](Options& o) { o.device_panel = static_cast<DevicePanelMethod>(5); });
    with("update_precision 5", [](Options& o) { o.update_precision = static_cast<UpdatePrecision>(5); });
    with("num_devices -1", [](Options& o) { o.num_devices = -1; });
    with("block_size -1", [](Options& o) { o.block_size = -1; });
    with("max_block_size -1", [](Options& o) { o.max_block_size = -1; });
    with("lookahead -1", [](Options& o) { o.lookahead = -1; });
    with("lookahead 2", [](Options& o) { o.lookahead = 2; });
    with("inverse_threshold -1", [](Options& o) { o.inverse_threshold = -1.0f; });
    with("inverse_threshold NaN", [](Options& o) { o.inverse_threshold = std::nanf(""); });
    with("inverse_threshold inf",
         [](Options& o) { o.inverse_threshold = std::numeric_limits<float>::infinity(); });
}

class ApiArguments : public BackendTest<BackendCase> {};

TEST_P(ApiArguments, SgetrfRejectsEachBadArgument) {
    const Options col = GetParam().options();
    const Options row = GetParam().options(Layout::row_major);
    expect_rejected("m < 0", -1,
                    [&](Buffers& x) { return sgetrf(-1, 6, x.a.data(), 8, x.ipiv.data(), col); });
    expect_rejected("m, n < 0", -1,
                    [&](Buffers& x) { return sgetrf(-1, -1, x.a.data(), 8, x.ipiv.data(), col); });
    expect_rejected("n < 0", -2,
                    [&](Buffers& x) { return sgetrf(6, -1, x.a.data(), 8, x.ipiv.data(), col); });
    expect_rejected("a null", -3,
                    [&](Buffers& x) { return sgetrf(6, 6, nullptr, 8, x.ipiv.data(), col); });
    expect_rejected("lda < m", -4,
                    [&](Buffers& x) { return sgetrf(6, 6, x.a.data(), 5, x.ipiv.data(), col); });
    expect_rejected("lda 0, m 0", -4,
                    [&](Buffers& x) { return sgetrf(0, 6, x.a.data(), 0, x.ipiv.data(), col); });
    expect_rejected("lda < m, tall", -4,
                    [&](Buffers& x) { return sgetrf(7, 3, x.a.data(), 6, x.ipiv.data(), col); });
    expect_rejected("row-major lda < n", -4,
                    [&](Buffers& x) { return sgetrf(3, 7, x.a.data(), 6, x.ipiv.data(), row); });
    expect_rejected("ipiv null", -5,
                    [&](Buffers& x) { return sgetrf(6, 6, x.a.data(), 8, nullptr, col); });
    Options bad = col;
    bad.block_size = -1;
    expect_rejected("lda and options bad", -4,
                    [&](Buffers& x) { return sgetrf(6, 6, x.a.data(), 5, x.ipiv.data(), bad); });
    expect_bad_options_rejected(col, 6, [](Buffers& x, const Options& o) {
        return sgetrf(6, 6, x.a.data(), 8, x.ipiv.data(), o);
    });
}

TEST_P(ApiArguments, SgetrsRejectsEachBadArgument) {
    const Options col = GetParam().options();
    const Options row = GetParam().options(Layout::row_major);
    for (char trans : {'X', '\0', 'A', 'h'})
        expect_rejected(std::string("trans ") + std::to_string(int(trans)), -1, [&](Buffers& x) {
            return sgetrs(trans, 6, 2, x.a.data(), 8, x.ipiv.data(), x.b.data(), 8, col);
        });
    expect_rejected("n < 0", -2, [&](Buffers& x) {
        return sgetrs('N', -1, 2, x.a.data(), 8, x.ipiv.data(), x.b.data(), 8, col);
    });
    expect_rejected("nrhs < 0", -3, [&](Buffers& x) {
        return sgetrs('N', 6, -1, x.a.data(), 8, x.ipiv.data(), x.b.data(), 8, col);
    });
    expect_rejected("a null", -4, [&](Buffers& x) {
        return sgetrs('T', 6, 2, nullptr, 8, x.ipiv.data(), x.b.data(), 8, col);
    });
    expect_rejected("lda < n", -5, [&](Buffers& x) {
        return sgetrs('N', 6, 2, x.a.data(), 5, x.ipiv.data(), x.b.data(), 8, col);
    });
    expect_rejected("ipiv null", -6, [&](Buffers& x) {
        return sgetrs('N', 6, 2, x.a.data(), 8, nullptr, x.b.data(), 8, col);
    });
    // Pivots outside 1..n would make the row interchanges read or write outside A and B.
    for (int k : {0, 5})
        for (int value : {0, -1, 7, std::numeric_limits<int>::min()})
            expect_rejected(
                "ipiv[" + std::to_string(k) + "] = " + std::to_string(value), -6, [&](Buffers& x) {
                    x.ipiv[k] = x.ipiv0[k] = value;
                    return sgetrs('N', 6, 2, x.a.data(), 8, x.ipiv.data(), x.b.data(), 8, col);
                });
    expect_rejected("b null", -7, [&](Buffers& x) {
        return sgetrs('N', 6, 2, x.a.data(), 8, x.ipiv.data(), nullptr, 8, col);
    });
    expect_rejected("ldb < n", -8, [&](Buffers& x) {
        return sgetrs('N', 6, 2, x.a.data(), 8, x.ipiv.data(), x.b.data(), 5, col);
    });
    expect_rejected("row-major ldb < nrhs", -8, [&](Buffers& x) {
        return sgetrs('N', 6, 3, x.a.data(), 8, x.ipiv.data(), x.b.data(), 2, row);
    });
    expect_bad_options_rejected(col, 9, [](Buffers& x, const Options& o) {
        return sgetrs('N', 6, 2, x.a.data(), 8, x.ipiv.data(), x.b.data(), 8, o);
    });
}

TEST_P(ApiArguments, SgesvRejectsEachBadArgument) {
    const Options col = GetParam().options();
    const Options row = GetParam().options(Layout::row_major);
    expect_rejected("n < 0", -1, [&](Buffers& x) {
        return sgesv(-1, 2, x.a.data(), 8, x.ipiv.data(), x.b.data(), 8, col);
    });
    expect_rejected("nrhs < 0", -2, [&](Buffers& x) {
        return sgesv(6, -1, x.a.data(), 8, x.ipiv.data(), x.b.data(), 8, col);
    });
    expect_rejected("a null", -3, [&](Buffers& x) {
        return sgesv(6, 2, nullptr, 8, x.ipiv.data(), x.b.data(), 8, col);
    });
    expect_rejected("lda < n", -4, [&](Buffers& x) {
        return sgesv(6, 2, x.a.data(), 5, x.ipiv.data(), x.b.data(), 8, col);
    });
    expect_rejected("row-major lda < n", -4, [&](Buffers& x) {
        return sgesv(6, 2, x.a.data(), 5, x.ipiv.data(), x.b.data(), 8, row);
    });
    expect_rejected("ipiv null", -5, [&](Buffers& x) {
        return sgesv(6, 2, x.a.data(), 8, nullptr, x.b.data(), 8, col);
    });
    expect_rejected("b null", -6, [&](Buffers& x) {
        return sgesv(6, 2, x.a.data(), 8, x.ipiv.data(), nullptr, 8, col);
    });
    expect_rejected("ldb < n", -7, [&](Buffers& x) {
        return sgesv(6, 2, x.a.data(), 8, x.ipiv.data(), x.b.data(), 5, col);
    });
    expect_rejected("row-major ldb < nrhs", -7, [&](Buffers& x) {
        return sgesv(6, 3, x.a.data(), 8, x.ipiv.data(), x.b.data(), 2, row);
    });
    expect_bad_options_rejected(col, 8, [](Buffers& x, const Options& o) {
        return sgesv(6, 2, x.a.data(), 8, x.ipiv.data(), x.b.data(), 8, o);
    });
}

INSTANTIATE_TEST_SUITE_P(Api, ApiArguments,
                         testing::Values(BackendCase{Backend::cpu, 0, 0},
                                         BackendCase{Backend::host, 1, 0},
                                         BackendCase{Backend::host, 2, 7},
                                         BackendCase{Backend::gpu, 1, 0}),
                         [](const auto& p) { return p.param.name(); });

}  // namespace
}  // namespace tandem::test
