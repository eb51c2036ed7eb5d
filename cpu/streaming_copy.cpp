#include "scheduler/streaming_copy.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tandem {

void copy_floats_streaming(float* to, const float* from, int64_t count) {
#if defined(__SSE2__)
    // Plain stores up to the first 16-byte boundary of the destination (SSE's
    // streaming store needs it), 16 floats per iteration, plain stores for the rest.
    int64_t i = 0;
    while (i < count && (reinterpret_cast<uintptr_t>(to + i) & 15) != 0) {
        to[i] = from[i];
        ++i;
    }
    for (; i + 16 <= count; i += 16) {
        const __m128 a = _mm_loadu_ps(from + i), b = _mm_loadu_ps(from + i + 4);
        const __m128 c = _mm_loadu_ps(from + i + 8), d = _mm_loadu_ps(from + i + 12);
        _mm_stream_ps(to + i, a);
        _mm_stream_ps(to + i + 4, b);
        _mm_stream_ps(to + i + 8, c);
        _mm_stream_ps(to + i + 12, d);
    }
    for (; i < count; ++i) to[i] = from[i];
    _mm_sfence();  // streaming stores are weakly ordered: publish them before returning
#else
    std::memcpy(to, from, sizeof(float) * static_cast<size_t>(count));
#endif
}

int host_copy_threads() { return std::max(1, std::min(omp_get_max_threads(), kMostHostCopyThreads)); }

}  // namespace tandem
