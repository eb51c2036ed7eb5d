#include "gpu/sgemm_tuning_cache.hpp"

#include <cstdlib>
#include <exception>

#include "scheduler/cache_file.hpp"

namespace tandem::gpu {
namespace {

constexpr const char* kMagic = "tandem-sgemm-tuning 1";
// A tuning file is a few KiB; anything much larger is not one.
constexpr size_t kMaxFileBytes = 1 << 20;

std::string header(const SgemmDeviceKey& key) {
    return std::string(kMagic) + "\ngpu " + key.gpu_name + "\nsms " + std::to_string(key.sm_count) +
           "\ncuda " + std::to_string(key.cuda_version) + "\n";
}

}  // namespace

std::string default_sgemm_cache_dir() { return detail::resolve_cache_dir(""); }

std::string sgemm_cache_path(const std::string& cache_dir, const SgemmDeviceKey& key) {
    return cache_dir + "/sgemm-" + detail::file_name_safe(key.gpu_name) + "-" +
           std::to_string(key.sm_count) + "sm-cuda" + std::to_string(key.cuda_version) + ".txt";
}

bool save_sgemm_tuning(const std::string& path, const SgemmDeviceKey& key,
                       const SgemmTuningTable& table, std::string& error) {
    return detail::write_cache_file(path, header(key) + table.to_text(), error);
}

std::optional<SgemmTuningTable> load_sgemm_tuning(const std::string& path, const SgemmDeviceKey& key,
                                                  const SgemmTuningTable& defaults, std::string& why) {
    try {
        std::string text;
        if (!detail::read_cache_file(path, kMaxFileBytes, text, why)) return std::nullopt;
        const std::string expected = header(key);
        if (text.compare(0, expected.size(), expected) != 0) {
            why = path + " is for another GPU, CUDA version or format";
            return std::nullopt;
        }
        SgemmTuningTable table = defaults;
        std::string error;
        if (!table.apply_text(text.substr(expected.size()), error)) {
            why = path + " is malformed: " + error;
            return std::nullopt;
        }
        return table;
    } catch (const std::exception& e) {  // e.g. bad_alloc: a cache must never break a run
        why = "cannot read " + path + ": " + e.what();
        return std::nullopt;
    }
}

}  // namespace tandem::gpu
