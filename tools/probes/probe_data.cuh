// The probes' test data and statistics: a device array of random values, and
// the median of repeated timings. (Each probe is one file built alone with
// nvcc; this header and probe_check.cuh are all they share.)
#ifndef TANDEM_PROBES_PROBE_DATA_CUH
#define TANDEM_PROBES_PROBE_DATA_CUH

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "probe_check.cuh"

__global__ void fill_random_kernel(float* p, size_t n, unsigned seed) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        unsigned x = unsigned(i) * 2654435761u + seed;
        x ^= x >> 13;
        x *= 0x5bd1e995u;
        x ^= x >> 15;
        p[i] = float(x & 0xffffff) / float(0x1000000) - 0.5f;
    }
}

// p[0 .. n) := pseudo-random values in [-0.5, 0.5) that depend on `seed`, on the
// default stream. Not zeros: SGEMM at large k is power-bound, and zeros draw less power.
inline void fill_random(float* p, size_t n, unsigned seed) {
    fill_random_kernel<<<1024, 256>>>(p, n, seed);
    CHECK(cudaGetLastError());
}

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

#endif  // TANDEM_PROBES_PROBE_DATA_CUH
