// Build: nvcc -O3 -std=c++17 -arch=sm_90 -Xcompiler -fopenmp,-mavx2 tools/probes/host_copy_probe.cu -o /tmp/host_copy_probe -lgomp
// Run:   /tmp/host_copy_probe [GiB=8] [reps=3]   (~50 s at 8 GiB on 32 cores; OMP_NUM_THREADS caps the thread counts)
//
// Probe: how fast the host copies a caller's pageable column-major float matrix into pinned bounce
// buffers and back, the host half of our H2D distribution (column memcpy in an omp parallel for into
// one of two 16 MiB pinned buffers per GPU, then an async H2D). Is that memcpy the bound, and do
// non-temporal stores, more threads, larger chunks or one feeder per GPU help? GB/s count bytes once;
// each row is the median of `reps` full passes (3 by default: 5 take ~85 s at 8 GiB, mostly 1-thread rows).
#include <cuda_runtime.h>
#include <omp.h>
#ifdef __AVX2__
#include <immintrin.h>
#endif

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "probe_check.cuh"

constexpr size_t kLd = 65536;                      // floats per column: one column of n = 65536
constexpr size_t kColBytes = kLd * sizeof(float);  // 256 KiB
constexpr size_t kMiB = size_t(1) << 20;
constexpr size_t kMaxChunk = 64 * kMiB;
#ifdef __AVX2__
constexpr bool kHaveNt = true;
#else
constexpr bool kHaveNt = false;  // the NT rows are skipped rather than silently measuring memcpy
#endif

static double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Non-temporal stores write whole lines without first reading them for ownership (a plain copy
// moves 3 bytes over the memory bus per byte copied, this one 2) and do not evict the source.
static void copy_column(float* dst, const float* src, bool nt) {
#ifdef __AVX2__
    if (nt) {  // dst is 32-byte aligned: pinned buffers are page-aligned, the matrix 64-byte aligned
        for (size_t i = 0; i < kLd; i += 8) _mm256_stream_ps(dst + i, _mm256_loadu_ps(src + i));
        _mm_sfence();  // streamed stores must be globally visible before the buffer goes to DMA
        return;
    }
#endif
    std::memcpy(dst, src, kColBytes);
}

// Columns [c, c + nc) of mat to or from buf, the library's loop: one column per iteration.
static void copy_chunk(float* buf, float* mat, size_t c, size_t nc, int threads, bool nt, bool to_pinned) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (long j = 0; j < long(nc); ++j) {
        float* col = mat + (c + j) * kLd;
        if (to_pinned) copy_column(buf + j * kLd, col, nt);
        else copy_column(col, buf + j * kLd, nt);
    }
}

// One pass over columns [c0, c1) in chunks of cc columns, alternating the two bounce buffers.
static void pass(float* mat, size_t c0, size_t c1, float* const* buf, size_t cc, int threads, bool nt,
                 bool to_pinned) {
    for (size_t k = 0, c = c0; c < c1; ++k, c += cc)
        copy_chunk(buf[k % 2], mat, c, std::min(cc, c1 - c), threads, nt, to_pinned);
}

