#include "gpu/sgemm_tuning_table.hpp"

#include <algorithm>
#include <map>
#include <sstream>

#include "gpu/sgemm_variants.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {
namespace {

// Upper bounds of the classes; the last class of each is unbounded.
constexpr int64_t kKBounds[kSgemmKClasses - 1] = {64, 128, 256, 384, 512, 768, 1024};
constexpr int64_t kSizeBounds[kSgemmSizeClasses - 1] = {2048, 4096, 8192, 16384, 32768};
// What the tuner times for the unbounded classes.
constexpr int64_t kLargestKShape = 2048;
constexpr int64_t kLargestSizeShape = 65536;

const char* const kKindNames[kSgemmShapeKinds] = {"square", "tall", "wide"};

template <size_t N>
int class_of(int64_t value, const int64_t (&bounds)[N]) {
    int c = 0;
    while (c < int(N) && value > bounds[c]) ++c;
    return c;
}

template <size_t N>
std::string class_label(const char* what, int c, const int64_t (&bounds)[N]) {
    return c < int(N) ? std::string(what) + "<=" + std::to_string(bounds[c])
                      : std::string(what) + ">" + std::to_string(bounds[N - 1]);
}

int bucket_index(const SgemmBucket& b) {
    return (int(b.kind) * kSgemmKClasses + b.k_class) * kSgemmSizeClasses + b.size_class;
}

constexpr int kBuckets = kSgemmShapeKinds * kSgemmKClasses * kSgemmSizeClasses;

std::string trim(const std::string& s) {
    const size_t first = s.find_first_not_of(" \t\r");
    if (first == std::string::npos) return "";
    return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

}  // namespace

SgemmBucket sgemm_bucket(int64_t m, int64_t n, int64_t k) {
    SgemmBucket b;
    b.kind = n * 4 <= m ? SgemmShapeKind::tall
                        : (m * 4 <= n ? SgemmShapeKind::wide : SgemmShapeKind::square);
    b.k_class = class_of(k, kKBounds);
    b.size_class = class_of(std::max(m, n), kSizeBounds);
    return b;
}

std::string sgemm_bucket_label(const SgemmBucket& b) {
    return std::string(kKindNames[int(b.kind)]) + " " + class_label("k", b.k_class, kKBounds) +
           " " + class_label("size", b.size_class, kSizeBounds);
}

SgemmShape sgemm_bucket_shape(const SgemmBucket& b) {
    const int64_t k = b.k_class < kSgemmKClasses - 1 ? kKBounds[b.k_class] : kLargestKShape;
    const int64_t size =
        b.size_class < kSgemmSizeClasses - 1 ? kSizeBounds[b.size_class] : kLargestSizeShape;
    const int64_t narrow = std::min(k, size / 4);  // n of a tall shape, m of a wide one
    switch (b.kind) {
        case SgemmShapeKind::tall: return {size, narrow, k};
        case SgemmShapeKind::wide: return {narrow, size, k};
        default: return {size, size, k};
    }
}

std::vector<SgemmBucket> all_sgemm_buckets() {
    std::vector<SgemmBucket> buckets;
    for (int kind = 0; kind < kSgemmShapeKinds; ++kind)
        for (int k = 0; k < kSgemmKClasses; ++k)
            for (int size = 0; size < kSgemmSizeClasses; ++size)
                buckets.push_back({SgemmShapeKind(kind), k, size});
    return buckets;
}

SgemmTuningTable::SgemmTuningTable() : variants_(kBuckets, kDefaultVariant) {}

const std::string& SgemmTuningTable::variant(const SgemmBucket& bucket) const {
    return variants_[size_t(bucket_index(bucket))];
}

void SgemmTuningTable::set_variant(const SgemmBucket& bucket, const std::string& name) {
    variants_[size_t(bucket_index(bucket))] = name;
}

std::string SgemmTuningTable::to_text() const {
    std::string text;
    for (const SgemmBucket& bucket : all_sgemm_buckets())
        text += sgemm_bucket_label(bucket) + " = " + variant(bucket) + "\n";
    return text;
}

bool SgemmTuningTable::apply_text(const std::string& text, std::string& error) {
    static const std::map<std::string, SgemmBucket> by_label = [] {
        std::map<std::string, SgemmBucket> labels;
        for (const SgemmBucket& bucket : all_sgemm_buckets()) labels[sgemm_bucket_label(bucket)] = bucket;
        return labels;
    }();
    std::vector<std::string> updated = variants_;
    std::istringstream lines(text);
    std::string line;
    for (int number = 1; std::getline(lines, line); ++number) {
        line = trim(line);
        if (line.empty() || line[0] == '#') continue;
        const size_t equals = line.find(" = ");  // labels hold '=' themselves ("k<=64")
        const auto bucket = equals == std::string::npos ? by_label.end()
                                                        : by_label.find(trim(line.substr(0, equals)));
        const std::string name = equals == std::string::npos ? "" : trim(line.substr(equals + 3));
        if (bucket == by_label.end() || name.empty() || name.find_first_of(" \t") != std::string::npos) {
            error = "line " + std::to_string(number) + " is not '<bucket> = <variant>': " + line;
            return false;
        }
        if (find_sgemm_variant(name)) updated[size_t(bucket_index(bucket->second))] = name;
    }
    variants_ = std::move(updated);
    return true;
}

}  // namespace tandem::gpu
