// The backend configurations the public-API tests run under: the CPU path
// (LAPACK, so its results must equal LAPACK's bit for bit), the hybrid
// scheduler on emulated host devices with one and two devices and block sizes
// that do and do not divide the test sizes, and the GPU (automatic plan, and
// block size 7 for many steps), skipped where no GPU is usable.
#ifndef TANDEM_TESTS_API_BACKENDS_HPP
#define TANDEM_TESTS_API_BACKENDS_HPP

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "tandem/tandem.hpp"

namespace tandem::test {

struct BackendCase {
    Backend backend = Backend::cpu;
    int num_devices = 0;
    int block_size = 0;
    // Fixed for the GPU's many-step case: automatic placement chooses sites
    // from the model per request, and a row-major request may get other sites
    // than a column-major one (with results that differ in the last bits).
    PanelPlacement placement = PanelPlacement::automatic;

    Options options(Layout layout = Layout::col_major) const {
        Options o;
        o.layout = layout;
        o.backend = backend;
        o.num_devices = num_devices;
        o.block_size = block_size;
        o.placement = placement;
        return o;
    }
    // Whether this machine can run the case (a GPU case needs a usable GPU).
    bool runnable() const { return backend != Backend::gpu || gpu_available(); }
    // Whether the same matrix in the two layouts gives bit-identical factors:
    // the GPU's routes may order the same operations differently per layout
    // (a row-major matrix streams to the device without transposes), which
    // changes the last bits; and on several devices a streamed block is
    // caught up at whichever step it has arrived by, in one product that
    // rounds differently from the steps' updates.
    bool layouts_bit_identical() const { return backend != Backend::gpu && num_devices <= 1; }
    // The CPU path calls LAPACK, so LAPACK is an exact oracle for it.
    bool equals_lapack() const { return backend == Backend::cpu; }
    // A GoogleTest-safe name such as "cpu" or "host_d2_nb7".
    std::string name() const {
        if (backend == Backend::cpu) return "cpu";
        return std::string(backend_name(backend)) + "_d" + std::to_string(num_devices) + "_nb" +
               std::to_string(block_size) +
               (placement == PanelPlacement::device ? "_device_panels" : "");
    }
};

inline std::vector<BackendCase> api_backend_cases() {
    return {
        {Backend::cpu, 0, 0},
        {Backend::host, 1, 0},   // automatic block size
        {Backend::host, 1, 1},   // one column per panel
        {Backend::host, 1, 2},
        {Backend::host, 1, 7},   // divides none of the test sizes
        {Backend::host, 2, 7},   // two devices, block columns dealt cyclically
        {Backend::host, 2, 64},  // a second device with no columns for n <= 64
        {Backend::gpu, 1, 0},    // the GPU's own plan (one device panel for these sizes)
        {Backend::gpu, 1, 7, PanelPlacement::device},  // many steps on the GPU
    };
}

// Fewer configurations for the tests that loop over many shapes themselves.
inline std::vector<BackendCase> api_backend_cases_short() {
    return {
        {Backend::cpu, 0, 0},
        {Backend::host, 1, 0},
        {Backend::host, 1, 7},
        {Backend::host, 2, 64},
        {Backend::gpu, 1, 0},
    };
}

inline const BackendCase& backend_case(const BackendCase& c) { return c; }
template <class Other>
const BackendCase& backend_case(const std::tuple<BackendCase, Other>& p) {
    return std::get<0>(p);
}

// A test over backend cases (or (case, something) pairs) that skips the
// cases this machine cannot run.
template <class Param>
class BackendTest : public testing::TestWithParam<Param> {
protected:
    void SetUp() override {
        if (!backend_case(this->GetParam()).runnable())
            GTEST_SKIP() << "no usable GPU for " << backend_case(this->GetParam()).name();
    }
};

}  // namespace tandem::test

#endif  // TANDEM_TESTS_API_BACKENDS_HPP
