// The CUDA device's data movement, against plain host reference loops:
// transposing uploads and downloads, row interchanges (laswp), events and
// queues, contract and memory errors, the caller's current device. Skips when
// no CUDA device is usable. Outputs are poisoned with NaN before each call.
// The arithmetic (U12, A22, solve) is in test_gpu_device_math.cpp.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "gpu/bounce_buffers.hpp"
#include "gpu/panel_leaf.hpp"
#include "gpu/recursive_panel.hpp"
#include "gpu/swap_rows.hpp"
#include "gpu/transfer.hpp"
#include "scheduler/gpu_backend.hpp"
#include "tests/gpu_device_fixture.hpp"

namespace tandem::test {
namespace {

// The OpenMP threads of the calling thread's parallel regions, for a scope.
struct ThreadsOfThisThread {
    explicit ThreadsOfThisThread(int threads) : saved(omp_get_max_threads()) { omp_set_num_threads(threads); }
    ~ThreadsOfThisThread() { omp_set_num_threads(saved); }
    int saved;
};

TEST_F(GpuDevice, UploadDownloadRoundTripsOddShapesAtOffsets) {
    SCOPED_TRACE(seed_note());
    struct Shape { int64_t rows, cols, r0, c0; };
    for (const Shape s : {Shape{1, 1, 0, 0}, Shape{7, 3, 2, 5}, Shape{33, 65, 1, 3},
                          Shape{1000, 129, 17, 40}}) {
        SCOPED_TRACE(std::to_string(s.rows) + " x " + std::to_string(s.cols));
        const int64_t m = s.r0 + s.rows + 3, n = s.c0 + s.cols + 2;
        device_->allocate(m, n, 8);
        // Background through pinned memory on the compute queue, the block through
        // pageable memory on the transfer queue, ordered by events.
        float* pinned = device_->host_alloc(m * n);
        const Vec background = random(m * n);
        std::copy(background.begin(), background.end(), pinned);
        device_->upload(Queue::compute, pinned, m, 0, 0, m, n);
        device_->wait(Queue::transfer, device_->record(Queue::compute));
        const int64_t ldb = s.rows + 5;
        const Vec block = random(ldb * s.cols);
        device_->upload(Queue::transfer, block.data(), ldb, s.r0, s.c0, s.rows, s.cols);
        device_->wait(Queue::compute, device_->record(Queue::transfer));

        const int64_t ldw = m + 2;  // whole storage, with poisoned padding rows
        Vec whole(static_cast<size_t>(ldw * n), kNaN);
        device_->download(Queue::compute, whole.data(), ldw, 0, 0, m, n);
        device_->synchronize();  // before the pinned buffer is reused
        const int64_t ldp = s.rows + 3;  // the block alone, into pinned memory
        std::fill(pinned, pinned + ldp * s.cols, kNaN);
        device_->download(Queue::transfer, pinned, ldp, s.r0, s.c0, s.rows, s.cols);
        device_->synchronize();

        int64_t wrong = 0;
        for (int64_t j = 0; j < n; ++j)
            for (int64_t i = 0; i < ldw; ++i) {
                const bool in_block = i >= s.r0 && i < s.r0 + s.rows && j >= s.c0 &&
                                      j < s.c0 + s.cols;
                const float got = whole[i + j * ldw];
                if (i >= m) wrong += !std::isnan(got);
                else if (in_block) wrong += got != block[(i - s.r0) + (j - s.c0) * ldb];
                else wrong += got != background[i + j * m];
            }
        for (int64_t j = 0; j < s.cols; ++j)
            for (int64_t i = 0; i < ldp; ++i)
                wrong += i < s.rows ? pinned[i + j * ldp] != block[i + j * ldb]
                                    : !std::isnan(pinned[i + j * ldp]);
        device_->host_free(pinned);
        EXPECT_EQ(wrong, 0);
    }
}

// Large blocks go in column chunks; pageable ones also through the pinned
// bounce buffers, which the host and the copy engine use in turn, the host's
// side by the calling thread's team in pieces of 256 KiB (columns, or parts
// of a column taller than that), or by the calling thread alone.
TEST_F(GpuDevice, UploadDownloadInChunksPageableAndPinned) {
    SCOPED_TRACE(seed_note());
    struct Shape { int64_t rows, cols; };
    const int threads = omp_get_max_threads();
    for (const Shape s : {Shape{3, 400000}, Shape{4000, 3000}, Shape{150001, 41}})
        for (const int team : {threads, 1})
            for (const bool pinned : {false, true}) {
                SCOPED_TRACE(std::to_string(s.rows) + " x " + std::to_string(s.cols) +
                             (pinned ? " pinned" : " pageable") + ", " + std::to_string(team) + " threads");
                const ThreadsOfThisThread scoped(team);
                device_->allocate(s.rows, s.cols, 8);
                const int64_t ld = s.rows + 3, count = ld * s.cols;
                Vec pageable(pinned ? 0 : count);
                float* host = pinned ? device_->host_alloc(count) : pageable.data();
                const Vec a = random(count);
                std::copy(a.begin(), a.end(), host);
                device_->upload(Queue::transfer, host, ld, 0, 0, s.rows, s.cols);
                device_->synchronize();
                std::fill(host, host + count, kNaN);
                device_->download(Queue::transfer, host, ld, 0, 0, s.rows, s.cols);
                device_->synchronize();
                int64_t wrong = 0;
                for (int64_t j = 0; j < s.cols; ++j)
                    for (int64_t i = 0; i < ld; ++i)
                        wrong += i < s.rows ? host[i + j * ld] != a[i + j * ld]
                                            : !std::isnan(host[i + j * ld]);
                if (pinned) device_->host_free(host);
                EXPECT_EQ(wrong, 0);
            }
}

// Panels beside a tensor-core update take leaves of at most four or eight
// blocks (LeafClusterCap, CudaDevice::PanelShare): on the calling thread
// only while the cap lives, never wider than a cap or limit already in
// force, and taller panels than such leaves reach go to cuSOLVER. Where the
// device runs clusters of 16 (Hopper), a 16384-row leaf is 32 columns on 16
// blocks, under a cap of 4 8 columns on 4 (16384 rows, the most four blocks
// hold), under a cap of 8 16 columns on 8 (which reach 32768 rows).
TEST(GpuLeaves, ClusterCapNarrowsLeavesOnItsThreadWhileItLives) {
    if (gpu::device_count() == 0) GTEST_SKIP() << "no usable CUDA device: " << gpu::unavailable_reason();
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    if (gpu::leaf_width_for(16384) != 32) GTEST_SKIP() << "this GPU schedules no 16-block cluster";
    {
        gpu::LeafClusterCap cap(4);
        EXPECT_EQ(gpu::leaf_width_for(16384), 8);
        EXPECT_EQ(gpu::leaf_width_for(4096), 32);
        EXPECT_FALSE(gpu::recursive_panel_fits(16385));
        int other_thread = 0;
        std::thread([&] {
            if (cudaSetDevice(0) == cudaSuccess) other_thread = gpu::leaf_width_for(16384);
        }).join();
        EXPECT_EQ(other_thread, 32);
        gpu::LeafClusterCap wider(8);
        EXPECT_EQ(gpu::leaf_width_for(16384), 8);
    }
    {
        gpu::LeafClusterCap cap(8);
        EXPECT_EQ(gpu::leaf_width_for(16384), 16);
        EXPECT_TRUE(gpu::recursive_panel_fits(32768));
        EXPECT_FALSE(gpu::recursive_panel_fits(32769));
    }
    EXPECT_EQ(gpu::leaf_width_for(16384), 32);
    EXPECT_TRUE(gpu::recursive_panel_fits(16385));
}

// Pageable copies through the bounce buffers' ring, one right after another,
// on a stream held up by a host function before each, so that the copy engine
// reads nothing of a copy until the host has issued all of it: a copy of more
// chunks than the ring has slots must wait for its own earlier chunks before
// it refills a slot (the 2500-row block: 13 chunks, or 10 with the larger staging, in 8 slots), and every copy
// returns with its last chunks still to be read. Blocks of up to 1M rows share
// one cut of the ring into slots; a taller block's columns take slots of their
// own size, each overlapping two of the usual ones, so that copy and the one
// after it wait for the whole ring before their host side writes (a race
// there would need a host faster than the copy engine: it is not provoked).
// With a staging buffer shorter than the row-major blocks each chunk is
// transposed on its own; with one that holds them, each block is transposed
// once, after its last chunk (uploads) or before its first (downloads).
void CUDART_CB hold_up_stream(void*) { std::this_thread::sleep_for(std::chrono::milliseconds(20)); }

TEST(GpuTransfer, RingSlotsWaitForTheCopyEngineWhenCutDifferently) {
    if (gpu::device_count() == 0) GTEST_SKIP() << "no usable CUDA device: " << gpu::unavailable_reason();
    const int64_t m = 3200, n = 4000, ld = m + 1;  // blocks of 700 and 2500 rows
    const int64_t tall = 1200000, tall_cols = 3;    // one column a chunk, 1.2M floats
    std::mt19937_64 rng(test_seed());
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    Vec a(ld * n), t(tall * tall_cols);
    for (float& x : a) x = uniform(rng);
    for (float& x : t) x = uniform(rng);
    cudaStream_t stream = nullptr;
    float *storage = nullptr, *staging = nullptr, *tall_storage = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&storage, sizeof(float) * m * n), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&staging, sizeof(float) * m * n), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&tall_storage, sizeof(float) * tall * tall_cols), cudaSuccess);
    gpu::BounceBuffers bounce;
    for (int repeat = 0; repeat < 4; ++repeat) {
        const gpu::Staging stage{staging, repeat % 2 == 0 ? m * 256 : m * n};
        SCOPED_TRACE("staging of " + std::to_string(stage.capacity) + " floats");
        // NaNs: nothing an earlier repeat left there can stand in for a copy.
        ASSERT_EQ(cudaMemsetAsync(staging, 0xFF, sizeof(float) * m * n, stream), cudaSuccess);
        ASSERT_EQ(cudaLaunchHostFunc(stream, hold_up_stream, nullptr), cudaSuccess);
        gpu::copy_host_to_row_major(a.data(), ld, 700, n, storage, n, stage, bounce, stream);
        ASSERT_EQ(cudaLaunchHostFunc(stream, hold_up_stream, nullptr), cudaSuccess);
        gpu::copy_host_to_columns(t.data(), tall, tall, tall_cols, tall_storage, tall, bounce, stream);
        ASSERT_EQ(cudaLaunchHostFunc(stream, hold_up_stream, nullptr), cudaSuccess);
        gpu::copy_host_to_row_major(a.data() + 700, ld, m - 700, n, storage + 700 * n, n, stage, bounce,
                                    stream);
        Vec back(ld * n, kNaN), tall_back(tall * tall_cols, kNaN);
        gpu::copy_row_major_to_host(storage, n, m, n, back.data(), ld, stage, bounce, stream);
        gpu::copy_columns_to_host(tall_storage, tall, tall, tall_cols, tall_back.data(), tall, bounce, stream);
        ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
        int64_t wrong = 0;
        for (int64_t j = 0; j < n; ++j)
            for (int64_t i = 0; i < m; ++i) wrong += back[i + j * ld] != a[i + j * ld];
        for (int64_t i = 0; i < tall * tall_cols; ++i) wrong += tall_back[i] != t[i];
        EXPECT_EQ(wrong, 0) << "repeat " << repeat;
        ASSERT_EQ(cudaMemsetAsync(storage, 0, sizeof(float) * m * n, stream), cudaSuccess);
        ASSERT_EQ(cudaMemsetAsync(tall_storage, 0, sizeof(float) * tall * tall_cols, stream), cudaSuccess);
    }
    bounce.release();
    EXPECT_EQ(cudaFree(tall_storage), cudaSuccess);
    EXPECT_EQ(cudaFree(staging), cudaSuccess);
    EXPECT_EQ(cudaFree(storage), cudaSuccess);
    EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

