// Choosing where a call runs, and making the devices for the hybrid backends.
#ifndef TANDEM_SRC_BACKEND_HPP
#define TANDEM_SRC_BACKEND_HPP

#include <memory>
#include <string>
#include <vector>

#include "scheduler/device.hpp"
#include "tandem/tandem.hpp"

namespace tandem::detail {

struct BackendChoice {
    Backend backend = Backend::cpu;  // cpu, gpu or host
    int num_devices = 1;             // devices for gpu / host
    std::string note;                // why automatic chose what it chose
};

// Resolves automatic (and TANDEM_BACKEND) to a concrete backend. Throws
// Error(TANDEM_ERROR_BACKEND_UNAVAILABLE) naming what is missing when the gpu
// backend is asked for and cannot run, or TANDEM_BACKEND is malformed.
BackendChoice choose_backend(const Options& options);

std::vector<std::unique_ptr<Device>> make_devices(const BackendChoice& choice);

}  // namespace tandem::detail

#endif
