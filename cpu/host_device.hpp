// The host device: the device interface implemented on host memory with BLAS.
// It is the oracle for the CUDA device and lets the whole scheduler (look-ahead,
// transposed transfers, row swaps, inv(L11), several devices) run without a GPU.
// Every call runs to completion before it returns, so the queues are trivially
// ordered; events only record host timestamps.
#ifndef TANDEM_CPU_HOST_DEVICE_HPP
#define TANDEM_CPU_HOST_DEVICE_HPP

#include <memory>

#include "scheduler/device.hpp"

namespace tandem {

std::unique_ptr<Device> make_host_device(int index);

}  // namespace tandem

#endif