// Reference laswp on a column-major copy: columns c0 .. c0+cols, k = k1 .. k2-1 in order.
void reference_laswp(Vec& a, int64_t ld, int64_t c0, int64_t cols, int64_t k1, int64_t k2,
                     const std::vector<int>& ipiv) {
    for (int64_t k = k1; k < k2; ++k)
        for (int64_t j = c0; j < c0 + cols; ++j) std::swap(a[k + j * ld], a[ipiv[k] - 1 + j * ld]);
}

TEST_F(GpuDevice, SwapRowsMatchesReferenceLaswp) {
    SCOPED_TRACE(seed_note());
    struct Case { int64_t m, n, c0, cols, k1, k2; bool lapack_like; };
    // The second case needs two launches (> 1000 swaps) and repeats rows, so the
    // order of the swaps matters.
    for (const Case c : {Case{300, 170, 5, 145, 20, 84, true}, Case{2500, 40, 0, 40, 100, 1300, false}}) {
        device_->allocate(c.m, c.n, 16);
        Vec expected = fill_storage(c.m, c.n);
        std::vector<int> ipiv(static_cast<size_t>(c.m), 0);
        for (int64_t k = c.k1; k < c.k2; ++k) {
            const int64_t low = c.lapack_like ? k : 0;
            ipiv[k] = static_cast<int>(std::uniform_int_distribution<int64_t>(low, c.m - 1)(rng_)) + 1;
            if (k % 7 == 0) ipiv[k] = static_cast<int>(k) + 1;  // no interchange
        }
        reference_laswp(expected, c.m, c.c0, c.cols, c.k1, c.k2, ipiv);
        device_->swap_rows(Queue::compute, c.c0, c.cols, c.k1, c.k2, ipiv.data());
        std::fill(ipiv.begin(), ipiv.end(), -5);  // the device has copied what it needs
        EXPECT_EQ(first_bit_difference(read_storage(c.m, c.n), expected), -1)
            << "m = " << c.m << ", k1..k2 = " << c.k1 << ".." << c.k2;
    }
}

