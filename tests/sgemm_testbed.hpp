// The testbed of the SGEMM tests (test_gpu_sgemm*.cpp; implemented in
// test_gpu_sgemm_testbed.cpp, which the GPU test glob compiles): runs one variant on one
// case with fresh random data and checks it against a double-precision CPU
// reference, elementwise within 2 (k + 3) u (|alpha| |A||B| + |beta| |C|)
// (u = 2^-24; k roundings in the dot product, three in the update). Padding and
// guard zones around every matrix hold a sentinel that must survive the run
// (stray writes) and that would spoil the result if it were read into it
// (stray reads); C is poisoned with NaN where beta == 0.
#ifndef TANDEM_TESTS_SGEMM_TESTBED_HPP
#define TANDEM_TESTS_SGEMM_TESTBED_HPP

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

#include "gpu/sgemm_args.hpp"
#include "gpu/sgemm_tuning_table.hpp"

namespace tandem::test {

// How leading dimensions and pointers of A, B and C are laid out in one case.
//   aligned:        ld = width rounded up to 4, 16-byte aligned pointers;
//   aligned_padded: ld = that + 4;
//   tight:          ld = max(1, width) (aligned only if width % 4 == 0);
//   odd:            ld % 4 != 0 and pointers one float past 16-byte alignment.
enum class SgemmLayout { aligned, aligned_padded, tight, odd };

struct SgemmCase {
    int64_t m = 0, n = 0, k = 0;
    float alpha = 1.0f, beta = 0.0f;
    SgemmLayout layout = SgemmLayout::aligned;
    bool nan_in_ab = false;  // with alpha == 0: A and B hold NaN, which must not be read
};

std::string describe(const SgemmCase& c);

// Skips the test without a CUDA device; owns a stream and a cuBLAS handle.
class SgemmGpuTest : public ::testing::Test {
protected:
    void SetUp() override;
    void TearDown() override;

    // Runs `variant` on case c and checks it (gtest failures name the case and
    // the seed). Returns false, checking nothing, when the variant cannot run c.
    bool check(const std::string& variant, const SgemmCase& c);
    // The same through the dispatcher with `table`; returns the variant that ran.
    std::string check_dispatch(const gpu::SgemmTuningTable& table, const SgemmCase& c);

    // The cuBLAS handle is left out when with_cublas_handle_ is false.
    gpu::SgemmStream where() const { return {stream_, with_cublas_handle_ ? handle_ : nullptr}; }

    uint64_t seed_ = 0;
    std::mt19937_64 rng_;
    cudaStream_t stream_ = nullptr;
    cublasHandle_t handle_ = nullptr;
    bool with_cublas_handle_ = true;

private:
    std::string run_and_check(const SgemmCase& c, const std::string& variant,
                              const gpu::SgemmTuningTable* table);
};

}  // namespace tandem::test

#endif  // TANDEM_TESTS_SGEMM_TESTBED_HPP
