// What bounds moving a matrix between the caller's pageable memory and the GPU:
// each stage of the bounce-buffer path timed alone, in GB/s (medians of 5).
//   dma h2d / d2h      the copy engine between pinned memory and the device
//   host in            pageable -> pinned, whole columns (an upload's host side)
//   host out R         pinned -> pageable, R rows of each column (a gather's
//                      host side: R = the rows a step makes final), non-temporal
//                      stores or memcpy, over T OpenMP threads; also right
//                      after the copy engine wrote the source, as a collector's piece
//   pageable h2d/d2h   cudaMemcpy on pageable memory (the driver's own staging)
//   dma 2-D, host transposed   the copy engine and the host's side of a path
//                      that would transpose on the host instead of in a kernel
//                      (32 x 32 tiles: 10-12 GB/s, far too slow to pay)
//   pipeline           an upload's stages in the probe's own ring (8 pinned
//                      slots, as the library's): host stores plain or
//                      non-temporal, T threads, the transposing kernel left
//                      out, on the copy queue, or on a queue of its own with
//                      a device staging buffer per slot
//   contention         the copy engine and the host's copy at once, on
//                      separate memory
//   device upload / gather   tandem's own Device::upload of a block column and
//                      Device::download of a row piece (the factorization's
//                      shapes), every stage together, on the copy queue; four
//                      block columns in one call and in four; the upload also
//                      from a thread of its own (with its own OpenMP team
//                      beside the main thread's)
//   copy_matrix        the four block columns into a column-major array of
//                      the device (the refined solve's upload of A)
// The host matrix is n x n (--n, default 16384) and was written before the
// measurement, as a caller's would be. Built with the CUDA backend as
// build/bench/tandem-host-transfers.
#include <cuda_runtime.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gpu/cuda_device.hpp"
#include "gpu/transpose.hpp"
#include "probe_check.hpp"
#include "scheduler/streaming_copy.hpp"

namespace {

// The median of 5 timed runs after a warm-up, `prepare` untimed before each.
double median_seconds_after(const std::function<void()>& prepare, const std::function<void()>& run) {
    prepare();
    run();  // warm-up: first touches, the driver's first use of a buffer
    std::vector<double> t;
    for (int i = 0; i < 5; ++i) {
        prepare();
        const auto start = std::chrono::steady_clock::now();
        run();
        t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(t.begin(), t.end());
    return t[2];
}

double median_seconds(const std::function<void()>& run) { return median_seconds_after([] {}, run); }

void report(const std::string& what, double bytes, double seconds) {
    std::printf("%-44s %8.2f ms %7.1f GB/s\n", what.c_str(), seconds * 1e3, bytes / seconds * 1e-9);
}

}  // namespace

int main(int argc, char** argv) {
    int64_t n = 16384;
    for (int i = 1; i + 1 < argc; ++i)
        if (std::string(argv[i]) == "--n") n = std::atoll(argv[i + 1]);
    if (n < 4096 || n % 1024 != 0) {  // whole block columns, and 16 MiB chunks of whole columns
        std::fprintf(stderr, "--n must be a multiple of 1024, at least 4096\n");
        return 2;
    }
    const int64_t block_cols = 1024;                 // a block column of the LU
    // Each stage timed alone on 16 MiB (the library's chunks are 1-4 MiB, its
    // whole pieces up to 16 MiB: "device upload / gather" below).
    const int64_t chunk = int64_t(4) << 20;
    const int64_t chunk_cols = chunk / n;
    const double chunk_bytes = double(chunk) * sizeof(float);
    std::printf("n = %lld, chunks of %lld columns (%.0f MiB), OpenMP threads %d\n", (long long)n,
                (long long)chunk_cols, chunk_bytes / (1 << 20), omp_get_max_threads());

    std::vector<float> a(size_t(n) * n);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n * n; ++i) a[size_t(i)] = float(i % 1000) * 1e-3f;
    float *pinned = nullptr, *device = nullptr;
    // The 2-D and transposing stages below move w columns of n rows.
    const int64_t w = 256;
    CHECK(cudaMallocHost(reinterpret_cast<void**>(&pinned), std::max(chunk, n * w) * sizeof(float)));
    CHECK(cudaMalloc(reinterpret_cast<void**>(&device), size_t(n) * block_cols * sizeof(float)));
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