// Pivot sequences whose net permutation has long cycles and repeated rows.
enum class Pivots {
    chain,         // k <-> k+1 for every k, then the last one with the bottom row: one long cycle
    one_far_row,   // every k with the bottom row (repeated row, cycle of nb + 1)
    first_row,     // every k with row k1 (the first swap is a no-op)
    far_below,     // random rows below k2 (repeats: nb may exceed the rows there)
    lapack_mix,    // random in k .. m-1, every third one equal to k
    anywhere,      // random in 0 .. m-1, above k1 too
    none,          // all equal to k: nothing moves, nothing is launched
};

// gpu::swap_rows straight on a raw allocation: m rows of a row-major buffer
// whose block is columns c0 .. c0+cols-1, with ld > c0 + cols and guard rows
// after the m rows. Everything outside the block (columns before and after,
// the padding up to ld, the guard rows) must stay as it was, bit for bit; the
// buffer's values are random, so a stray write or a wrong source shows.
// nb = 600 needs two launches (at most 512 swaps each) and the chain runs
// across them; cols = 1, 31, 33, 1000 give partial and several column chunks;
// c0 = 3 with an odd ld misaligns the rows, c0 = 32 with ld a multiple of 32
// aligns them.
TEST_F(GpuDevice, SwapRowsPermutationCyclesRepeatsAndEdges) {
    SCOPED_TRACE(seed_note());
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    cudaStream_t stream = nullptr;
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    const int64_t k1 = 37, guard_rows = 3;
    int variant = 0;
    for (const int64_t nb : {1, 256, 600})
        for (const int64_t cols : {1, 31, 33, 1000})
            for (const Pivots kind : {Pivots::chain, Pivots::one_far_row, Pivots::first_row,
                                      Pivots::far_below, Pivots::lapack_mix, Pivots::anywhere,
                                      Pivots::none}) {
                const int64_t c0 = variant++ % 2 ? 32 : 3;
                const int64_t ld = c0 == 32 ? (c0 + cols + 1 + 31) / 32 * 32 : c0 + cols + 5;
                const int64_t k2 = k1 + nb, m = k2 + 200, total = (m + guard_rows) * ld;
                SCOPED_TRACE("nb = " + std::to_string(nb) + ", cols = " + std::to_string(cols) +
                             ", c0 = " + std::to_string(c0) + ", ld = " + std::to_string(ld) +
                             ", pivots #" + std::to_string(static_cast<int>(kind)));
                std::vector<int> ipiv(static_cast<size_t>(m), -7);
                auto pick = [&](int64_t lo, int64_t hi) {  // a 1-based row in lo .. hi
                    return static_cast<int>(std::uniform_int_distribution<int64_t>(lo, hi)(rng_)) + 1;
                };
                for (int64_t k = k1; k < k2; ++k) {
                    int& p = ipiv[k];
                    switch (kind) {
                        case Pivots::chain: p = k + 1 < k2 ? int(k) + 2 : int(m); break;
                        case Pivots::one_far_row: p = int(m); break;
                        case Pivots::first_row: p = int(k1) + 1; break;
                        case Pivots::far_below: p = pick(k2, m - 1); break;
                        case Pivots::lapack_mix: p = k % 3 == 0 ? int(k) + 1 : pick(k, m - 1); break;
                        case Pivots::anywhere: p = pick(0, m - 1); break;
                        case Pivots::none: p = int(k) + 1; break;
                    }
                }
                const Vec before = random(total);
                Vec expected = before;
                for (int64_t k = k1; k < k2; ++k)
                    for (int64_t j = c0; j < c0 + cols; ++j)
                        std::swap(expected[k * ld + j], expected[(ipiv[k] - 1) * ld + j]);

                float* d = nullptr;
                ASSERT_EQ(cudaMalloc(&d, sizeof(float) * total), cudaSuccess);
                ASSERT_EQ(cudaMemcpy(d, before.data(), sizeof(float) * total,
                                     cudaMemcpyHostToDevice),
                          cudaSuccess);
                // The copy's DMA may still be in flight, and `stream` need not wait for it.
                ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
                gpu::swap_rows(d + c0, ld, cols, k1, k2, ipiv.data(), stream);
                std::fill(ipiv.begin(), ipiv.end(), -5);  // the launch has what it needs
                Vec got(static_cast<size_t>(total), kNaN);
                ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
                ASSERT_EQ(cudaMemcpy(got.data(), d, sizeof(float) * total,
                                     cudaMemcpyDeviceToHost),
                          cudaSuccess);
                ASSERT_EQ(cudaFree(d), cudaSuccess);
                const int64_t at = first_bit_difference(got, expected);
                EXPECT_EQ(at, -1) << "first difference at row " << (at < 0 ? -1 : at / ld)
                                  << ", column " << (at < 0 ? -1 : at % ld);
            }
    ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

// Back to back on one stream, the second sequence undoes the first (its swaps
// in reverse order): the matrix must come back exactly.
TEST_F(GpuDevice, SwapRowsForwardThenBackwardIsIdentity) {
    SCOPED_TRACE(seed_note());
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    const int64_t m = 3000, cols = 777, ld = 800, k1 = 0, k2 = 1300;
    std::vector<int> ipiv(static_cast<size_t>(m));
    for (int64_t k = k1; k < k2; ++k)
        ipiv[k] = static_cast<int>(std::uniform_int_distribution<int64_t>(0, m - 1)(rng_)) + 1;
    const Vec before = random(m * ld);
    float* d = nullptr;
    ASSERT_EQ(cudaMalloc(&d, sizeof(float) * m * ld), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(d, before.data(), sizeof(float) * m * ld, cudaMemcpyHostToDevice),
              cudaSuccess);
    gpu::swap_rows(d, ld, cols, k1, k2, ipiv.data(), nullptr);
    // Undo: swaps k2-1 .. k1, each one a single-swap call (ipiv is read at row k).
    for (int64_t k = k2 - 1; k >= k1; --k) gpu::swap_rows(d, ld, cols, k, k + 1, ipiv.data(), nullptr);
    Vec got(before.size(), kNaN);
    ASSERT_EQ(cudaMemcpy(got.data(), d, sizeof(float) * m * ld, cudaMemcpyDeviceToHost),
              cudaSuccess);
    ASSERT_EQ(cudaFree(d), cudaSuccess);
    EXPECT_EQ(first_bit_difference(got, before), -1);
}

TEST_F(GpuDevice, EventsOrderTheQueues) {
    SCOPED_TRACE(seed_note());
    const int64_t m = 512, n = 300;
    device_->allocate(m, n, 8);
    const Event origin = device_->record(Queue::compute);
    const Vec a = random(m * n);
    device_->upload(Queue::transfer, a.data(), m, 0, 0, m, n);
    const Event uploaded = device_->record(Queue::transfer);
    device_->wait(Queue::compute, uploaded);
    Vec out(a.size(), kNaN);
    device_->download(Queue::compute, out.data(), m, 0, 0, m, n);
    const Event downloaded = device_->record(Queue::compute);
    device_->synchronize(downloaded);
    EXPECT_EQ(first_bit_difference(out, a), -1);
    // Times are relative to the first event since allocate(); `downloaded` waited for `uploaded`.
    EXPECT_EQ(device_->seconds_at(origin), 0.0);
    EXPECT_GE(device_->seconds_at(downloaded), device_->seconds_at(uploaded) - 1e-6);
    EXPECT_GE(device_->seconds_at(uploaded), -1e-6);
    // Handles from before allocate() are gone.
    device_->allocate(m, n, 8);
    try {
        device_->wait(Queue::compute, downloaded);
        ADD_FAILURE() << "an event from before allocate() was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), TANDEM_ERROR_INTERNAL) << e.what();
    }
}

TEST_F(GpuDevice, ContractViolationsAreInternalErrors) {
    device_->allocate(64, 32, 8);
    Vec host(64 * 32, 0.0f);
    std::vector<int> ipiv(64, 1);
    ipiv[3] = 65;  // beyond the last row
    auto expect_internal = [](const char* what, auto&& call) {
        try {
            call();
            ADD_FAILURE() << what << " was accepted";
        } catch (const Error& e) {
            EXPECT_EQ(e.code(), TANDEM_ERROR_INTERNAL) << what << ": " << e.what();
        }
    };
    expect_internal("upload past the last column", [&] {
        device_->upload(Queue::compute, host.data(), 64, 0, 1, 64, 32);
    });
    expect_internal("download with ldh < rows", [&] {
        device_->download(Queue::compute, host.data(), 10, 0, 0, 64, 1);
    });
    expect_internal("pivot outside the storage", [&] {
        device_->swap_rows(Queue::compute, 0, 32, 0, 8, ipiv.data());
    });
    device_->receive_panel(Queue::compute, host.data(), 64, 64, 8, nullptr, 8);
    expect_internal("inverse path without inv(L11)", [&] {
        device_->form_u12(Queue::compute, 0, 8, 8, 24, true);
    });
    expect_internal("update wider than the panel", [&] {
        device_->update_trailing(Queue::compute, 0, 9, 10, 8, 24);
    });
    // Empty blocks read no workspace: accepted whatever it holds.
    device_->form_u12(Queue::compute, 0, 20, 30, 0, false);
    device_->update_trailing(Queue::compute, 0, 20, 0, 30, 2);
    device_->synchronize();
}

TEST_F(GpuDevice, AllocateReportsOutOfMemoryAndStaysUsable) {
    try {
        device_->allocate(int64_t(1) << 22, int64_t(1) << 20, 256);  // 16 TiB
        ADD_FAILURE() << "a 16 TiB allocation succeeded";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), TANDEM_ERROR_OUT_OF_MEMORY);
        const std::string what = e.what();
        EXPECT_NE(what.find("4194304 x 1048576"), std::string::npos) << what;
        EXPECT_NE(what.find("GiB"), std::string::npos) << what;
        EXPECT_NE(what.find("free"), std::string::npos) << what;
    }
    device_->allocate(40, 30, 8);
    const Vec a = fill_storage(40, 30);
    EXPECT_EQ(first_bit_difference(read_storage(40, 30), a), -1);
}

