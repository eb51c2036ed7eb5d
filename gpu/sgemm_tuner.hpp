// The SGEMM autotuner: times every variant of the menu on one representative
// shape per bucket (the LU update C -= A B) on the current GPU with CUDA events,
// keeps the fastest per bucket, and loads the table a device should use (its
// cache file when one was tuned for it, else the built-in sm_90 table).
#ifndef TANDEM_GPU_SGEMM_TUNER_HPP
#define TANDEM_GPU_SGEMM_TUNER_HPP

#include <functional>
#include <string>
#include <vector>

#include "gpu/sgemm_args.hpp"
#include "gpu/sgemm_tuning_cache.hpp"
#include "gpu/sgemm_tuning_table.hpp"

namespace tandem::gpu {

struct SgemmTunerOptions {
    std::vector<SgemmBucket> buckets;  // empty: every bucket
    int repeats = 5;                   // timed runs per variant (after one warm-up); the median counts
    // Receives one line per bucket as it finishes (optional).
    std::function<void(const std::string&)> progress;
};

struct SgemmCandidateTiming {
    std::string variant;
    double seconds = 0.0;  // median of the timed runs
};

struct SgemmBucketTiming {
    SgemmBucket bucket;
    SgemmShape shape;                               // what was timed
    std::vector<SgemmCandidateTiming> candidates;   // the variants that could run it
    std::string winner;                             // empty when the bucket was skipped
    std::string note;                               // why it was skipped
};

struct SgemmTuningResult {
    SgemmDeviceKey key;
    SgemmTuningTable table = SgemmTuningTable::sm90_defaults();  // defaults with the winners set
    std::vector<SgemmBucketTiming> buckets;
};

// The key of the current CUDA device (name, SM count, CUDA runtime version).
SgemmDeviceKey current_sgemm_device_key();

// Tunes the current device: allocates the largest shape's operands (buckets
// whose operands do not fit in free device memory are skipped, with a note),
// uses its own stream and cuBLAS handle. Throws tandem::Error on CUDA failures.
SgemmTuningResult tune_sgemm(const SgemmTunerOptions& options);

// The table for the current device: the cache file in cache_dir tuned for it,
// if there is a valid one (cache_dir "" means none), else the built-in sm_90
// table. `source` (optional) says which, and why not the cache file.
SgemmTuningTable load_sgemm_table_for_current_device(const std::string& cache_dir,
                                                      std::string* source = nullptr);

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_SGEMM_TUNER_HPP
