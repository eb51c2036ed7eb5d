// gpu::in_brk_heap, which lets the host routines skip the CUDA pointer query
// for arrays in the brk heap: never true for memory outside it (a stack, an
// mmap, CUDA's own allocations), true for a small block of the main thread's
// malloc (where a small LAPACK call's arrays live), and the host routines'
// checks still tell GPU memory from host memory either way.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdlib>
#include <memory>
#include <vector>

#include "gpu/host_heap.hpp"
#include "scheduler/gpu_backend.hpp"
#include "tandem/tandem.hpp"

namespace tandem::test {
namespace {

TEST(GpuHostHeap, OnlyTheBrkHeapIsInIt) {
    float on_stack[16] = {};
    EXPECT_FALSE(gpu::in_brk_heap(on_stack));
    EXPECT_FALSE(gpu::in_brk_heap(nullptr));
    void* mapped = mmap(nullptr, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(mapped, MAP_FAILED);
    EXPECT_FALSE(gpu::in_brk_heap(mapped));
    munmap(mapped, 1 << 16);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    // glibc's malloc (the sanitizers bring their own, which do not use brk):
    // the main thread's small blocks come from the heap. gtest runs the tests
    // on the main thread.
    const std::unique_ptr<float[]> small(new float[16 * 16]);
    EXPECT_TRUE(gpu::in_brk_heap(small.get()));
#endif
}

// With a GPU: CUDA's memory is never taken for heap memory, and the host
// routines reject device memory and accept the heap's arrays.
TEST(GpuHostHeap, CudaMemoryIsNotInIt) {
    if (gpu::device_count() == 0) GTEST_SKIP() << "no usable CUDA device: " << gpu::unavailable_reason();
    const int n = 16;
    float* device = nullptr;
    float* managed = nullptr;
    float* pinned = nullptr;
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&device), n * n * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMallocManaged(reinterpret_cast<void**>(&managed), n * n * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMallocHost(reinterpret_cast<void**>(&pinned), n * n * sizeof(float)), cudaSuccess);
    EXPECT_FALSE(gpu::in_brk_heap(device));
    EXPECT_FALSE(gpu::in_brk_heap(managed));
    EXPECT_FALSE(gpu::in_brk_heap(pinned));
    EXPECT_TRUE(gpu::is_device_only_memory(device));
    EXPECT_FALSE(gpu::is_device_only_memory(managed));
    EXPECT_FALSE(gpu::is_device_only_memory(pinned));

    std::vector<float> a(n * n, 0.0f);
    for (int i = 0; i < n; ++i) a[i * n + i] = 2.0f;
    std::vector<int> ipiv(n);
    EXPECT_FALSE(gpu::is_device_only_memory(a.data()));
    EXPECT_EQ(sgetrf(n, n, a.data(), n, ipiv.data()), 0);
    EXPECT_EQ(sgetrf(n, n, device, n, ipiv.data()), -3);
    cudaFree(device);
    cudaFree(managed);
    cudaFreeHost(pinned);
}

}  // namespace
}  // namespace tandem::test