// A catch-up of `width` columns after j factored columns of a rows-high
// matrix, against a reference in double: the interchanges, the solve with
// L11 and the product with L21. L's entries below the diagonal are scaled
// by 1/sqrt(j), which keeps inv(L11) moderate.
class GpuCatchUp : public GpuDevice {
protected:
    void check_catch_up(int64_t rows, int64_t j, int64_t width);
};

void GpuCatchUp::check_catch_up(int64_t rows, int64_t j, int64_t width) {
    const int64_t cols = j + width;
    device_->allocate(rows, cols, 8);
    Vec a = random(rows * cols);  // column-major, ld = rows
    const float scale_l = 1.0f / std::sqrt(float(j));
    for (int64_t k = 0; k < j; ++k)
        for (int64_t i = 0; i < rows; ++i) {
            float& x = a[i + k * rows];
            x = i < k ? 0.0f : i == k ? 1.0f : scale_l * x;
        }
    device_->upload(Queue::compute, a.data(), rows, 0, 0, rows, cols);
    device_->synchronize();
    std::vector<int> ipiv(j);
    std::uniform_int_distribution<int64_t> pick(0, rows - 1);
    for (int64_t k = 0; k < j; ++k) ipiv[k] = static_cast<int>(k + 1 + pick(rng_) % (rows - k));
    device_->catch_up(Queue::compute, j, width, j, ipiv.data());
    device_->synchronize();
    const Vec after = read_storage(rows, cols);

    std::vector<double> want(static_cast<size_t>(rows * width));
    for (int64_t c = 0; c < width; ++c)
        for (int64_t i = 0; i < rows; ++i) want[i + c * rows] = a[i + (j + c) * rows];
    for (int64_t k = 0; k < j; ++k)
        for (int64_t c = 0; c < width; ++c) std::swap(want[k + c * rows], want[(ipiv[k] - 1) + c * rows]);
    auto l = [&](int64_t i, int64_t k) { return double(a[i + k * rows]); };
    double worst = 0.0, scale = 0.0;
    for (int64_t c = 0; c < width; ++c) {
        double* x = &want[c * rows];
        for (int64_t i = 1; i < j; ++i)  // U = inv(L11) A(0:j, c)
            for (int64_t k = 0; k < i; ++k) x[i] -= l(i, k) * x[k];
        for (int64_t i = j; i < rows; ++i)  // A(j:, c) -= L21 U
            for (int64_t k = 0; k < j; ++k) x[i] -= l(i, k) * x[k];
        for (int64_t i = 0; i < rows; ++i) {
            worst = std::max(worst, std::fabs(after[i + (j + c) * rows] - x[i]));
            scale = std::max(scale, std::fabs(x[i]) + 1.0);
        }
    }
    EXPECT_LT(worst, 8.0 * j * kUnitRoundoff * scale);
    for (int64_t k = 0; k < j; ++k)  // L is left alone
        for (int64_t i = 0; i < rows; ++i) ASSERT_EQ(after[i + k * rows], a[i + k * rows]);
}

