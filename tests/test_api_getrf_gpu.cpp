// tandem::sgetrf_gpu (the matrix already in device memory) through the public
// API, on the emulated host devices, whose "device memory" is host memory: the
// scheduler's resident path (eager transfers that reach the caller's matrix
// itself, the first CPU panel taken from the device) runs here without a GPU.
// Oracles: sgetrf with the same options on the same data (bit for bit: the
// same plan and the same device operations), LAPACK's INFO and the residual.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "lapack_oracle.hpp"
#include "tandem/tandem.h"
#include "tandem/tandem.hpp"
#include "test_support.hpp"

namespace tandem::test {
namespace {

Options host_options(int block_size, PanelPlacement placement) {
    Options o;
    o.backend = Backend::host;
    o.num_devices = 1;
    o.block_size = block_size;
    o.placement = placement;
    o.stream_matrix = false;  // what sgetrf_gpu does: so sgetrf's run is the oracle bit for bit
    return o;
}

struct Case {
    int m, n, block_size;
    PanelPlacement placement;
};

TEST(ApiGetrfGpu, HostDevicesMatchSgetrfBitForBit) {
    const Case cases[] = {
        {1, 1, 0, PanelPlacement::automatic},     {17, 17, 4, PanelPlacement::cpu},
        {100, 100, 7, PanelPlacement::cpu},       {100, 100, 7, PanelPlacement::device},
        {130, 64, 16, PanelPlacement::cpu},       {64, 130, 16, PanelPlacement::device},
        {257, 257, 0, PanelPlacement::automatic}, {65, 2, 1, PanelPlacement::cpu},
        {100, 100, 100, PanelPlacement::device},  // one step: the whole matrix in one device panel
        {120, 80, 80, PanelPlacement::device},
    };
    for (const Case& c : cases) {
        const uint64_t seed = test_seed();
        SCOPED_TRACE("m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) +
                     " nb=" + std::to_string(c.block_size) + " seed=" + std::to_string(seed));
        const int lda = c.m + 2;
        const std::vector<float> a = make_matrix(c.m, c.n, lda, MatrixKind::random, seed);
        const Options o = host_options(c.block_size, c.placement);
        const size_t k = static_cast<size_t>(std::min(c.m, c.n));

        std::vector<float> resident = a, host = a;
        std::vector<int> ipiv_resident(k, -7), ipiv_host(k, -7);
        Report report;
        const int info =
            sgetrf_gpu(c.m, c.n, resident.data(), lda, ipiv_resident.data(), o, &report);
        const int info_host = sgetrf(c.m, c.n, host.data(), lda, ipiv_host.data(), o);
        EXPECT_EQ(info, 0);
        EXPECT_EQ(info_host, 0);
        EXPECT_EQ(ipiv_resident, ipiv_host);
        EXPECT_EQ(first_bit_difference(resident, host), -1);
        EXPECT_EQ(padding_changes(c.m, c.n, lda, resident.data()), 0);
        EXPECT_LT(factorization_residual(c.m, c.n, a.data(), lda, resident.data(), lda,
                                         ipiv_resident.data()),
                  kResidualBound);
        EXPECT_EQ(report.backend, Backend::host);
        EXPECT_EQ(report.info, 0);
        EXPECT_GT(report.steps, 0);
    }
}

TEST(ApiGetrfGpu, SolvesWithTheFactorsAndSgesvGpuAgrees) {
    const int n = 90, nrhs = 3, lda = n + 1, ldb = n + 2;
    const uint64_t seed = test_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    const std::vector<float> a = make_matrix(n, n, lda, MatrixKind::random, seed);
    const std::vector<float> b = make_matrix(n, nrhs, ldb, MatrixKind::random, seed + 1);
    const Options o = host_options(16, PanelPlacement::cpu);
    std::vector<float> lu = a;
    std::vector<int> ipiv(n);
    ASSERT_EQ(sgetrf_gpu(n, n, lu.data(), lda, ipiv.data(), o), 0);
    for (char trans : {'N', 'T', 'c'}) {
        SCOPED_TRACE(std::string("trans ") + trans);
        std::vector<float> x = b;
        Report report;
        EXPECT_EQ(
            sgetrs_gpu(trans, n, nrhs, lu.data(), lda, ipiv.data(), x.data(), ldb, o, &report), 0);
        const double residual =
            trans == 'N'
                ? solve_residual(n, nrhs, a.data(), lda, x.data(), ldb, b.data(), ldb)
                : solve_residual_trans(n, nrhs, a.data(), lda, x.data(), ldb, b.data(), ldb);
        EXPECT_LT(residual, kResidualBound);
        EXPECT_EQ(report.backend, Backend::host);
        EXPECT_EQ(padding_changes(n, nrhs, ldb, x.data()), 0);
    }
    // sgesv_gpu: the same factors and solution as the two calls.
    std::vector<float> x = b;
    ASSERT_EQ(sgetrs_gpu('N', n, nrhs, lu.data(), lda, ipiv.data(), x.data(), ldb, o), 0);
    std::vector<float> lu2 = a, x2 = b;
    std::vector<int> ipiv2(n);
    EXPECT_EQ(sgesv_gpu(n, nrhs, lu2.data(), lda, ipiv2.data(), x2.data(), ldb, o), 0);
    EXPECT_EQ(ipiv2, ipiv);
    EXPECT_EQ(first_bit_difference(lu2, lu), -1);
    EXPECT_EQ(first_bit_difference(x2, x), -1);
}

TEST(ApiGetrfGpu, SolveArgumentsAndASingularSgesvGpu) {
    const int n = 6, lda = n, ldb = n;
    std::vector<float> a = make_matrix(n, n, lda, MatrixKind::random, test_seed());
    std::vector<float> b(n, 1.0f);
    std::vector<int> ipiv = {1, 2, 3, 4, 5, 6};
    const Options o = host_options(0, PanelPlacement::automatic);
    EXPECT_EQ(sgetrs_gpu('X', n, 1, a.data(), lda, ipiv.data(), b.data(), ldb, o), -1);
    EXPECT_EQ(sgetrs_gpu('N', n, 1, a.data(), lda, ipiv.data(), b.data(), n - 1, o), -8);
    ipiv[2] = 9;
    EXPECT_EQ(sgetrs_gpu('N', n, 1, a.data(), lda, ipiv.data(), b.data(), ldb, o), -6);
    ipiv[2] = 3;
    Options row_major = o;
    row_major.layout = Layout::row_major;
    EXPECT_EQ(sgetrs_gpu('N', n, 1, a.data(), lda, ipiv.data(), b.data(), ldb, row_major), -9);
    EXPECT_EQ(sgesv_gpu(n, 1, a.data(), lda, ipiv.data(), b.data(), ldb, row_major), -8);
    EXPECT_EQ(sgesv_gpu(n, 1, a.data(), n - 1, ipiv.data(), b.data(), ldb, o), -4);
    EXPECT_EQ(std::vector<float>(n, 1.0f), b);
    // Singular: the factors and info as LAPACK's, B untouched.
    for (int i = 0; i < n; ++i) a[static_cast<size_t>(i + 2 * lda)] = 0.0f;
    const LapackFactors expected = lapack_getrf(n, n, a, lda);
    EXPECT_EQ(sgesv_gpu(n, 1, a.data(), lda, ipiv.data(), b.data(), ldb, o), expected.info);
    EXPECT_GT(expected.info, 0);
    EXPECT_EQ(std::vector<float>(n, 1.0f), b);
}

TEST(ApiGetrfGpu, SingularMatrixReportsLapacksInfo) {
    const int n = 60, lda = n;
    std::vector<float> a = make_matrix(n, n, lda, MatrixKind::random, test_seed());
    for (int i = 0; i < n; ++i) a[static_cast<size_t>(i + 23 * lda)] = 0.0f;  // column 24 zero
    const LapackFactors expected = lapack_getrf(n, n, a, lda);
    std::vector<float> lu = a;
    std::vector<int> ipiv(n);
    EXPECT_EQ(sgetrf_gpu(n, n, lu.data(), lda, ipiv.data(), host_options(8, PanelPlacement::cpu)),
              expected.info);
    EXPECT_GT(expected.info, 0);
}

TEST(ApiGetrfGpu, BadArgumentsGiveLapackInfoAndLeaveTheMatrixAlone) {
    const int n = 8;
    const std::vector<float> a = make_matrix(n, n, n, MatrixKind::random, test_seed());
    std::vector<float> work = a;
    std::vector<int> ipiv(n, -7);
    const Options o = host_options(0, PanelPlacement::automatic);
    Report report;
    EXPECT_EQ(sgetrf_gpu(-1, n, work.data(), n, ipiv.data(), o, &report), -1);
    EXPECT_NE(report.message.find("sgetrf_gpu"), std::string::npos) << report.message;
    EXPECT_EQ(sgetrf_gpu(n, -1, work.data(), n, ipiv.data(), o), -2);
    EXPECT_EQ(sgetrf_gpu(n, n, nullptr, n, ipiv.data(), o), -3);
    EXPECT_EQ(sgetrf_gpu(n, n, work.data(), n - 1, ipiv.data(), o), -4);
    EXPECT_EQ(sgetrf_gpu(n, n, work.data(), n, nullptr, o), -5);
    Options row_major = o;
    row_major.layout = Layout::row_major;
    EXPECT_EQ(sgetrf_gpu(n, n, work.data(), n, ipiv.data(), row_major, &report), -6);
    EXPECT_NE(report.message.find("col_major"), std::string::npos) << report.message;
    Options two = o;
    two.num_devices = 2;
    EXPECT_EQ(sgetrf_gpu(n, n, work.data(), n, ipiv.data(), two), -6);
    Options bad_lookahead = o;
    bad_lookahead.lookahead = 2;
    EXPECT_EQ(sgetrf_gpu(n, n, work.data(), n, ipiv.data(), bad_lookahead), -6);
    EXPECT_EQ(first_bit_difference(work, a), -1);
    EXPECT_EQ(ipiv, std::vector<int>(n, -7));
}

TEST(ApiGetrfGpu, EmptyMatrixNeedsNoMemory) {
    int ipiv = -7;
    const Options o = host_options(0, PanelPlacement::automatic);
    EXPECT_EQ(sgetrf_gpu(0, 5, nullptr, 1, &ipiv, o), 0);
    EXPECT_EQ(sgetrf_gpu(5, 0, nullptr, 5, nullptr, o), 0);
    EXPECT_EQ(ipiv, -7);
}

TEST(ApiGetrfGpu, BackendCpuCannotReachGpuMemory) {
    const int n = 8;
    const std::vector<float> a = make_matrix(n, n, n, MatrixKind::random, test_seed());
    std::vector<float> work = a;
    std::vector<int> ipiv(n, -7);
    Options o;
    o.backend = Backend::cpu;
    try {
        sgetrf_gpu(n, n, work.data(), n, ipiv.data(), o);
        ADD_FAILURE() << "expected tandem::Error";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), TANDEM_ERROR_BACKEND_UNAVAILABLE);
        EXPECT_NE(std::string(e.what()).find("sgetrf_gpu"), std::string::npos) << e.what();
    }
    EXPECT_EQ(first_bit_difference(work, a), -1);
}

