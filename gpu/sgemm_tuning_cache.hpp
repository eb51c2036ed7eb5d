// The tuner's cache file: the winners measured on one GPU, stored under
// <cache_dir>/ (by default ~/.cache/tandem/) in a file named after the GPU, and
// read back only by the same GPU model, SM count and CUDA runtime version.
// Reading never throws: a missing, corrupt or foreign file gives no table, and
// the caller keeps its defaults. No CUDA types here.
//
// File format (text):
//   tandem-sgemm-tuning 1
//   gpu NVIDIA H200
//   sms 132
//   cuda 13000
//   <the table's text form: "<bucket> = <variant>" lines>
#ifndef TANDEM_GPU_SGEMM_TUNING_CACHE_HPP
#define TANDEM_GPU_SGEMM_TUNING_CACHE_HPP

#include <optional>
#include <string>

#include "gpu/sgemm_tuning_table.hpp"

namespace tandem::gpu {

struct SgemmDeviceKey {
    std::string gpu_name;  // cudaDeviceProp::name
    int sm_count = 0;
    int cuda_version = 0;  // cudaRuntimeGetVersion, e.g. 13000
    bool operator==(const SgemmDeviceKey& o) const {
        return gpu_name == o.gpu_name && sm_count == o.sm_count && cuda_version == o.cuda_version;
    }
};

// Where the library looks when Options::cache_dir is empty: $XDG_CACHE_HOME/tandem,
// else $HOME/.cache/tandem, else "" (then nothing is cached).
std::string default_sgemm_cache_dir();

// <cache_dir>/sgemm-<gpu name with [^A-Za-z0-9] as '_'>-<sms>sm-cuda<version>.txt
std::string sgemm_cache_path(const std::string& cache_dir, const SgemmDeviceKey& key);

// Writes the file for `key` (creating cache_dir; through a temporary file and a
// rename, so that a reader never sees half a file). Returns false and sets
// `error` when it cannot.
bool save_sgemm_tuning(const std::string& path, const SgemmDeviceKey& key,
                       const SgemmTuningTable& table, std::string& error);

// The table stored at `path` for `key` (buckets the file does not name keep
// `defaults`' entries), or nothing with `why` set: no file, another GPU or CUDA
// version, another format version, or a malformed file.
std::optional<SgemmTuningTable> load_sgemm_tuning(const std::string& path, const SgemmDeviceKey& key,
                                                  const SgemmTuningTable& defaults, std::string& why);

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_SGEMM_TUNING_CACHE_HPP
