// An n x n matrix in GPU memory for timing tandem::sgetrf_gpu the way cuSOLVER
// is timed: the copy in and out is outside the timed region. Without the CUDA
// backend every member throws std::runtime_error.
#ifndef TANDEM_BENCH_DEVICE_MATRIX_HPP
#define TANDEM_BENCH_DEVICE_MATRIX_HPP

#include <cstddef>

namespace tandem_bench {

class DeviceMatrix {
public:
    explicit DeviceMatrix(std::size_t floats);  // on CUDA device 0
    ~DeviceMatrix();
    DeviceMatrix(const DeviceMatrix&) = delete;
    DeviceMatrix& operator=(const DeviceMatrix&) = delete;

    float* data() const { return data_; }
    void copy_from_host(const float* host);  // synchronous
    void copy_to_host(float* host) const;    // synchronous

private:
    float* data_ = nullptr;
    std::size_t floats_ = 0;
};

}  // namespace tandem_bench

#endif
