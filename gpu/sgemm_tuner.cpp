#include "gpu/sgemm_tuner.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>

#include "gpu/cuda_check.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/kernel_timer.hpp"
#include "gpu/matrix_samples.hpp"
#include "gpu/sgemm_dispatch.hpp"
#include "gpu/sgemm_variants.hpp"

namespace tandem::gpu {
namespace {

// The stream, cuBLAS handle and events of one tuning run, released on every exit.
struct TimingResources {
    cudaStream_t stream = nullptr;
    cublasHandle_t handle = nullptr;
    TimingResources() {
        TANDEM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        TANDEM_CUBLAS_CHECK(cublasCreate(&handle));
        TANDEM_CUBLAS_CHECK(cublasSetStream(handle, stream));
    }
    ~TimingResources() {
        if (handle) (void)cublasDestroy(handle);
        if (stream) (void)cudaStreamDestroy(stream);
    }
    TimingResources(const TimingResources&) = delete;
    TimingResources& operator=(const TimingResources&) = delete;
};

double bytes_of(const SgemmShape& s) {
    return 4.0 * (double(s.m) * double(s.k) + double(s.k) * double(s.n) + double(s.m) * double(s.n));
}

std::string tflops_text(const SgemmShape& s, double seconds) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f TF", 2.0 * double(s.m) * double(s.n) * double(s.k) / seconds * 1e-12);
    return text;
}

}  // namespace

SgemmDeviceKey current_sgemm_device_key() {
    int device = 0, runtime = 0;
    TANDEM_CUDA_CHECK(cudaGetDevice(&device));
    cudaDeviceProp prop{};
    TANDEM_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    TANDEM_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    return {prop.name, prop.multiProcessorCount, runtime};
}

SgemmTuningResult tune_sgemm(const SgemmTunerOptions& options) {
    SgemmTuningResult result;
    result.key = current_sgemm_device_key();
    const std::vector<SgemmBucket> buckets =
        options.buckets.empty() ? all_sgemm_buckets() : options.buckets;

    // Operands sized for the largest shapes; while they do not fit in 90% of the
    // free memory, the bucket with the most bytes is skipped.
    size_t free_bytes = 0, total_bytes = 0;
    TANDEM_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const double budget = 0.9 * double(free_bytes);
    for (const SgemmBucket& bucket : buckets) {
        SgemmBucketTiming timing;
        timing.bucket = bucket;
        timing.shape = sgemm_bucket_shape(bucket);
        result.buckets.push_back(timing);
    }
    int64_t a_size = 0, b_size = 0, c_size = 0;
    for (;;) {
        a_size = b_size = c_size = 0;
        SgemmBucketTiming* largest = nullptr;
        for (SgemmBucketTiming& t : result.buckets) {
            if (!t.note.empty()) continue;
            a_size = std::max(a_size, t.shape.m * t.shape.k);
            b_size = std::max(b_size, t.shape.k * t.shape.n);
            c_size = std::max(c_size, t.shape.m * t.shape.n);
            if (!largest || bytes_of(t.shape) > bytes_of(largest->shape)) largest = &t;
        }
        if (!largest || 4.0 * double(a_size + b_size + c_size) <= budget) break;
        largest->note = "operands do not fit in free device memory";
    }
    // Filled as rows of kFillRow floats (the fill kernel parallelises over rows).
    constexpr int64_t kFillRow = 4096;
    auto rows_of = [](int64_t size) { return std::max<int64_t>(1, (size + kFillRow - 1) / kFillRow); };
    DeviceBuffer a(size_t(rows_of(a_size) * kFillRow) * 4, "tuner A");
    DeviceBuffer b(size_t(rows_of(b_size) * kFillRow) * 4, "tuner B");
    DeviceBuffer c(size_t(rows_of(c_size) * kFillRow) * 4, "tuner C");
    TimingResources resources;
    fill_uniform_rm(rows_of(a_size), kFillRow, a.floats(), kFillRow, 1, resources.stream);
    fill_uniform_rm(rows_of(b_size), kFillRow, b.floats(), kFillRow, 2, resources.stream);
    fill_uniform_rm(rows_of(c_size), kFillRow, c.floats(), kFillRow, 3, resources.stream);
    const SgemmStream where{resources.stream, resources.handle};
    // Each product timed alone: without the launch latency, L2 evicted before
    // each run; run repeatedly in place, so C changes from run to run.
    KernelTimer timer(resources.stream);

    for (SgemmBucketTiming& timing : result.buckets) {
        const std::string label = sgemm_bucket_label(timing.bucket);
        const SgemmShape& s = timing.shape;
        const std::string dims = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
        if (!timing.note.empty()) {
            if (options.progress) options.progress(label + " (" + dims + "): skipped, " + timing.note);
            continue;
        }
        SgemmArgs args;
        args.m = s.m, args.n = s.n, args.k = s.k;
        args.alpha = -1.0f, args.beta = 1.0f;  // the LU's trailing update
        args.a = a.floats(), args.lda = s.k, args.b = b.floats(), args.ldb = s.n;
        args.c = c.floats(), args.ldc = s.n;
        double best = 0.0, cublas = 0.0;
        for (const SgemmVariant& variant : sgemm_variants()) {
            if (!variant.can_run(args, where)) continue;
            const double seconds = timer.median_seconds(
                [&] { run_sgemm_variant(variant.name, args, where); }, options.repeats, true);
            timing.candidates.push_back({variant.name, seconds});
            if (variant.name == kCublasVariant) cublas = seconds;
            if (timing.winner.empty() || seconds < best) best = seconds, timing.winner = variant.name;
        }
        result.table.set_variant(timing.bucket, timing.winner);
        if (options.progress)
            options.progress(label + " (" + dims + "): " + timing.winner + " " + tflops_text(s, best) +
                             (cublas > 0.0 ? ", cublas " + tflops_text(s, cublas) : std::string()));
    }
    return result;
}

SgemmTuningTable load_sgemm_table_for_current_device(const std::string& cache_dir,
                                                      std::string* source) {
    const SgemmTuningTable& defaults = SgemmTuningTable::sm90_defaults();
    std::string why = "no cache directory";
    if (!cache_dir.empty()) {
        const SgemmDeviceKey key = current_sgemm_device_key();
        const std::string path = sgemm_cache_path(cache_dir, key);
        if (auto table = load_sgemm_tuning(path, key, defaults, why)) {
            if (source) *source = "tuned on this device: " + path;
            return *table;
        }
    }
    if (source) *source = "built-in sm_90 table (" + why + ")";
    return defaults;
}

}  // namespace tandem::gpu
