// Probe: what pinning the caller's pageable array costs (cudaHostRegister) and
// what the copy engines then move from it, against copies from pageable memory.
// Build and run on the GPU machine:
//   nvcc -O2 -arch=sm_90 -o /tmp/probe tools/probes/host_register_probe.cu && /tmp/probe 8
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "probe_check.cuh"

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int main(int argc, char** argv) {
    const double gib = argc > 1 ? std::atof(argv[1]) : 8.0;
    const size_t bytes = size_t(gib * (1u << 30));
    int devices = 0;
    CHECK(cudaGetDeviceCount(&devices));
    std::printf("%d GPU(s), %.1f GiB host array\n", devices, gib);
    char* host = static_cast<char*>(std::malloc(bytes));
    double t = now();
    std::memset(host, 1, bytes);
    std::printf("first touch (memset): %.1f ms, %.1f GB/s\n", 1e3 * (now() - t), bytes / (now() - t) * 1e-9);
    std::vector<void*> dev(devices);
    std::vector<cudaStream_t> streams(devices);
    const size_t per_device = bytes / devices;
    for (int d = 0; d < devices; ++d) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaMalloc(&dev[d], per_device));
        CHECK(cudaStreamCreate(&streams[d]));
    }
    auto copy_all = [&](const char* label) {
        double t0 = now();
        for (int d = 0; d < devices; ++d) {
            CHECK(cudaSetDevice(d));
            for (size_t off = 0; off < per_device; off += size_t(128) << 20)
                CHECK(cudaMemcpyAsync(static_cast<char*>(dev[d]) + off, host + d * per_device + off,
                                      std::min(size_t(128) << 20, per_device - off), cudaMemcpyHostToDevice,
                                      streams[d]));
        }
        const double issued = now() - t0;
        for (int d = 0; d < devices; ++d) CHECK(cudaStreamSynchronize(streams[d]));
        const double s = now() - t0;
        std::printf("%s: H2D %.1f ms (%.1f GB/s over %d GPUs; issuing took %.1f ms)\n", label, 1e3 * s,
                    bytes / s * 1e-9, devices, 1e3 * issued);
    };
    copy_all("pageable");
    copy_all("pageable again");
    for (int round = 0; round < 2; ++round) {
        t = now();
        CHECK(cudaHostRegister(host, bytes, cudaHostRegisterDefault));
        const double reg = now() - t;
        std::printf("cudaHostRegister: %.1f ms (%.1f GB/s)\n", 1e3 * reg, bytes / reg * 1e-9);
        copy_all("registered");
        t = now();
        CHECK(cudaHostUnregister(host));
        std::printf("cudaHostUnregister: %.1f ms\n", 1e3 * (now() - t));
    }
    // Registration in pieces by several threads: does it scale?
    for (int threads : {4, 16}) {
        t = now();
        std::vector<std::thread> pool;
        const size_t piece = bytes / threads / 4096 * 4096;
        for (int i = 0; i < threads; ++i)
            pool.emplace_back([&, i] { CHECK(cudaHostRegister(host + i * piece, piece, cudaHostRegisterDefault)); });
        for (auto& th : pool) th.join();
        const double reg = now() - t;
        std::printf("cudaHostRegister by %d threads in pieces: %.1f ms (%.1f GB/s)\n", threads, 1e3 * reg,
                    threads * piece / reg * 1e-9);
        t = now();
        for (int i = 0; i < threads; ++i) CHECK(cudaHostUnregister(host + i * piece));
        std::printf("unregister: %.1f ms\n", 1e3 * (now() - t));
    }
    return 0;
}
