// The GPU backend of a build without CUDA (no CUDA compiler at configure
// time): it finds no GPU and says why, so the API layer needs no #ifdef.
#include "scheduler/gpu_backend.hpp"

namespace tandem::gpu {

namespace {

constexpr const char* kNotCompiled =
    "tandem was built without the CUDA backend (no CUDA compiler at configure time)";

}  // namespace

int device_count() { return 0; }

std::string unavailable_reason() { return kNotCompiled; }

int memory_device(const void*) { return -1; }

bool is_device_only_memory(const void*) { return false; }

void synchronize_device(int) {}

std::unique_lock<std::mutex> lock_devices() {
    static std::mutex unused;
    return std::unique_lock<std::mutex>(unused);
}

Device& kept_device(int, const GpuSettings&) {
    throw Error(TANDEM_ERROR_BACKEND_UNAVAILABLE, kNotCompiled);
}

void release_devices() {}

}  // namespace tandem::gpu
