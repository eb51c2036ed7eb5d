// cusolverMg's getrf over several GPUs of this machine: the baseline of
// `tandem-bench lu --gpus G` for G >= 2.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/baselines.hpp"

#if defined(TANDEM_HAVE_CUDA) && defined(TANDEM_HAVE_CUSOLVERMG)
#include <cusolverMg.h>

// CUDA 13 marks cusolverMg deprecated; it ships with the toolkit, and it is the
// several-GPU library tandem is measured against.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include "bench/cuda_resources.hpp"
#include "bench/timing.hpp"
#endif

namespace tandem_bench {

#if !defined(TANDEM_HAVE_CUDA) || !defined(TANDEM_HAVE_CUSOLVERMG)

std::vector<double> time_cusolvermg_sgetrf(int, int, const float*, float*, int*, int) {
    throw BaselineUnsupported("cusolverMg: not in this build");
}

#else

namespace {

// Column tiles of this width go round the GPUs (NVIDIA's cusolverMg samples use 256).
constexpr int kTileColumns = 256;

// Lets each of the GPUs read the others' memory, as cusolverMg requires; a
// pair that already may is left as it is.
void enable_peer_access(int gpus) {
    for (int d = 0; d < gpus; ++d) {
        CHECK_CUDA(cudaSetDevice(d));
        for (int peer = 0; peer < gpus; ++peer) {
            if (peer == d) continue;
            int can = 0;
            CHECK_CUDA(cudaDeviceCanAccessPeer(&can, d, peer));
            if (!can)
                throw BaselineUnsupported("cusolverMg: GPU " + std::to_string(d) +
                                          " cannot access GPU " + std::to_string(peer));
            const cudaError_t status = cudaDeviceEnablePeerAccess(peer, 0);
            if (status == cudaErrorPeerAccessAlreadyEnabled)
                (void)cudaGetLastError();  // not an error here
            else
                CHECK_CUDA(status);
        }
    }
}

// The handle, grid, descriptor and per-GPU arrays of one n x n getrf, freed
// in reverse also when making them fails midway (errors ignored: nothing
// useful can be done about them then), the caller's current GPU restored.
struct MgGetrf {
    int n, gpus, tiles, local_columns;
    int caller_device = 0;
    std::vector<int> devices;
    cusolverMgHandle_t handle = nullptr;
    cudaLibMgGrid_t grid = nullptr;
    cudaLibMgMatrixDesc_t matrix = nullptr;
    std::vector<float*> a;
    std::vector<int*> ipiv;
    std::vector<float*> work;
    int64_t work_floats = 0;

    MgGetrf(int order, int count)
        : n(order),
          gpus(count),
          tiles((order + kTileColumns - 1) / kTileColumns),
          local_columns((tiles + count - 1) / count * kTileColumns),
          a(count, nullptr),
          ipiv(count, nullptr),
          work(count, nullptr) {
        CHECK_CUDA(cudaGetDevice(&caller_device));
        try {
            create();
        } catch (...) {
            release();
            throw;
        }
    }
    ~MgGetrf() { release(); }
    MgGetrf(const MgGetrf&) = delete;
    MgGetrf& operator=(const MgGetrf&) = delete;

