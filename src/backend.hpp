// Choosing where a call runs, and making the devices for the hybrid backends.
#ifndef TANDEM_SRC_BACKEND_HPP
#define TANDEM_SRC_BACKEND_HPP

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "scheduler/device.hpp"
#include "tandem/tandem.hpp"

namespace tandem::detail {

struct BackendChoice {
    Backend backend = Backend::cpu;  // cpu, gpu or host
    int num_devices = 1;             // devices for gpu / host
    int first_device = 0;            // gpu: CUDA ordinal of the first of them
    // Why automatic chose what it chose ("" if it did not): text that lives as
    // long as the process, so that choosing costs a small call no allocation.
    const char* note = "";
    bool explicit_request = false;   // Options or TANDEM_BACKEND named the backend
    GemmKernel gemm = GemmKernel::automatic;  // for gpu
    UpdatePrecision update_precision = UpdatePrecision::fp32;  // for gpu
    DevicePanelMethod device_panel = DevicePanelMethod::automatic;  // for gpu
    // Options::cache_dir as given. The directory in use (resolve_cache_dir:
    // environment, a lock, perhaps a mkdir) is found where a GPU needs it, the
    // lease and the model, not here: a call that stays on the CPU needs none.
    std::string cache_dir;
};

// The CUDA ordinal of the GPU whose memory holds `pointer`, or -1 for host
// memory (and always -1 without the CUDA backend).
int gpu_holding(const void* pointer);

// Whether the host cannot read `pointer` (device memory, not managed): the
// host-memory routines reject such arrays (false without CUDA).
bool host_cannot_read(const void* pointer);

// Waits for all work issued so far to CUDA device `ordinal` (no-op without CUDA).
void wait_for_gpu(int ordinal);

// Resolves automatic (and TANDEM_BACKEND) to a concrete backend. Throws
// Error(TANDEM_ERROR_BACKEND_UNAVAILABLE) naming what is missing when the gpu
// backend is asked for and cannot run, or TANDEM_BACKEND is malformed.
BackendChoice choose_backend(const Options& options);

// The devices of one call: the GPU backend's kept devices, under its lock
// (scheduler/gpu_backend.hpp), or host devices made for this call.
class DeviceLease {
public:
    explicit DeviceLease(const BackendChoice& choice);
    ~DeviceLease();
    DeviceLease(const DeviceLease&) = delete;
    DeviceLease& operator=(const DeviceLease&) = delete;

    const std::vector<Device*>& devices() const { return devices_; }
    // The GPU backend's cache directory, resolved once for the call (tuning
    // tables and the performance model); "" for host devices.
    const std::string& cache_dir() const { return cache_dir_; }

private:
    std::unique_lock<std::mutex> lock_;
    std::vector<std::unique_ptr<Device>> owned_;  // host devices of this call
    std::vector<Device*> devices_;
    std::string cache_dir_;
};

}  // namespace tandem::detail

#endif