    report("dma h2d pinned, 16 MiB", chunk_bytes, median_seconds([&] {
               CHECK(cudaMemcpyAsync(device, pinned, chunk * sizeof(float), cudaMemcpyHostToDevice, stream));
               CHECK(cudaStreamSynchronize(stream));
           }));
    report("dma d2h pinned, 16 MiB", chunk_bytes, median_seconds([&] {
               CHECK(cudaMemcpyAsync(pinned, device, chunk * sizeof(float), cudaMemcpyDeviceToHost, stream));
               CHECK(cudaStreamSynchronize(stream));
           }));
    const double block_bytes = double(n) * block_cols * sizeof(float);
    report("pageable h2d, one block column", block_bytes, median_seconds([&] {
               CHECK(cudaMemcpyAsync(device, a.data(), size_t(block_bytes), cudaMemcpyHostToDevice, stream));
               CHECK(cudaStreamSynchronize(stream));
           }));
    report("pageable d2h, one block column", block_bytes, median_seconds([&] {
               CHECK(cudaMemcpyAsync(a.data(), device, size_t(block_bytes), cudaMemcpyDeviceToHost, stream));
               CHECK(cudaStreamSynchronize(stream));
           }));

    // The copy engine on the device's row-major storage: 1 KiB (256 floats) of
    // each of n rows whose pitch is a block column's, the shape of a chunk
    // that was transposed on the host instead of by a kernel.
    const double rows_bytes = double(n) * w * sizeof(float);
    report("dma h2d 2-D, 1 KiB of each row", rows_bytes, median_seconds([&] {
               CHECK(cudaMemcpy2DAsync(device, block_cols * sizeof(float), pinned, w * sizeof(float),
                                       w * sizeof(float), n, cudaMemcpyHostToDevice, stream));
               CHECK(cudaStreamSynchronize(stream));
           }));
    report("dma d2h 2-D, 1 KiB of each row", rows_bytes, median_seconds([&] {
               CHECK(cudaMemcpy2DAsync(pinned, w * sizeof(float), device, block_cols * sizeof(float),
                                       w * sizeof(float), n, cudaMemcpyDeviceToHost, stream));
               CHECK(cudaStreamSynchronize(stream));
           }));

