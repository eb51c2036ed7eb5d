#include "bench/device_matrix.hpp"

#include <stdexcept>
#include <string>

#ifdef TANDEM_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace tandem_bench {

#ifndef TANDEM_HAVE_CUDA

DeviceMatrix::DeviceMatrix(std::size_t) {
    throw std::runtime_error("a matrix in GPU memory: no GPU backend in this build");
}
DeviceMatrix::~DeviceMatrix() = default;
void DeviceMatrix::copy_from_host(const float*) {}
void DeviceMatrix::copy_to_host(float*) const {}

#else

namespace {

void check(cudaError_t status, const char* call) {
    if (status != cudaSuccess)
        throw std::runtime_error(std::string(call) + " failed: " + cudaGetErrorName(status) + " (" +
                                 cudaGetErrorString(status) + ")");
}

}  // namespace

DeviceMatrix::DeviceMatrix(std::size_t floats) : floats_(floats) {
    check(cudaSetDevice(0), "cudaSetDevice");
    check(cudaMalloc(reinterpret_cast<void**>(&data_), floats * sizeof(float)), "cudaMalloc");
}

DeviceMatrix::~DeviceMatrix() { cudaFree(data_); }  // nothing useful to do about a failure here

void DeviceMatrix::copy_from_host(const float* host) {
    check(cudaMemcpy(data_, host, floats_ * sizeof(float), cudaMemcpyHostToDevice),
          "cudaMemcpy to the device");
    // A pageable copy may return before its last DMA lands: not in the timed region.
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

void DeviceMatrix::copy_to_host(float* host) const {
    check(cudaMemcpy(host, data_, floats_ * sizeof(float), cudaMemcpyDeviceToHost),
          "cudaMemcpy to the host");
}

#endif

}  // namespace tandem_bench