TEST(ApiGetrfGpu, HostMemoryUnderBackendGpuIsArgumentThree) {
    if (!gpu_available()) GTEST_SKIP() << "no GPU: backend gpu cannot be chosen";
    const int n = 8;
    const std::vector<float> a = make_matrix(n, n, n, MatrixKind::random, test_seed());
    std::vector<float> work = a;
    std::vector<int> ipiv(n, -7);
    Options o;
    o.backend = Backend::gpu;
    Report report;
    EXPECT_EQ(sgetrf_gpu(n, n, work.data(), n, ipiv.data(), o, &report), -3);
    EXPECT_NE(report.message.find("not in GPU memory"), std::string::npos) << report.message;
    EXPECT_EQ(first_bit_difference(work, a), -1);
}

TEST(CAbiGetrfGpu, ArgumentNumbersAndRunTimeErrors) {
    const int n = 8;
    std::vector<float> a = make_matrix(n, n, n, MatrixKind::random, test_seed());
    std::vector<int> ipiv(n);
    EXPECT_EQ(tandem_sgetrf_gpu(-1, n, a.data(), n, ipiv.data()), -1);
    EXPECT_EQ(tandem_sgetrf_gpu(n, n, a.data(), n - 1, ipiv.data()), -4);
    EXPECT_NE(std::string(tandem_last_error()).find("argument 4"), std::string::npos);
    // Host memory: no GPU to run on, or (with one) not GPU memory.
    const int status = tandem_sgetrf_gpu(n, n, a.data(), n, ipiv.data());
    if (gpu_available())
        EXPECT_EQ(status, -3);
    else
        EXPECT_EQ(status, TANDEM_ERROR_BACKEND_UNAVAILABLE);
    EXPECT_NE(std::string(tandem_last_error()), "");
    std::vector<float> b(n, 1.0f);
    for (int i = 0; i < n; ++i) ipiv[static_cast<size_t>(i)] = i + 1;
    EXPECT_EQ(tandem_sgetrs_gpu('N', n, 1, a.data(), n, ipiv.data(), b.data(), 0), -8);
    EXPECT_EQ(tandem_sgesv_gpu(n, 1, a.data(), n, ipiv.data(), b.data(), 0), -7);
}

}  // namespace
}  // namespace tandem::test
