// The probes' checks of a CUDA runtime or library call: print the call and the error, exit 1.
// (Each probe is one file built alone with nvcc; this header and probe_data.cuh
// are all they share.)
#ifndef TANDEM_PROBES_PROBE_CHECK_CUH
#define TANDEM_PROBES_PROBE_CHECK_CUH

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                           \
    do {                                                                                      \
        cudaError_t e_ = (call);                                                              \
        if (e_ != cudaSuccess) {                                                              \
            std::fprintf(stderr, "%s:%d: %s failed: %s (%d: %s)\n", __FILE__, __LINE__, #call, \
                         cudaGetErrorName(e_), int(e_), cudaGetErrorString(e_));              \
            std::exit(1);                                                                     \
        }                                                                                     \
    } while (0)

// The same for a library call whose status is 0 on success (cuBLAS, cuSOLVER).
#define CHECK_STATUS(call)                                                                    \
    do {                                                                                      \
        const int s_ = int(call);                                                             \
        if (s_ != 0) {                                                                        \
            std::fprintf(stderr, "%s:%d: %s failed: status %d\n", __FILE__, __LINE__, #call, s_); \
            std::exit(1);                                                                     \
        }                                                                                     \
    } while (0)

#endif  // TANDEM_PROBES_PROBE_CHECK_CUH
