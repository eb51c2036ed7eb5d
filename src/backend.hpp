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
    std::string note;                // why automatic chose what it chose
    bool explicit_request = false;   // Options or TANDEM_BACKEND named the backend
    GemmKernel gemm = GemmKernel::automatic;  // for gpu
    DevicePanelMethod device_panel = DevicePanelMethod::automatic;  // for gpu
    std::string cache_dir;                    // tuning cache, resolved (never empty)
};

// The CUDA ordinal of the GPU whose memory holds `pointer`, or -1 for host
// memory (and always -1 without the CUDA backend).
int gpu_holding(const void* pointer);

// Whether the host cannot read `pointer` (device memory, not managed): the
// host-memory routines reject such arrays (false without CUDA).
bool host_cannot_read(const void* pointer);

// Waits for all work issued so far to CUDA device `ordinal` (no-op without CUDA).
void wait_for_gpu(int ordinal);

// sgetrf_gpu when the plan is one device panel over the whole matrix: the
// device's panel routine on the caller's column-major matrix, in place.
int factor_in_gpu_memory(Device& device, int64_t m, int64_t n, float* a, int64_t lda, int* ipiv);

// sgetrf when the plan is one device panel over the whole matrix: the
// caller's host matrix through a column-major copy on the GPU (kept there for
// solve_with_kept_factors).
int factor_in_host_memory(Device& device, int64_t m, int64_t n, float* a, int64_t lda, int* ipiv);
// op(A) X = B, B in host memory, with the n x n factors factor_in_host_memory left.
void solve_with_kept_factors(Device& device, char trans, int64_t n, int64_t nrhs, const int* ipiv,
                             float* b, int64_t ldb);

// sgetrs_gpu's solve on a CUDA device of a lease (column-major factors and B in its memory).
void solve_in_gpu_memory(Device& device, char trans, int64_t n, int64_t nrhs, const float* a,
                         int64_t lda, const int* ipiv, float* b, int64_t ldb);

// Options::cache_dir, or $XDG_CACHE_HOME/tandem, or $HOME/.cache/tandem.
std::string resolve_cache_dir(const std::string& configured);

// Resolves automatic (and TANDEM_BACKEND) to a concrete backend. Throws
// Error(TANDEM_ERROR_BACKEND_UNAVAILABLE) naming what is missing when the gpu
// backend is asked for and cannot run, or TANDEM_BACKEND is malformed.
BackendChoice choose_backend(const Options& options);

// The devices of one call. CUDA devices (streams, cuBLAS handles, pinned
// buffers, and device memory that is large enough for the next call) are
// created once per process and kept, so that a call at small n pays no set-up;
// tandem::release_resources() frees them. A lease holds the lock of the GPU
// pool: calls from several threads take turns on the GPUs. Host devices are
// made for each call.
class DeviceLease {
public:
    explicit DeviceLease(const BackendChoice& choice);
    ~DeviceLease();
    DeviceLease(const DeviceLease&) = delete;
    DeviceLease& operator=(const DeviceLease&) = delete;

    const std::vector<Device*>& devices() const { return devices_; }

private:
    std::unique_lock<std::mutex> lock_;
    std::vector<std::unique_ptr<Device>> owned_;  // host devices of this call
    std::vector<Device*> devices_;
};

}  // namespace tandem::detail

#endif
