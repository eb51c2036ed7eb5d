#include "gpu/kernel_timer.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "gpu/cuda_check.hpp"
#include "gpu/device_buffer.hpp"

namespace tandem::gpu {
namespace {

constexpr uint64_t kHoldTimeoutNs = 1000000000ull;  // far beyond any queueing; see median_seconds

__device__ __forceinline__ uint64_t global_nanoseconds() {
    uint64_t t;
    asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
    return t;
}

// Spins until the host sets *release (host-mapped memory) or the timeout passes;
// in the latter case it says so in *timed_out, so the timing is thrown away.
__global__ void hold_stream_kernel(const volatile int* release, int* timed_out) {
    const uint64_t start = global_nanoseconds();
    while (*release == 0) {
        if (global_nanoseconds() - start > kHoldTimeoutNs) {
            *timed_out = 1;
            return;
        }
        __nanosleep(1000);
    }
}

// Reads `count` float4 and writes nothing (the condition never holds for the
// zeros the buffer is filled with): evicts L2 without leaving dirty lines
// whose write-back would then compete with the timed work.
__global__ void read_through_kernel(const float4* data, int64_t count, float* sink) {
    float sum = 0.0f;
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
        const float4 v = data[i];
        sum += v.x + v.y + v.z + v.w;
    }
    if (sum == 1.0f) *sink = sum;
}

__global__ void empty_kernel() {}

}  // namespace

struct KernelTimer::Resources {
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    int* host_flags = nullptr;  // [0] release, [1] timed out; host-mapped
    int* device_flags = nullptr;
    DeviceBuffer evict;
    int64_t evict_vectors = 0;
    int sms = 1;
    bool hold = true;

    ~Resources() {
        if (start) (void)cudaEventDestroy(start);
        if (stop) (void)cudaEventDestroy(stop);
        if (host_flags) (void)cudaFreeHost(host_flags);
    }
};

KernelTimer::KernelTimer(void* stream) : resources_(std::make_unique<Resources>()) {
    Resources& r = *resources_;
    r.stream = static_cast<cudaStream_t>(stream);
    TANDEM_CUDA_CHECK(cudaEventCreate(&r.start));
    TANDEM_CUDA_CHECK(cudaEventCreate(&r.stop));
    TANDEM_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&r.host_flags), 2 * sizeof(int), cudaHostAllocMapped));
    r.host_flags[0] = r.host_flags[1] = 0;
    TANDEM_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&r.device_flags), r.host_flags, 0));
    int device = 0, l2_bytes = 0;
    TANDEM_CUDA_CHECK(cudaGetDevice(&device));
    TANDEM_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
    TANDEM_CUDA_CHECK(cudaDeviceGetAttribute(&r.sms, cudaDevAttrMultiProcessorCount, device));
    const size_t evict_bytes = std::max<size_t>(size_t(2) * size_t(l2_bytes), size_t(16) << 20);
    r.evict = DeviceBuffer(evict_bytes, "L2 eviction buffer");
    r.evict_vectors = int64_t(evict_bytes / sizeof(float4));
    TANDEM_CUDA_CHECK(cudaMemsetAsync(r.evict.floats(), 0, evict_bytes, r.stream));
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(r.stream));
}

KernelTimer::~KernelTimer() = default;

double KernelTimer::seconds_of(const std::function<void()>& run, bool cold) {
    Resources& r = *resources_;
    if (cold) {
        read_through_kernel<<<4 * r.sms, 512, 0, r.stream>>>(reinterpret_cast<const float4*>(r.evict.floats()),
                                                            r.evict_vectors, r.evict.floats());
        TANDEM_CUDA_CHECK(cudaGetLastError());
    }
    volatile int* const flags = r.host_flags;
    const bool held = r.hold;
    if (held) {
        flags[0] = 0, flags[1] = 0;
        hold_stream_kernel<<<1, 1, 0, r.stream>>>(r.device_flags, r.device_flags + 1);
        TANDEM_CUDA_CHECK(cudaGetLastError());
    }
    TANDEM_CUDA_CHECK(cudaEventRecord(r.start, r.stream));
    run();
    TANDEM_CUDA_CHECK(cudaEventRecord(r.stop, r.stream));
    flags[0] = 1;  // release: everything is queued
    TANDEM_CUDA_CHECK(cudaEventSynchronize(r.stop));
    if (held && flags[1] != 0) {
        r.hold = false;  // the work (or a profiler) waited for the hold: time without it
        return seconds_of(run, cold);
    }
    float ms = 0.0f;
    TANDEM_CUDA_CHECK(cudaEventElapsedTime(&ms, r.start, r.stop));
    return 1e-3 * double(ms);
}

bool KernelTimer::holds() const { return resources_->hold; }

double KernelTimer::median_seconds(const std::function<void()>& run, int repeats, bool cold) {
    run();  // untimed: lazy module loading, workspaces, clocks
    std::vector<double> seconds;
    for (int i = 0; i < std::max(1, repeats); ++i) seconds.push_back(seconds_of(run, cold));
    std::sort(seconds.begin(), seconds.end());
    const size_t mid = seconds.size() / 2;
    return seconds.size() % 2 ? seconds[mid] : 0.5 * (seconds[mid - 1] + seconds[mid]);
}

double KernelTimer::empty_kernel_seconds(int repeats) {
    const cudaStream_t stream = resources_->stream;
    return median_seconds(
        [stream] {
            empty_kernel<<<1, 32, 0, stream>>>();
            TANDEM_CUDA_CHECK(cudaGetLastError());
        },
        repeats, false);
}

}  // namespace tandem::gpu
