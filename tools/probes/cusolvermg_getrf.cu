// Probe: time NVIDIA cuSOLVERMg's multi-GPU LU (cusolverMgGetrf, CUDA_R_32F) on G GPUs of
// one host, as an outside reference for our own two-GPU LU.
//
// Build:
//   nvcc -O3 -std=c++17 -arch=sm_90 tools/probes/cusolvermg_getrf.cu -o /tmp/cusolvermg_getrf -lcusolverMg -lcudart
// Run (2 x H200):
//   /tmp/cusolvermg_getrf --gpus 2 --sizes 32768,65536 --tile 256 --repeats 3
//
// Layout (as in NVIDIA's CUDALibrarySamples cuSOLVER/MgGetrf): 1-D column block cyclic,
// one device row and G device columns. Global column tile b (T columns) lives on device
// b % G as local tile b / G; local tiles are packed one after another, each column-major
// with lda = n (the descriptor's row block is the whole column, so there is no other lda).
// IPIV is distributed the same way as a 1 x n matrix (T ints per tile) and holds 1-based
// global row indices, as LAPACK does. IA = JA = 1 (1-based, whole matrix).
// CUDA 13 marks every cusolverMg symbol [[deprecated]] (still shipped); silence the warnings.
#define DISABLE_CUSOLVERMG_DEPRECATED
#include <cuda_runtime.h>
#include <cusolverMg.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "probe_check.cuh"

// Counter-based generator: element (i, j) depends only on the seed and its index, so the
// matrix is the same whatever the thread count, and 2^32 entries fill in parallel.
static float uniform_pm1(uint64_t idx) {
    uint64_t z = idx + 0x9E3779B97F4A7C15ull * 12345u;  // fixed seed 12345
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return float(double(z >> 40) * (2.0 / double(1ull << 24)) - 1.0);  // [-1, 1)
}

static void fill_matrix(float* a, int64_t n) {
    const unsigned nt = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < nt; ++t)
        pool.emplace_back([=] {
            for (int64_t j = t; j < n; j += nt)  // one column per step: first touch by worker
                for (int64_t i = 0; i < n; ++i) a[j * n + i] = uniform_pm1(uint64_t(j * n + i));
        });
    for (auto& th : pool) th.join();
}

struct Dist {  // 1-D column block cyclic map of an n x n matrix onto G devices
    int64_t n, T;
    int G;
    int64_t tiles() const { return (n + T - 1) / T; }
    int64_t tiles_per_dev() const { return (tiles() + G - 1) / G; }  // max, for allocation
    int64_t cols(int64_t b) const { return std::min(T, n - b * T); }
};

// Host (column-major, ld n) -> devices. With lda == n a whole tile is one contiguous
// block on both sides, so each tile is a single copy; devices copy concurrently.
static void upload(const Dist& d, const std::vector<int>& devs, const float* h,
                   const std::vector<float*>& dA) {
    for (int p = 0; p < d.G; ++p) {
        CHECK(cudaSetDevice(devs[p]));
        for (int64_t b = p, k = 0; b < d.tiles(); b += d.G, ++k)
            CHECK(cudaMemcpyAsync(dA[p] + k * d.T * d.n, h + b * d.T * d.n,
                                       sizeof(float) * d.n * d.cols(b), cudaMemcpyHostToDevice, 0));
    }
    for (int p = 0; p < d.G; ++p) {
        CHECK(cudaSetDevice(devs[p]));
        CHECK(cudaDeviceSynchronize());
    }
}

static void sync_all(const std::vector<int>& devs) {
    for (int dv : devs) {
        CHECK(cudaSetDevice(dv));
        CHECK(cudaDeviceSynchronize());
    }
}

static std::vector<int64_t> parse_sizes(const char* s) {
    std::vector<int64_t> v;
    for (const char* p = s; *p;) {
        char* end = nullptr;
        long long x = std::strtoll(p, &end, 10);
        if (end == p || x <= 0) { std::fprintf(stderr, "bad --sizes '%s'\n", s); std::exit(2); }
        v.push_back(x);
        p = (*end == ',') ? end + 1 : end;
        if (*end && *end != ',') { std::fprintf(stderr, "bad --sizes '%s'\n", s); std::exit(2); }
    }
    return v;
}

