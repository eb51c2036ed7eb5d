#include "gpu/kernel_shared_memory.hpp"

#include <cuda_runtime.h>

#include <atomic>
#include <mutex>
#include <set>
#include <utility>

#include "gpu/cuda_check.hpp"

namespace tandem::gpu {
namespace {
std::atomic<unsigned> generation{1};
}  // namespace

unsigned kernel_settings_generation() { return generation.load(); }
void forget_kernel_settings() { generation.fetch_add(1); }

void prepare_kernel_shared_memory(const void* kernel, int shared_bytes) {
    int device = 0;
    TANDEM_CUDA_CHECK(cudaGetDevice(&device));
    static std::mutex mutex;
    static std::set<std::pair<const void*, int>> prepared;  // (kernel, device)
    static unsigned prepared_in = 0;                        // ... in this generation
    std::lock_guard<std::mutex> lock(mutex);
    if (prepared_in != kernel_settings_generation()) {
        prepared.clear();
        prepared_in = kernel_settings_generation();
    }
    if (prepared.count({kernel, device})) return;
    TANDEM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           shared_bytes));
    TANDEM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                           cudaSharedmemCarveoutMaxShared));
    prepared.insert({kernel, device});
}

}  // namespace tandem::gpu