// A block wider than the staging buffer allows in one piece at the storage's
// height (a plan's last, square panel, which the workspaces are not sized
// for). 2000 rows x 700 columns is 1.4M floats; the buffer holds 1M.
TEST_F(GpuCatchUp, OfABlockWiderThanTheStagingBuffer) {
    SCOPED_TRACE(seed_note());
    check_catch_up(2000, 64, 700);
}

// A block right of the last panel of a wide matrix (m < n): every row lies
// above j, and the solve is all there is.
TEST_F(GpuCatchUp, OfEveryRowOfAWideMatrix) {
    SCOPED_TRACE(seed_note());
    check_catch_up(300, 300, 40);
}

// After thousands of factored columns, as late blocks of a streamed matrix
// catch up: a solve with a large L11 and a product of depth j.
TEST_F(GpuCatchUp, AfterThousandsOfColumns) {
    SCOPED_TRACE(seed_note());
    check_catch_up(2600, 2304, 96);
}

// The performance model is cached per fingerprint, and the rates it measures
// depend on the panel method and the SGEMM policy: each gets its own model.
TEST_F(GpuDevice, FingerprintNamesThePanelMethod) {
    device_->set_panel_method(DevicePanelMethod::cusolver);
    const std::string cusolver = device_->fingerprint();
    device_->set_panel_method(DevicePanelMethod::automatic);
    const std::string automatic = device_->fingerprint();
    EXPECT_NE(cusolver, automatic);
    EXPECT_NE(cusolver.find("panel=cusolver"), std::string::npos) << cusolver;
}