    const int most = omp_get_max_threads();
    for (int threads : {most, std::max(1, most / 2)}) {
        // An upload's host side transposing: w columns of A (column-major) into
        // the pinned chunk as n rows of w (row-major), in 32 x 32 tiles.
        int64_t next = 0;
        report("host in, transposed, T=" + std::to_string(threads), rows_bytes, median_seconds([&] {
                   const float* from = a.data() + (next++ % (n / w)) * w * n;
#pragma omp parallel for schedule(static) num_threads(threads)
                   for (int64_t r0 = 0; r0 < n; r0 += 32)
                       for (int64_t c0 = 0; c0 < w; c0 += 32)
                           for (int64_t c = c0; c < c0 + 32; ++c)
                               for (int64_t r = r0; r < std::min(n, r0 + 32); ++r)
                                   pinned[r * w + c] = from[c * n + r];
               }));
        // A gather's host side transposing: n rows of w (row-major, pinned) into
        // w columns of A.
        report("host out, transposed, T=" + std::to_string(threads), rows_bytes, median_seconds([&] {
                   float* to = a.data() + (next++ % (n / w)) * w * n;
#pragma omp parallel for collapse(2) schedule(static) num_threads(threads)
                   for (int64_t c0 = 0; c0 < w; c0 += 32)
                       for (int64_t r0 = 0; r0 < n; r0 += 32)
                           for (int64_t r = r0; r < std::min(n, r0 + 32); ++r)
                               for (int64_t c = c0; c < c0 + 32; ++c)
                                   to[c * n + r] = pinned[r * w + c];
               }));
    }
    for (int threads : {most, std::max(1, most / 2), std::max(1, most / 4)}) {
        // An upload's host side: whole columns of A into the pinned chunk, the
        // block columns in turn (a fresh part of A each time, as in a factorization).
        int64_t next = 0;
        report("host in, pageable -> pinned, T=" + std::to_string(threads), chunk_bytes, median_seconds([&] {
                   const float* from = a.data() + (next++ % (n / chunk_cols)) * chunk_cols * n;
#pragma omp parallel for schedule(static) num_threads(threads)
                   for (int64_t j = 0; j < chunk_cols; ++j)
                       std::memcpy(pinned + j * n, from + j * n, sizeof(float) * n);
               }));
        for (int64_t rows : {int64_t(256), int64_t(1024), n}) {
            const int64_t cols = std::min<int64_t>(n, chunk / rows);
            const double bytes = double(rows) * cols * sizeof(float);
            int64_t piece = 0;
            // Rows [r0, r0 + rows) of `cols` columns: a row piece of A.
            const auto place_piece = [&](bool streaming) {
                const int64_t r0 = (piece++ * rows) % (n - rows + 1);
                float* to = a.data() + r0;
#pragma omp parallel for schedule(static) num_threads(threads)
                for (int64_t j = 0; j < cols; ++j) {
                    if (streaming)
                        tandem::copy_floats_streaming(to + j * n, pinned + j * rows, rows);
                    else
                        std::memcpy(to + j * n, pinned + j * rows, sizeof(float) * rows);
                }
            };
            for (bool streaming : {true, false})
                report("host out, " + std::to_string(rows) + " rows, " + (streaming ? "nt" : "memcpy") +
                           ", T=" + std::to_string(threads),
                       bytes, median_seconds([&] { place_piece(streaming); }));
            // As the several-GPU collector places a piece: the copy engine has
            // just written the pinned source (untimed). Its writes land in the
            // host's cache: 130 GB/s on 32 threads against 101 above on a
            // four-H200 host, where sources read from memory gave 60
            // (docs/PERFORMANCE.md, "The gather's tail").
            report("host out, " + std::to_string(rows) + " rows, nt, from the copy engine, T=" +
                       std::to_string(threads),
                   bytes, median_seconds_after(
                              [&] {
                                  CHECK(cudaMemcpyAsync(pinned, device, chunk * sizeof(float),
                                                        cudaMemcpyDeviceToHost, stream));
                                  CHECK(cudaStreamSynchronize(stream));
                              },
                              [&] { place_piece(true); }));
        }
    }
    // An upload's pipeline, its parts weighed one at a time: a block column
    // (n x block_cols) in chunks of `cols` columns through 8 pinned slots.
    {
        constexpr int kSlots = 8;
        float *ring = nullptr, *staging = nullptr, *combined = nullptr;
        CHECK(cudaMallocHost(reinterpret_cast<void**>(&ring), kSlots * chunk * sizeof(float)));
        CHECK(cudaHostAlloc(reinterpret_cast<void**>(&combined), kSlots * chunk * sizeof(float),
                            cudaHostAllocWriteCombined));
        CHECK(cudaMalloc(reinterpret_cast<void**>(&staging), kSlots * chunk * sizeof(float)));
        cudaStream_t side;
        CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
        cudaEvent_t released[kSlots], copied[kSlots], transposed[kSlots];
        for (int s = 0; s < kSlots; ++s) {
            CHECK(cudaEventCreateWithFlags(&released[s], cudaEventDisableTiming));
            CHECK(cudaEventCreateWithFlags(&copied[s], cudaEventDisableTiming));
            CHECK(cudaEventCreateWithFlags(&transposed[s], cudaEventDisableTiming));
            CHECK(cudaEventRecord(released[s], stream));
            CHECK(cudaEventRecord(transposed[s], side));
        }
        enum class Transposes { none, same_queue, own_queue };
        int64_t next = 0;
        float* slots_memory = ring;
        auto upload = [&](bool nt, int threads, Transposes where, int64_t cols) {
            const float* from = a.data() + (next++ % (n / block_cols)) * block_cols * n;
            for (int64_t j = 0, i = 0; j < block_cols; j += cols, ++i) {
                cols = std::min(cols, block_cols - j);
                const int s = int(i % kSlots);
                float* slot = slots_memory + s * chunk;
                float* stage = staging + (where == Transposes::own_queue ? s * chunk : 0);
                CHECK(cudaEventSynchronize(released[s]));
#pragma omp parallel for schedule(static) num_threads(threads)
                for (int64_t c = 0; c < cols; ++c) {
                    if (nt)
                        tandem::copy_floats_streaming(slot + c * n, from + (j + c) * n, n);
                    else
                        std::memcpy(slot + c * n, from + (j + c) * n, sizeof(float) * n);
                }
                if (where == Transposes::own_queue) CHECK(cudaStreamWaitEvent(stream, transposed[s]));
                CHECK(cudaMemcpyAsync(stage, slot, sizeof(float) * n * cols, cudaMemcpyHostToDevice, stream));
                CHECK(cudaEventRecord(released[s], stream));
                if (where == Transposes::same_queue) {
                    tandem::gpu::transpose(stage, n, n, cols, device + j, block_cols, stream);
                } else if (where == Transposes::own_queue) {
                    CHECK(cudaEventRecord(copied[s], stream));
                    CHECK(cudaStreamWaitEvent(side, copied[s]));
                    tandem::gpu::transpose(stage, n, n, cols, device + j, block_cols, side);
                    CHECK(cudaEventRecord(transposed[s], side));
                }
            }
            CHECK(cudaStreamSynchronize(stream));
            CHECK(cudaStreamSynchronize(side));
        };
        const char* names[] = {"no transposes", "transposes on the copy queue", "transposes on their own queue"};
        for (int64_t cols : {chunk_cols / 4, chunk_cols / 16})
            for (int threads : {most, std::max(1, most / 2)})
                for (bool nt : {false, true})
                    for (Transposes where : {Transposes::none, Transposes::same_queue, Transposes::own_queue})
                        report("pipeline " + std::to_string(cols * n * 4 >> 20) + " MiB, T=" +
                                   std::to_string(threads) + (nt ? ", nt, " : ", plain, ") +
                                   names[int(where)],
                               block_bytes, median_seconds([&] { upload(nt, threads, where, cols); }));
        slots_memory = combined;
        for (int threads : {most, std::max(1, most / 2)})
            for (bool nt : {false, true})
                report("pipeline 4 MiB, write-combined slots, T=" + std::to_string(threads) +
                           (nt ? ", nt, " : ", plain, ") + names[int(Transposes::own_queue)],
                       block_bytes, median_seconds([&] { upload(nt, threads, Transposes::own_queue, chunk_cols / 4); }));
        slots_memory = ring;
        // The copy engine and the host's copies at the same time on separate
        // memory: does either slow the other?
        std::vector<float> scratch(size_t(n) * block_cols);
        auto dma_block = [&] {
            for (int64_t i = 0; i < block_cols / chunk_cols * 4; ++i)
                CHECK(cudaMemcpyAsync(device + (i % kSlots) * (chunk / 4), ring + (i % kSlots) * (chunk / 4),
                                      sizeof(float) * chunk / 4, cudaMemcpyHostToDevice, stream));
        };
        auto host_block = [&](int threads) {
            const float* from = a.data() + (next++ % (n / block_cols)) * block_cols * n;
#pragma omp parallel for schedule(static) num_threads(threads)
            for (int64_t c = 0; c < block_cols; ++c)
                std::memcpy(scratch.data() + c * n, from + c * n, sizeof(float) * n);
        };
        report("contention: dma alone, 16 x 4 MiB", block_bytes, median_seconds([&] {
                   dma_block();
                   CHECK(cudaStreamSynchronize(stream));
               }));
        for (int threads : {most, std::max(1, most / 2)}) {
            report("contention: host alone, T=" + std::to_string(threads), block_bytes,
                   median_seconds([&] { host_block(threads); }));
            double host_seconds = 0;
            const double both = median_seconds([&] {
                dma_block();
                const auto start = std::chrono::steady_clock::now();
                host_block(threads);
                host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
                CHECK(cudaStreamSynchronize(stream));
            });
            report("contention: dma + host together, T=" + std::to_string(threads), 2 * block_bytes, both);
            report("contention:   of which the host's copy (last)", block_bytes, host_seconds);
        }
        for (int s = 0; s < kSlots; ++s) {
            CHECK(cudaEventDestroy(released[s]));
            CHECK(cudaEventDestroy(copied[s]));
            CHECK(cudaEventDestroy(transposed[s]));
        }
        CHECK(cudaStreamDestroy(side));
        CHECK(cudaFree(staging));
        CHECK(cudaFreeHost(ring));
        CHECK(cudaFreeHost(combined));
    }
    // What a parallel region costs when its threads have slept (the host
    // waited on the device in between, as a gather's drains do).
    {
        std::vector<double> t;
        for (int i = 0; i < 21; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            const auto start = std::chrono::steady_clock::now();
#pragma omp parallel
            { (void)omp_get_thread_num(); }
            t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        }
        std::sort(t.begin(), t.end());
        std::printf("%-44s %8.3f ms\n", "empty parallel region after 2 ms asleep", t[10] * 1e3);
    }
    // The library's own path: every stage at once.
    {
        std::unique_ptr<tandem::gpu::CudaDevice> dev = tandem::gpu::make_cuda_device(0);
        dev->allocate(n, 4 * block_cols, 1024);
        int64_t next = 0;
        report("device upload, a block column", block_bytes, median_seconds([&] {
                   const int64_t b = next++ % 4;
                   dev->upload(tandem::Queue::copy, a.data() + b * block_cols * n, n, 0, b * block_cols,
                               n, block_cols);
                   dev->synchronize();
               }));
        // Four block columns: in one call (four times what the staging buffer
        // holds, so a transposing kernel a chunk), and in four calls with one
        // wait (each block transposed once, after its last chunk); and the same
        // columns into a column-major array of the device (Device::copy_matrix:
        // no staging, no transposing kernel), as sgesv_refined moves A.
        const double four_bytes = 4 * block_bytes;
        report("device upload, 4 block columns in one call", four_bytes, median_seconds([&] {
                   dev->upload(tandem::Queue::copy, a.data(), n, 0, 0, n, 4 * block_cols);
                   dev->synchronize();
               }));
        report("device upload, 4 block columns, 4 calls", four_bytes, median_seconds([&] {
                   for (int64_t b = 0; b < 4; ++b)
                       dev->upload(tandem::Queue::copy, a.data() + b * block_cols * n, n, 0,
                                   b * block_cols, n, block_cols);
                   dev->synchronize();
               }));
        {
            float* columns = dev->allocate_matrix(n * 4 * block_cols);
            report("copy_matrix, 4 block columns (column-major)", four_bytes, median_seconds([&] {
                       dev->copy_matrix(n, 4 * block_cols, a.data(), n, columns, n);
                   }));
            dev->free_matrix(columns);
        }
        // The same from a thread of its own, as an upload thread would: each
        // block column in turn, timed one by one (the first pays for the
        // thread's OpenMP team).
        for (int threads : {most, std::max(1, most / 2)}) {
            std::vector<double> t;
            std::thread feeder([&] {
                omp_set_num_threads(threads);
                for (int64_t b = 0; b < 4; ++b) {
                    const auto start = std::chrono::steady_clock::now();
                    dev->upload(tandem::Queue::copy, a.data() + b * block_cols * n, n, 0, b * block_cols, n,
                                block_cols);
                    dev->synchronize();
                    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
                }
            });
            feeder.join();
            for (size_t b = 0; b < t.size(); ++b)
                report("device upload on a new thread, T=" + std::to_string(threads) + ", block " + std::to_string(b),
                       block_bytes, t[b]);
        }
        for (int64_t rows : {int64_t(256), int64_t(1024)}) {
            const int64_t cols = std::min<int64_t>(4 * block_cols, chunk / rows);
            report("device gather, " + std::to_string(rows) + " rows x " + std::to_string(cols) + " columns",
                   double(rows) * cols * sizeof(float), median_seconds([&] {
                       const int64_t r0 = (next++ * rows) % (n - rows + 1);
                       dev->download(tandem::Queue::copy, a.data() + r0, n, r0, 0, rows, cols);
                       dev->synchronize();
                   }));
        }
    }
    CHECK(cudaStreamDestroy(stream));
    CHECK(cudaFree(device));
    CHECK(cudaFreeHost(pinned));
    return 0;
}