    void create() {
        for (int d = 0; d < gpus; ++d) devices.push_back(d);
        CHECK_CUSOLVER(cusolverMgCreate(&handle));
        CHECK_CUSOLVER(cusolverMgDeviceSelect(handle, gpus, devices.data()));
        CHECK_CUSOLVER(cusolverMgCreateDeviceGrid(&grid, 1, gpus, devices.data(),
                                                  CUDALIBMG_GRID_MAPPING_COL_MAJOR));
        CHECK_CUSOLVER(cusolverMgCreateMatrixDesc(&matrix, n, n, n, kTileColumns, CUDA_R_32F, grid));
        for (int d = 0; d < gpus; ++d) {
            CHECK_CUDA(cudaSetDevice(d));
            CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&a[d]),
                                  sizeof(float) * static_cast<size_t>(n) * local_columns));
            CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&ipiv[d]), sizeof(int) * local_columns));
        }
        CHECK_CUSOLVER(cusolverMgGetrf_bufferSize(handle, n, n, reinterpret_cast<void**>(a.data()), 1,
                                                  1, matrix, ipiv.data(), CUDA_R_32F, &work_floats));
        for (int d = 0; d < gpus; ++d) {
            CHECK_CUDA(cudaSetDevice(d));
            CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&work[d]),
                                  sizeof(float) * static_cast<size_t>(std::max<int64_t>(work_floats, 1))));
        }
    }
    void release() noexcept {
        for (int d = 0; d < gpus; ++d) {
            (void)cudaSetDevice(d);
            if (work[d]) (void)cudaFree(work[d]);
            if (ipiv[d]) (void)cudaFree(ipiv[d]);
            if (a[d]) (void)cudaFree(a[d]);
            work[d] = nullptr;
            ipiv[d] = nullptr;
            a[d] = nullptr;
        }
        if (matrix) (void)cusolverMgDestroyMatrixDesc(matrix);
        if (grid) (void)cusolverMgDestroyGrid(grid);
        if (handle) (void)cusolverMgDestroy(handle);
        matrix = nullptr;
        grid = nullptr;
        handle = nullptr;
        (void)cudaGetLastError();  // a failed free leaves nothing for the next check to report
        (void)cudaSetDevice(caller_device);
    }

    // Column tile t: its GPU, its first column there, and its width.
    int owner(int t) const { return t % gpus; }
    size_t local_column(int t) const { return static_cast<size_t>(t / gpus) * kTileColumns; }
    int width(int t) const { return std::min(kTileColumns, n - t * kTileColumns); }

    void distribute(const float* host) {
        for (int t = 0; t < tiles; ++t)
            CHECK_CUDA(cudaMemcpy(a[owner(t)] + local_column(t) * n,
                                  host + static_cast<size_t>(t) * kTileColumns * n,
                                  sizeof(float) * static_cast<size_t>(n) * width(t),
                                  cudaMemcpyHostToDevice));
    }
    void gather(float* host, int* host_ipiv) const {
        for (int t = 0; t < tiles; ++t) {
            CHECK_CUDA(cudaMemcpy(host + static_cast<size_t>(t) * kTileColumns * n,
                                  a[owner(t)] + local_column(t) * n,
                                  sizeof(float) * static_cast<size_t>(n) * width(t),
                                  cudaMemcpyDeviceToHost));
            CHECK_CUDA(cudaMemcpy(host_ipiv + static_cast<size_t>(t) * kTileColumns,
                                  ipiv[owner(t)] + local_column(t), sizeof(int) * width(t),
                                  cudaMemcpyDeviceToHost));
        }
    }
    void factor() {
        int info = 0;
        CHECK_CUSOLVER(cusolverMgGetrf(handle, n, n, reinterpret_cast<void**>(a.data()), 1, 1, matrix,
                                       ipiv.data(), CUDA_R_32F, reinterpret_cast<void**>(work.data()),
                                       work_floats, &info));
        for (int d = 0; d < gpus; ++d) {
            CHECK_CUDA(cudaSetDevice(d));
            CHECK_CUDA(cudaDeviceSynchronize());
        }
        if (info != 0) throw std::runtime_error("cusolverMgGetrf returned info = " + std::to_string(info));
    }
};

}  // namespace

std::vector<double> time_cusolvermg_sgetrf(int n, int gpus, const float* original, float* factors,
                                           int* ipiv, int repeats) {
    int available = 0;
    CHECK_CUDA(cudaGetDeviceCount(&available));
    if (gpus > available)
        throw BaselineUnsupported("cusolverMg: " + std::to_string(gpus) + " GPUs asked for, " +
                                  std::to_string(available) + " present");
    enable_peer_access(gpus);
    MgGetrf mg(n, gpus);
    std::vector<double> seconds;
    warm_up_then_time(repeats, [&](bool timed) {
        mg.distribute(original);  // the restore between runs, not timed
        const double start = wall_seconds();
        mg.factor();
        const double stop = wall_seconds();
        if (timed) seconds.push_back(stop - start);
    });
    mg.gather(factors, ipiv);
    for (int i = 0; i < n; ++i)  // global 1-based rows, as LAPACK's, or the check below would misread them
        if (ipiv[i] < 1 || ipiv[i] > n)
            throw std::runtime_error("cusolverMgGetrf: pivot " + std::to_string(i + 1) + " is " +
                                     std::to_string(ipiv[i]) + ", outside 1.." + std::to_string(n));
    return seconds;
}

#endif  // TANDEM_HAVE_CUDA && TANDEM_HAVE_CUSOLVERMG

}  // namespace tandem_bench
