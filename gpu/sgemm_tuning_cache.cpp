#include "gpu/sgemm_tuning_cache.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

namespace tandem::gpu {
namespace {

constexpr const char* kMagic = "tandem-sgemm-tuning 1";
// A tuning file is a few KiB; anything much larger is not one.
constexpr std::streamsize kMaxFileBytes = 1 << 20;

std::string header(const SgemmDeviceKey& key) {
    return std::string(kMagic) + "\ngpu " + key.gpu_name + "\nsms " + std::to_string(key.sm_count) +
           "\ncuda " + std::to_string(key.cuda_version) + "\n";
}

}  // namespace

std::string default_sgemm_cache_dir() {
    const char* home = std::getenv("HOME");
    return home && *home ? std::string(home) + "/.cache/tandem" : std::string();
}

std::string sgemm_cache_path(const std::string& cache_dir, const SgemmDeviceKey& key) {
    std::string gpu = key.gpu_name;
    for (char& c : gpu)
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) c = '_';
    return cache_dir + "/sgemm-" + gpu + "-" + std::to_string(key.sm_count) + "sm-cuda" +
           std::to_string(key.cuda_version) + ".txt";
}

bool save_sgemm_tuning(const std::string& path, const SgemmDeviceKey& key,
                       const SgemmTuningTable& table, std::string& error) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path target(path);
    if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
    if (ec) {
        error = "cannot create " + target.parent_path().string() + ": " + ec.message();
        return false;
    }
    const std::string temporary = path + ".tmp";
    {
        std::ofstream out(temporary, std::ios::trunc);
        out << header(key) << table.to_text();
        if (!out.flush()) {
            error = "cannot write " + temporary;
            return false;
        }
    }
    fs::rename(temporary, target, ec);
    if (ec) {
        error = "cannot rename " + temporary + " to " + path + ": " + ec.message();
        fs::remove(temporary, ec);
        return false;
    }
    return true;
}

std::optional<SgemmTuningTable> load_sgemm_tuning(const std::string& path, const SgemmDeviceKey& key,
                                                  const SgemmTuningTable& defaults, std::string& why) {
    try {
        std::ifstream in(path, std::ios::binary);
        if (!in) {
            why = "no file " + path;
            return std::nullopt;
        }
        std::string text(static_cast<size_t>(kMaxFileBytes) + 1, '\0');
        in.read(text.data(), kMaxFileBytes + 1);
        text.resize(static_cast<size_t>(in.gcount()));
        if (text.size() > static_cast<size_t>(kMaxFileBytes)) {
            why = path + " is too large to be a tuning file";
            return std::nullopt;
        }
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
