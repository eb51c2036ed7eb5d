// NaN in the matrix, as LAPACK's sgetrf handles it: the factorization runs to
// the end, info is LAPACK's, the NaN spreads into the factors, and no error is
// raised, on the CPU backend and on the emulated devices with panels on the
// CPU and on the devices, one device and two. And a solve with no right-hand
// side returns at once, as LAPACK's does, whatever ipiv holds.
#include <gtest/gtest.h>
#include <lapacke.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tandem/tandem.hpp"
#include "test_support.hpp"

namespace tandem::test {
namespace {

struct Route {
    const char* name;
    Backend backend;
    PanelPlacement placement;
    int devices;
};

TEST(ApiSpecialValues, NanIsFactoredAsLapackDoes) {
    const int n = 200;
    std::vector<float> a = make_matrix(n, n, n, MatrixKind::random, test_seed());
    a[149 + 149 * n] = std::numeric_limits<float>::quiet_NaN();
    // LAPACK's own answer (the _work form: LAPACKE_sgetrf refuses NaN input).
    std::vector<float> reference = a;
    std::vector<int> reference_ipiv(n);
    const int expected_info =
        LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, n, n, reference.data(), n, reference_ipiv.data());
    for (const Route& r : {Route{"cpu", Backend::cpu, PanelPlacement::automatic, 0},
                           Route{"host, CPU panels", Backend::host, PanelPlacement::cpu, 1},
                           Route{"host, device panels", Backend::host, PanelPlacement::device, 1},
                           Route{"2 hosts, device panels", Backend::host, PanelPlacement::device, 2},
                           Route{"2 hosts, CPU panels", Backend::host, PanelPlacement::cpu, 2},
                           Route{"GPU, its own plan", Backend::gpu, PanelPlacement::automatic, 1},
                           Route{"GPU, device panels", Backend::gpu, PanelPlacement::device, 1},
                           Route{"GPU, CPU panels", Backend::gpu, PanelPlacement::cpu, 1}}) {
        SCOPED_TRACE(r.name);
        if (r.backend == Backend::gpu && !gpu_available()) continue;  // no GPU here
        Options o;
        o.backend = r.backend;
        o.placement = r.placement;
        o.num_devices = r.devices;
        if (r.placement != PanelPlacement::automatic) o.block_size = 32;
        std::vector<float> lu = a;
        std::vector<int> ipiv(n, -7);
        int info = -100;
        EXPECT_NO_THROW(info = sgetrf(n, n, lu.data(), n, ipiv.data(), o));
        // A GPU's panels may take the NaN's row as a pivot (LAPACK's isamax
        // passes over NaN), after which the rest of the matrix is NaN and info
        // may name a later column; the CPU's routes give LAPACK's info.
        if (r.backend == Backend::gpu)
            EXPECT_GE(info, 0);
        else
            EXPECT_EQ(info, expected_info);
        int nans = 0;
        for (float x : lu) nans += std::isnan(x);
        EXPECT_GT(nans, 0) << "the NaN must reach the factors";
        for (int p : ipiv) EXPECT_TRUE(p >= 1 && p <= n) << p;
    }
}

TEST(ApiSpecialValues, NoRightHandSideReturnsAtOnce) {
    const int n = 5;
    std::vector<float> a(n * n, 1.0f), b(n, 2.0f);
    const std::vector<int> garbage(n, 1000);  // not pivots of a 5 x 5 matrix
    Options cpu;
    cpu.backend = Backend::cpu;
    EXPECT_EQ(sgetrs('N', n, 0, a.data(), n, garbage.data(), b.data(), n, cpu), 0);
    EXPECT_EQ(sgetrs('N', n, 0, a.data(), n, nullptr, b.data(), n, cpu), 0);
    EXPECT_EQ(sgetrs('N', n, 1, a.data(), n, garbage.data(), b.data(), n, cpu), -6);
}

TEST(ApiSpecialValues, DeviceCountIsBounded) {
    const int n = 8;
    std::vector<float> a(n * n, 1.0f);
    std::vector<int> ipiv(n);
    Options many;
    many.backend = Backend::host;
    many.num_devices = 65;
    Report report;
    EXPECT_EQ(sgetrf(n, n, a.data(), n, ipiv.data(), many, &report), -6);
    EXPECT_NE(report.message.find("num_devices"), std::string::npos) << report.message;
}

}  // namespace
}  // namespace tandem::test
