// Copies into memory that the CPU will not read again soon (the caller's matrix,
// written once when the factors come back from the devices), with non-temporal
// stores: they skip reading each destination cache line before writing it. On
// the two-H200 machine a pinned -> pageable copy over 16 threads moved 100 GB/s
// this way against 54 GB/s with memcpy (the copy timed alone); in the other direction, into pinned buffers the copy
// engine reads next, plain stores were as fast.
// The scheduler's interface (the gathers of the factors use it); cpu/ implements it.
#ifndef TANDEM_SCHEDULER_STREAMING_COPY_HPP
#define TANDEM_SCHEDULER_STREAMING_COPY_HPP

#include <cstdint>

namespace tandem {

// to[0 .. count) = from[0 .. count); the ranges must not overlap. Any alignment.
// The stores are ordered (a store fence) before this returns.
void copy_floats_streaming(float* to, const float* from, int64_t count);

// The most threads a copy between host buffers takes. Sixteen reach the host's
// memory rate (48 GB/s pageable -> pinned on a four-H200 machine of 64 cores,
// as fast as 32 on the two-H200 one); a team of all 64 made each of an
// upload's parallel regions cost milliseconds there, and the copies ran at
// 0.7 GB/s (docs/PERFORMANCE.md).
constexpr int kMostHostCopyThreads = 16;

// The team for a parallel copy on this thread: its OpenMP threads, at most
// kMostHostCopyThreads.
int host_copy_threads();

}  // namespace tandem

#endif  // TANDEM_SCHEDULER_STREAMING_COPY_HPP
