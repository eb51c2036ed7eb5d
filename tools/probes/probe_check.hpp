// The probes' check of a CUDA, cuBLAS, cuSOLVER or driver call: any nonzero
// status ends the probe with the call and its line (probes are programs, not
// the library: tandem::Error is for the library's callers).
#ifndef TANDEM_PROBES_PROBE_CHECK_HPP
#define TANDEM_PROBES_PROBE_CHECK_HPP

#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                             \
    do {                                                                                        \
        auto status_ = (call);                                                                  \
        if (status_ != 0) {                                                                     \
            std::fprintf(stderr, "%s failed (%d) at line %d\n", #call, int(status_), __LINE__); \
            std::exit(1);                                                                       \
        }                                                                                       \
    } while (0)

#endif