TEST_F(GpuDevice, FingerprintNamesTheSgemmPolicy) {
    const std::string cache = "";  // the shipped table; nothing is read
    device_->set_gemm_policy(GemmKernel::cublas, cache);
    const std::string cublas = device_->fingerprint();
    device_->set_gemm_policy(GemmKernel::automatic, cache);
    const std::string automatic = device_->fingerprint();
    device_->set_gemm_policy(GemmKernel::tandem, cache);
    const std::string ours = device_->fingerprint();
    EXPECT_NE(cublas, automatic);
    EXPECT_NE(automatic, ours);
    EXPECT_NE(cublas, ours);
    auto gpu_part = [](const std::string& f) { return f.substr(0, f.find(" gemm=")); };
    EXPECT_EQ(gpu_part(cublas), gpu_part(automatic));  // the same GPU, driver and runtime
    EXPECT_EQ(gpu::make_cuda_device(0)->fingerprint(), cublas);  // a new device starts on cuBLAS
}

TEST_F(GpuDevice, KeepsTheCallersCurrentDevice) {
    const int count = gpu::device_count();
    // With two GPUs, make the other one current: every call must put it back.
    const int callers = count > 1 ? 1 : 0;
    ASSERT_EQ(cudaSetDevice(callers), cudaSuccess);
    auto dev = gpu::make_cuda_device(0);
    dev->allocate(16, 16, 4);
    const Vec a = random(16 * 16);
    dev->upload(Queue::transfer, a.data(), 16, 0, 0, 16, 16);
    dev->synchronize(dev->record(Queue::transfer));
    float* pinned = dev->host_alloc(4);
    dev->host_free(pinned);
    dev.reset();
    int current = -1;
    ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
    EXPECT_EQ(current, callers);
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    try {
        gpu::make_cuda_device(count);
        ADD_FAILURE() << "device " << count << " of " << count << " was made";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), TANDEM_ERROR_BACKEND_UNAVAILABLE) << e.what();
    }
}

}  // namespace
}  // namespace tandem::test

