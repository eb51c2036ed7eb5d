// Device-side building blocks of the SGEMM kernels: asynchronous global ->
// shared copies (cp.async, sm_80+), their commit/wait bookkeeping, and an L2
// prefetch hint. Each copy takes a byte count of valid source data: the rest of
// the destination is zero-filled and no byte past the valid ones is read, which
// is how the kernels handle matrix edges without touching memory out of bounds.
#ifndef TANDEM_GPU_ASYNC_COPY_CUH
#define TANDEM_GPU_ASYNC_COPY_CUH

#include <cstdint>

namespace tandem::gpu::async {

__device__ __forceinline__ uint32_t shared_address(const void* pointer) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(pointer));
}

// 4-byte copy; src_bytes is 4 (copy) or 0 (write a zero, read nothing).
// .ca keeps the line in L1: neighbouring threads read the rest of it.
__device__ __forceinline__ void copy4(float* dst_shared, const float* src, uint32_t src_bytes) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(shared_address(dst_shared)),
                 "l"(src), "r"(src_bytes)
                 : "memory");
}

// 16-byte copy (src and dst 16-byte aligned); src_bytes in {0, 4, 8, 12, 16}.
// .cg bypasses L1: a B tile is reused by other blocks through L2, not by this one.
__device__ __forceinline__ void copy16(float* dst_shared, const float* src, uint32_t src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(dst_shared)),
                 "l"(src), "r"(src_bytes)
                 : "memory");
}

// Closes the group of copies issued since the previous commit.
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// Waits until at most `pending` of this thread's committed groups are in flight.
// Other threads' copies become visible only after a following __syncthreads().
template <int pending>
__device__ __forceinline__ void wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(pending) : "memory");
}

// Asks L2 to fetch the line holding `address` (no register written, no fault
// semantics needed: the kernels only pass addresses inside the matrix).
__device__ __forceinline__ void prefetch_l2(const float* address) {
    asm volatile("prefetch.global.L2 [%0];\n" ::"l"(address));
}

// Returns x unchanged, but hides its value from the optimizer, so that
// expressions of x are recomputed where they are used instead of being hoisted
// out of a loop into registers that are needed for something else.
template <class T>
__device__ __forceinline__ T opaque(T x) {
    static_assert(sizeof(T) == 8, "64-bit values and pointers");
    asm volatile("" : "+l"(x));
    return x;
}

}  // namespace tandem::gpu::async

#endif  // TANDEM_GPU_ASYNC_COPY_CUH
