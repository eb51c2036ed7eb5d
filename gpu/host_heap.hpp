// Whether a pointer lies in the process's brk heap: host memory that no CUDA
// allocation can share an address with, found without asking CUDA.
#ifndef TANDEM_GPU_HOST_HEAP_HPP
#define TANDEM_GPU_HOST_HEAP_HPP

namespace tandem::gpu {

// True when `pointer` is inside [the heap's start, the current program break):
// glibc's malloc serves the main thread's small blocks (under its mmap
// threshold, 128 KiB at first) from there, such as the arrays of a small LAPACK
// call. The kernel never places another mapping inside that range, and the
// CUDA driver's memory (device, managed, or pinned by cudaHostAlloc) is all
// mapped, so such a pointer is ordinary host memory (perhaps registered with
// cudaHostRegister, which leaves it host memory). False when the heap's start
// cannot be read (/proc/self/stat, Linux 3.3 on), for memory served by mmap
// (large blocks, other threads' arenas, stacks) and under allocators that do
// not use brk: those pointers go to CUDA as before.
bool in_brk_heap(const void* pointer);

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_HOST_HEAP_HPP