template <class F>
static double median_seconds(int reps, F&& f) {
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
        const double t0 = now();
        f();
        t.push_back(now() - t0);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

static void report(const char* src, const char* what, bool nt, size_t chunk, int threads, int feeders,
                   size_t bytes, double s) {
    std::printf("src=%-8s %-17s store=%-5s chunk=%2zuMiB threads=%2d feeders=%d %7.1f GB/s  (median %.3f s)\n",
                src, what, nt ? "nt" : "plain", chunk / kMiB, threads, feeders, bytes / s * 1e-9, s);
    std::fflush(stdout);
}

// The full path on g GPUs at once: one host thread per GPU with maxt/g OpenMP threads copies its half
// chunk by chunk into buffer k%2 and queues the H2D; before reusing a buffer it waits on the event
// recorded after that buffer's last H2D. "dma-only" skips the host copy: the copy engines' ceiling.
static void pipeline(float* mat, size_t cols, int gpus, float* bufs[2][2], int reps, int maxt) {
    const size_t cc = 16 * kMiB / kColBytes;
    struct Gpu { cudaStream_t s; cudaEvent_t ev[2]; float* dev; };
    std::vector<Gpu> gpu(gpus);
    for (int d = 0; d < gpus; ++d) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaStreamCreateWithFlags(&gpu[d].s, cudaStreamNonBlocking));
        for (auto& e : gpu[d].ev) CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        CHECK(cudaMalloc(&gpu[d].dev, 2 * cc * kColBytes));  // where the data lands does not matter to DMA
    }
    for (int g = 1; g <= gpus; ++g)
        for (int mode = 0; mode < 3; ++mode) {  // plain, nt, dma-only
            if (mode == 1 && !kHaveNt) continue;
            const int threads = maxt / g;
            auto feed = [&](int d, size_t c0, size_t c1) {
                CHECK(cudaSetDevice(d));
                for (size_t k = 0, c = c0; c < c1; ++k, c += cc) {
                    const size_t nc = std::min(cc, c1 - c);
                    if (k >= 2) CHECK(cudaEventSynchronize(gpu[d].ev[k % 2]));
                    if (mode < 2) copy_chunk(bufs[d][k % 2], mat, c, nc, threads, mode == 1, true);
                    CHECK(cudaMemcpyAsync(gpu[d].dev + (k % 2) * cc * kLd, bufs[d][k % 2], nc * kColBytes,
                                          cudaMemcpyHostToDevice, gpu[d].s));
                    CHECK(cudaEventRecord(gpu[d].ev[k % 2], gpu[d].s));
                }
                CHECK(cudaStreamSynchronize(gpu[d].s));
            };
            const double s = median_seconds(reps, [&] {
                std::vector<std::thread> feeders;
                for (int d = 0; d < g; ++d) feeders.emplace_back(feed, d, cols * d / g, cols * (d + 1) / g);
                for (auto& f : feeders) f.join();
            });
            char what[32];
            std::snprintf(what, sizeof what, "pipeline-%dgpu%s", g, mode == 2 ? "-dma" : "");
            report("parallel", what, mode == 1, 16 * kMiB, mode == 2 ? 0 : threads, g, cols * kColBytes, s);
        }
    for (auto& x : gpu) {
        CHECK(cudaFree(x.dev));
        for (auto& e : x.ev) CHECK(cudaEventDestroy(e));
        CHECK(cudaStreamDestroy(x.s));
    }
}