namespace tandem::test {
namespace {

// Entries of the factored panel (rows x width at r0, c0 of `after`, both
// column-major with ld = ld_rows; `a` the storage before) where
// |P A - L U| exceeds Higham's componentwise bound 2 width u (|L| |U|), or
// where a multiplier exceeds 1 (beyond rounding): what partial pivoting
// guarantees whichever of two near-equal candidates it took.
int64_t panel_bound_violations(const Vec& a, int64_t ld_rows, int64_t r0, int64_t c0, int64_t rows,
                               int width, const Vec& after, const std::vector<int>& ipiv) {
    std::vector<double> pa(static_cast<size_t>(rows * width));
    for (int j = 0; j < width; ++j)
        for (int64_t i = 0; i < rows; ++i) pa[i + j * rows] = a[(r0 + i) + (c0 + j) * ld_rows];
    for (int k = 0; k < width; ++k)
        for (int j = 0; j < width; ++j) std::swap(pa[k + j * rows], pa[(ipiv[k] - 1) + j * rows]);
    auto factor = [&](int64_t i, int64_t j) { return double(after[(r0 + i) + (c0 + j) * ld_rows]); };
    int64_t violations = 0;
    for (int j = 0; j < width; ++j)
        for (int64_t i = 0; i < rows; ++i) {
            double lu = 0.0, magnitude = 0.0;
            for (int64_t k = 0; k <= std::min<int64_t>(i, j); ++k) {
                const double term = (k == i ? 1.0 : factor(i, k)) * factor(k, j);
                lu += term;
                magnitude += std::fabs(term);
            }
            if (std::fabs(pa[i + j * rows] - lu) > 2.0 * width * kUnitRoundoff * magnitude + 1e-30)
                ++violations;
            if (i > j && std::fabs(factor(i, j)) > 1.0 + 1e-5) ++violations;
        }
    return violations;
}

// The GPU placement of a panel, by both routes: tandem's recursive panel
// (with leaves held by thread block clusters: 4097 rows in 5 blocks, 16000 in
// 16, 20000 in 10 blocks of 16-wide leaves, 40000 in 10 of 8-wide leaves
// (on an H100 or H200); and with one-block leaves only,
// 32, 16 and 8 wide by their rows; whole 16-byte rows or not; panels wider
// than 128 columns transposed and factored column-major) and cuSOLVER's
// getrf through the transposes. Each must
// give LAPACK's pivots and factors within a few ulps of LAPACK's (or, where
// two candidates lay within rounding of each other, a partial-pivoting LU
// within the backward error bound), leave the other columns alone, and
// take_panel must make it the workspace (checked through update_trailing).
// Beside a tensor-core update (factor_panel_beside_update, tf32x3) the leaves
// take clusters of at most 8 blocks up to 16384 rows (16000 and 16384 rows)
// and of at most 4 above, which reach no further, so cuSOLVER's getrf takes
// 16385, 20000 and 40000 rows (CudaDevice::PanelShare). Widths up to the
// planner's 1024, and tall panels (cuSOLVER's getrf whatever the method);
// 4096 x 1024 (2^22 floats) is the largest panel whose leaves apply their
// interchanges at once (larger ones leave them for later passes).
TEST_F(GpuDevice, FactorPanelMatchesLapackAndBecomesTheWorkspace) {
    SCOPED_TRACE(seed_note());
    struct ClustersBackOn {  // however the test ends
        ~ClustersBackOn() { gpu::set_leaf_cluster_limit(gpu::kDefaultLeafClusterLimit); }
    } clusters_back_on;
    struct Route {
        DevicePanelMethod method;
        bool clusters;
        bool beside_update;  // factor_panel_beside_update on a tf32x3 device
        const char* name;
    };
    for (Route route :
         {Route{DevicePanelMethod::recursive, true, false, " recursive"},
          Route{DevicePanelMethod::recursive, false, false, " recursive, one-block leaves"},
          Route{DevicePanelMethod::cusolver, true, false, " cuSOLVER"},
          Route{DevicePanelMethod::automatic, true, true, " beside a tensor-core update"}})
    for (auto [rows, width, c0] : {std::tuple<int64_t, int, int64_t>{300, 37, 5},
                                   {1000, 128, 0}, {64, 64, 3}, {1, 1, 0}, {2049, 130, 2},
                                   {1500, 1024, 0}, {20000, 40, 0}, {4096, 72, 1},
                                   {1024, 32, 4}, {1025, 33, 0}, {2048, 17, 8}, {4097, 8, 0},
                                   {3000, 200, 4}, {16000, 64, 0}, {40000, 24, 3},
                                   {16384, 32, 0}, {16385, 32, 1}, {4096, 1024, 0}}) {
        device_->set_panel_method(route.method);
        device_->set_update_precision(route.beside_update ? UpdatePrecision::tf32x3
                                                          : UpdatePrecision::fp32);
        gpu::set_leaf_cluster_limit(route.clusters ? gpu::kDefaultLeafClusterLimit : 1);
        SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(width) + route.name);
        const int64_t r0 = 7, cols = c0 + width + 9;
        device_->allocate(r0 + rows, cols, width);
        const Vec a = fill_storage(r0 + rows, cols);
        device_->synchronize();  // the upload ran on another queue
        float* pinned = device_->host_alloc(width + 1);
        int* pivots = reinterpret_cast<int*>(pinned);
        std::fill(pivots, pivots + width + 1, -5);
        if (route.beside_update)
            device_->factor_panel_beside_update(Queue::transfer, r0, c0, rows, width, pivots);
        else
            device_->factor_panel(Queue::transfer, r0, c0, rows, width, pivots);
        device_->synchronize(device_->record(Queue::transfer));
        device_->set_update_precision(UpdatePrecision::fp32);  // the check below is FP32's

        Vec lapack(static_cast<size_t>(rows * width));
        for (int j = 0; j < width; ++j)
            for (int64_t i = 0; i < rows; ++i)
                lapack[i + j * rows] = a[(r0 + i) + (c0 + j) * (r0 + rows)];
        std::vector<int> lapack_ipiv(width);
        ASSERT_EQ(LAPACKE_sgetrf(LAPACK_COL_MAJOR, rows, width, lapack.data(), rows,
                                 lapack_ipiv.data()), 0);
        EXPECT_EQ(pivots[width], 0);
        const std::vector<int> got_ipiv(pivots, pivots + width);
        const Vec after = read_storage(r0 + rows, cols);
        if (got_ipiv != lapack_ipiv) {
            // Two candidates can lie within the rounding by which the routes
            // differ, and the order of operations decides (seen once in 1500 x
            // 1024 with cuSOLVER). The first pivot (no rounding before it)
            // must agree, and the factors must be a partial-pivoting LU within
            // the backward error bound.
            EXPECT_EQ(got_ipiv[0], lapack_ipiv[0]);
            EXPECT_EQ(panel_bound_violations(a, r0 + rows, r0, c0, rows, width, after, got_ipiv), 0);
            device_->host_free(pinned);
            continue;
        }
        EXPECT_EQ(got_ipiv, lapack_ipiv);

        double worst = 0.0;
        for (int64_t j = 0; j < cols; ++j)
            for (int64_t i = 0; i < r0 + rows; ++i) {
                const float got = after[i + j * (r0 + rows)];
                const bool in_panel = i >= r0 && j >= c0 && j < c0 + width;
                if (!in_panel) {
                    ASSERT_EQ(got, a[i + j * (r0 + rows)]) << "outside the panel at " << i << ", " << j;
                    continue;
                }
                const float want = lapack[(i - r0) + (j - c0) * rows];
                worst = std::max(worst, double(std::fabs(got - want)));
            }
        // The factors' entries against LAPACK's, in units of width * u: up to
        // 64.1 seen on cuSOLVER's getrf at 1500 x 1024 (random data).
        EXPECT_LT(worst, 128 * width * kUnitRoundoff);

        // take_panel: the workspace now holds the factored panel, so an update
        // of the 9 columns right of it must use its L21.
        device_->take_panel(Queue::compute, r0, c0, rows, width);
        const int64_t right = c0 + width, below = rows - width;
        device_->update_trailing(Queue::compute, r0, width, below, right, 9);
        const Vec updated = read_storage(r0 + rows, cols);
        const int64_t ld = r0 + rows;
        double error = 0.0, scale = 0.0;
        for (int64_t j = right; j < right + 9; ++j)
            for (int64_t i = 0; i < below; ++i) {
                double want = a[(r0 + width + i) + j * ld];
                for (int k = 0; k < width; ++k)
                    want -= double(lapack[(width + i) + k * rows]) * a[(r0 + k) + j * ld];
                error = std::max(error, std::fabs(updated[(r0 + width + i) + j * ld] - want));
                scale = std::max(scale, std::fabs(want) + 1.0);
            }
        EXPECT_LE(error, 4.0 * width * kUnitRoundoff * scale * width);
        device_->host_free(pinned);
    }
}

// The last panel of a plan, factored in place (a whole matrix in one step):
// wider than the workspaces, n^2 floats beyond what the workspace width alone
// gives the staging buffer. P A = L U within the componentwise
// backward error bound (Higham: |PA - LU| <= gamma_n |L| |U|), the rest of the
// storage untouched.
TEST_F(GpuDevice, FactorPanelTakesTheLastSquareBeyondTheWorkspaceWidth) {
    SCOPED_TRACE(seed_note());
    const int64_t r0 = 3, c0 = 2;
    const int n = 1040;
    const int64_t ld = r0 + n, cols = c0 + n;
    device_->allocate(ld, cols, 8, n);
    const Vec a = fill_storage(ld, cols);
    device_->synchronize();
    float* pinned = device_->host_alloc(n + 1);
    int* pivots = reinterpret_cast<int*>(pinned);
    device_->factor_panel(Queue::transfer, r0, c0, n, n, pivots);
    device_->synchronize(device_->record(Queue::transfer));
    EXPECT_EQ(pivots[n], 0);
    const Vec after = read_storage(ld, cols);
    for (int64_t j = 0; j < cols; ++j)
        for (int64_t i = 0; i < ld; ++i)
            if (i < r0 || j < c0) { ASSERT_EQ(after[i + j * ld], a[i + j * ld]) << i << ", " << j; }

    for (int k = 0; k < n; ++k) {
        ASSERT_GE(pivots[k], k + 1);
        ASSERT_LE(pivots[k], n);
    }
    EXPECT_EQ(panel_bound_violations(a, ld, r0, c0, n, n, after, std::vector<int>(pivots, pivots + n)),
              0);
    device_->host_free(pinned);
}

// Zero pivots (info is the first, the factorization goes on) and ties (the
// first row wins, as LAPACK's isamax), by both routes; in the recursive
// panel the zero column lies in a later leaf.
TEST_F(GpuDevice, FactorPanelReportsZeroPivotsAndBreaksTiesLikeLapack) {
    SCOPED_TRACE(seed_note());
    for (DevicePanelMethod method : {DevicePanelMethod::recursive, DevicePanelMethod::cusolver})
    // 20000 rows: leaves on clusters of 10 blocks, each block picking its
    // winner before the cluster does (gpu/panel_leaf.cu).
    for (auto [rows, width, zero_column] : {std::tuple<int64_t, int, int>{50, 20, 6}, {300, 130, 70},
                                            {3000, 100, 70}, {20000, 40, 30}}) {
        device_->set_panel_method(method);
        SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(width) +
                     (method == DevicePanelMethod::cusolver ? " cuSOLVER" : " recursive"));
        device_->allocate(rows, width, width);
        Vec a = random(rows * width);
        std::fill(a.begin() + zero_column * rows, a.begin() + (zero_column + 1) * rows, 0.0f);
        // Column 0: equal magnitudes, so every row ties for the first pivot.
        for (int64_t i = 0; i < rows; ++i) a[i] = i % 3 == 1 ? -0.5f : 0.5f;
        device_->upload(Queue::compute, a.data(), rows, 0, 0, rows, width);
        device_->synchronize();
        float* pinned = device_->host_alloc(width + 1);
        int* pivots = reinterpret_cast<int*>(pinned);
        device_->factor_panel(Queue::transfer, 0, 0, rows, width, pivots);
        device_->synchronize();
        std::vector<int> lapack_ipiv(width);
        Vec lapack = a;
        EXPECT_EQ(LAPACKE_sgetrf(LAPACK_COL_MAJOR, rows, width, lapack.data(), rows, lapack_ipiv.data()),
                  zero_column + 1);
        EXPECT_EQ(pivots[width], zero_column + 1);
        EXPECT_EQ(pivots[0], 1);
        const std::vector<int> got_ipiv(pivots, pivots + width);
        if (got_ipiv != lapack_ipiv) {  // a near-tie after the first column (see above)
            EXPECT_EQ(panel_bound_violations(a, rows, 0, 0, rows, width, read_storage(rows, width),
                                             got_ipiv), 0);
        }
        device_->host_free(pinned);
    }
}

}  // namespace
}  // namespace tandem::test