int main(int argc, char** argv) {
    int G = 0, repeats = 3;
    int64_t T = 256;
    std::vector<int64_t> sizes{32768, 65536};
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (i + 1 >= argc) { std::fprintf(stderr, "missing value for %s\n", a.c_str()); return 2; }
        if (a == "--gpus") G = std::atoi(argv[++i]);
        else if (a == "--sizes") sizes = parse_sizes(argv[++i]);
        else if (a == "--tile") T = std::atoll(argv[++i]);
        else if (a == "--repeats") repeats = std::atoi(argv[++i]);
        else { std::fprintf(stderr, "usage: %s [--gpus G] [--sizes N,N] [--tile T] [--repeats R]\n", argv[0]); return 2; }
    }
    if (T <= 0 || repeats <= 0 || G < 0) { std::fprintf(stderr, "bad arguments\n"); return 2; }

    int count = 0;
    CHECK(cudaGetDeviceCount(&count));  // no GPU/driver: clean error and exit 1 here
    if (G == 0) G = count;
    if (G > count) { std::fprintf(stderr, "--gpus %d but only %d visible\n", G, count); return 1; }
    std::vector<int> devs(G);
    for (int p = 0; p < G; ++p) devs[p] = p;

    // Peer access both ways between every pair (the library moves panels peer to peer).
    for (int p = 0; p < G; ++p) {
        CHECK(cudaSetDevice(devs[p]));
        for (int q = 0; q < G; ++q) {
            int ok = 0;
            if (p == q) continue;
            CHECK(cudaDeviceCanAccessPeer(&ok, devs[p], devs[q]));
            if (!ok) { std::printf("note: no peer access %d -> %d\n", devs[p], devs[q]); continue; }
            cudaError_t e = cudaDeviceEnablePeerAccess(devs[q], 0);
            if (e == cudaErrorPeerAccessAlreadyEnabled) (void)cudaGetLastError();  // clear it
            else CHECK(e);
        }
    }

    cusolverMgHandle_t h = nullptr;
    CHECK_STATUS(cusolverMgCreate(&h));
    CHECK_STATUS(cusolverMgDeviceSelect(h, G, devs.data()));
    cudaLibMgGrid_t grid = nullptr;  // 1 x G device grid: column block cyclic only
    CHECK_STATUS(cusolverMgCreateDeviceGrid(&grid, 1, G, devs.data(), CUDALIBMG_GRID_MAPPING_COL_MAJOR));

    bool all_pass = true;
    for (int64_t n : sizes) {
        if (n > INT32_MAX) { std::fprintf(stderr, "n=%lld exceeds the int API\n", (long long)n); return 1; }
        const Dist d{n, T, G};
        const size_t host_elems = size_t(n) * size_t(n);
        std::unique_ptr<float[]> hA(new float[host_elems]);  // the only host copy; not zeroed
        fill_matrix(hA.get(), n);
        // Pin it so the (untimed) re-uploads run at copy-engine speed; pageable still works.
        const bool pinned = cudaHostRegister(hA.get(), host_elems * sizeof(float),
                                             cudaHostRegisterPortable) == cudaSuccess;
        if (!pinned) { (void)cudaGetLastError(); std::printf("note: cudaHostRegister failed; pageable uploads\n"); }

        // Expected first pivot: LAPACK-style first index of max |a(i,0)|, 1-based.
        int64_t piv0 = 0;
        for (int64_t i = 1; i < n; ++i)
            if (std::fabs(hA[i]) > std::fabs(hA[piv0])) piv0 = i;
        const float amax = std::fabs(hA[piv0]);

        cudaLibMgMatrixDesc_t desc = nullptr;  // row block = n: whole columns, lda = n
        CHECK_STATUS(cusolverMgCreateMatrixDesc(&desc, n, n, n, T, CUDA_R_32F, grid));
        std::vector<float*> dA(G, nullptr);
        std::vector<int*> dPiv(G, nullptr);
        const size_t local = size_t(d.tiles_per_dev()) * size_t(T);  // local columns (padded)
        for (int p = 0; p < G; ++p) {
            CHECK(cudaSetDevice(devs[p]));
            CHECK(cudaMalloc(&dA[p], sizeof(float) * local * size_t(n)));
            CHECK(cudaMalloc(&dPiv[p], sizeof(int) * local));
            CHECK(cudaMemset(dA[p], 0, sizeof(float) * local * size_t(n)));  // padding
        }
        int64_t lwork = 0;  // elements of computeType per device
        CHECK_STATUS(cusolverMgGetrf_bufferSize(h, int(n), int(n), reinterpret_cast<void**>(dA.data()),
                                            1, 1, desc, dPiv.data(), CUDA_R_32F, &lwork));
        std::vector<void*> dWork(G, nullptr);
        for (int p = 0; p < G; ++p) {
            CHECK(cudaSetDevice(devs[p]));
            CHECK(cudaMalloc(&dWork[p], sizeof(float) * size_t(std::max<int64_t>(lwork, 1))));
        }
        std::printf("n=%lld G=%d tile=%lld: %.2f GiB/device matrix, lwork=%lld floats/device (%.2f GiB)\n",
                    (long long)n, G, (long long)T, sizeof(float) * local * n / 1073741824.0,
                    (long long)lwork, sizeof(float) * lwork / 1073741824.0);
        std::fflush(stdout);

        std::vector<double> secs;
        int info = 0;
        for (int r = 0; r <= repeats; ++r) {  // r == 0 is the warm-up
            upload(d, devs, hA.get(), dA);    // fresh copy of the same matrix; not timed
            sync_all(devs);
            const auto t0 = std::chrono::steady_clock::now();
            CHECK_STATUS(cusolverMgGetrf(h, int(n), int(n), reinterpret_cast<void**>(dA.data()), 1, 1,
                                     desc, dPiv.data(), CUDA_R_32F, dWork.data(), lwork, &info));
            sync_all(devs);
            const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (r > 0) secs.push_back(s);
            if (info != 0) std::printf("  run %d: info=%d\n", r, info);
        }
        std::vector<double> st = secs;
        std::sort(st.begin(), st.end());
        const double med = st.size() % 2 ? st[st.size() / 2] : 0.5 * (st[st.size() / 2 - 1] + st[st.size() / 2]);
        const double flops = 2.0 / 3.0 * double(n) * double(n) * double(n);
        std::printf("n=%lld cusolverMg G=%d tile=%lld median %.3f s, GF/s %.1f (2/3 n^3), info %d\n",
                    (long long)n, G, (long long)T, med, flops / med * 1e-9, info);
        std::printf("  min %.3f s (%.1f GF/s), max %.3f s (%.1f GF/s), %d timed runs\n", st.front(),
                    flops / st.front() * 1e-9, st.back(), flops / st.back() * 1e-9, repeats);

        // Check on the last run: the first tile (global columns 0..T-1) is device 0's local
        // tile 0, so its pivots are dPiv[0][0..T) and U(0,0) is dA[0][0].
        const int64_t c0 = d.cols(0);
        std::vector<int> piv(c0);
        float u00 = 0.f;
        CHECK(cudaSetDevice(devs[0]));
        CHECK(cudaMemcpy(piv.data(), dPiv[0], sizeof(int) * c0, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(&u00, dA[0], sizeof(float), cudaMemcpyDeviceToHost));
        bool range_ok = true;  // 1-based, and row i can only swap with a row at or below it
        for (int64_t i = 0; i < c0; ++i) range_ok &= piv[i] >= i + 1 && piv[i] <= n;
        const bool piv_ok = piv[0] == piv0 + 1;
        const bool u_ok = std::fabs(std::fabs(u00) - amax) <= 1e-6f * amax;
        const bool pass = info == 0 && range_ok && piv_ok && u_ok;
        std::printf("  check: info=%d, pivots of tile 0 in [i,n] %s, ipiv(1)=%d expected %lld, "
                    "|U(1,1)|=%.7g expected %.7g -> %s\n", info, range_ok ? "yes" : "NO", piv[0],
                    (long long)(piv0 + 1), std::fabs(u00), amax, pass ? "PASS" : "FAIL");
        std::fflush(stdout);
        all_pass &= pass;

        for (int p = 0; p < G; ++p) {
            CHECK(cudaSetDevice(devs[p]));
            CHECK(cudaFree(dWork[p]));
            CHECK(cudaFree(dPiv[p]));
            CHECK(cudaFree(dA[p]));
        }
        CHECK_STATUS(cusolverMgDestroyMatrixDesc(desc));
        if (pinned) CHECK(cudaHostUnregister(hA.get()));
    }
    CHECK_STATUS(cusolverMgDestroyGrid(grid));
    CHECK_STATUS(cusolverMgDestroy(h));
    return all_pass ? 0 : 1;
}