int main(int argc, char** argv) {
    const double t_start = now();
    const double gib = argc > 1 ? std::atof(argv[1]) : 8.0;
    const int reps = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
    const size_t cols = std::max<size_t>(1, size_t(gib * double(1u << 30)) / kColBytes);  // whole columns
    const size_t bytes = cols * kColBytes;
    const int maxt = omp_get_max_threads();
    std::vector<int> tcounts;  // 1, 4, 8, 16, 32, capped at maxt
    for (int t : {1, 4, 8, 16, 32})
        if (tcounts.empty() || tcounts.back() != std::min(t, maxt)) tcounts.push_back(std::min(t, maxt));

    std::string model = "unknown", line;
    for (std::ifstream in("/proc/cpuinfo"); std::getline(in, line);)
        if (line.rfind("model name", 0) == 0) { model = line.substr(line.find(':') + 2); break; }
    int nodes = 0;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/sys/devices/system/node", ec)) {
        const std::string n = e.path().filename().string();
        nodes += n.size() > 4 && n.rfind("node", 0) == 0 && std::isdigit(static_cast<unsigned char>(n[4]));
    }
    std::printf("cpu: %s; omp_get_max_threads %d; hardware_concurrency %u; NUMA nodes %d\n", model.c_str(),
                maxt, std::thread::hardware_concurrency(), nodes);
    std::printf("matrix %.2f GiB (%zu columns of %zu floats), %d reps, AVX2 non-temporal %s\n",
                bytes / double(1u << 30), cols, kLd, reps, kHaveNt ? "yes" : "no (nt rows skipped)");

    int gpus = 0;
    if (cudaError_t e = cudaGetDeviceCount(&gpus); e != cudaSuccess) {  // no driver/GPU is not an error here
        std::printf("cudaGetDeviceCount: %s\n", cudaGetErrorString(e));
        gpus = 0;
    }
    gpus = std::min(gpus, 2);
    // Two feeders x two bounce buffers of the largest chunk. Without a GPU cudaHostAlloc is not available;
    // plain resident memory is the same to the CPU (pinned memory is ordinary write-back memory).
    float* bufs[2][2];
    for (auto& pair : bufs)
        for (auto& b : pair) {
            if (gpus > 0) CHECK(cudaHostAlloc(&b, kMaxChunk, cudaHostAllocPortable));
            else b = static_cast<float*>(std::aligned_alloc(4096, kMaxChunk));
            if (!b) { std::printf("allocation failed\n"); return 1; }
            std::memset(b, 0, kMaxChunk);
        }
    std::printf("bounce buffers: %s\n", gpus > 0 ? "cudaHostAlloc (portable)" : "aligned_alloc (no GPU)");
    std::fflush(stdout);

    // One matrix at a time (memory stays at one matrix): first touched by one thread, as a caller that
    // fills its matrix serially (all pages on one NUMA node), then touched by all threads (pages spread).
    for (int par = 0; par < 2; ++par) {
        const char* src = par ? "parallel" : "one-thr";
        float* mat = static_cast<float*>(std::aligned_alloc(64, bytes));
        if (!mat) { std::printf("allocation of %zu bytes failed\n", bytes); return 1; }
        const long n = long(cols * kLd);
        double t0 = now();
#pragma omp parallel for schedule(static) num_threads(par ? maxt : 1)
        for (long i = 0; i < n; ++i) mat[i] = 1.0f + float(i & 1023);
        std::printf("src=%-8s first touch (page faults + write): %.2f s, %.1f GB/s\n", src, now() - t0,
                    bytes / (now() - t0) * 1e-9);

        // pageable -> pinned, the library's direction: chunk size and store type (64 MiB: parallel only)
        for (int nt = 0; nt <= int(kHaveNt); ++nt)
            for (size_t chunk : {16 * kMiB, 64 * kMiB}) {
                if (!par && chunk != 16 * kMiB) continue;
                for (int t : tcounts)
                    report(src, "pageable->pinned", nt, chunk, t, 1, bytes, median_seconds(reps, [&] {
                               pass(mat, 0, cols, bufs[0], chunk / kColBytes, t, nt, true);
                           }));
            }
        if (par) {
            // pinned -> pageable, the scatter of gathered pieces. The pinned source stays in cache here;
            // after a real D2H it may not be, so this is an upper bound.
            for (int nt = 0; nt <= int(kHaveNt); ++nt)
                for (int t : tcounts)
                    report(src, "pinned->pageable", nt, 16 * kMiB, t, 1, bytes, median_seconds(reps, [&] {
                               pass(mat, 0, cols, bufs[0], 16 * kMiB / kColBytes, t, nt, false);
                           }));
            // two feeders (one per GPU) on the two halves with half the threads each: does the host
            // deliver more in aggregate than one feeder with all the threads?
            for (int nt = 0; nt <= int(kHaveNt); ++nt)
                for (int t : tcounts) {
                    if (t < 2) continue;
                    report(src, "pageable->pinned", nt, 16 * kMiB, t, 2, bytes, median_seconds(reps, [&] {
                               std::thread a(pass, mat, 0, cols / 2, bufs[0], 16 * kMiB / kColBytes, t / 2, nt, true);
                               std::thread b(pass, mat, cols / 2, cols, bufs[1], 16 * kMiB / kColBytes, t - t / 2,
                                             nt, true);
                               a.join();
                               b.join();
                           }));
                }
            if (gpus > 0) pipeline(mat, cols, gpus, bufs, reps, maxt);
            else std::printf("no GPU: pipeline skipped\n");
        }
        std::free(mat);
    }
    for (auto& pair : bufs)
        for (auto& b : pair) {
            if (gpus > 0) CHECK(cudaFreeHost(b));
            else std::free(b);
        }
    std::printf("total %.1f s\n", now() - t_start);
    return 0;
}
