// Which SGEMM variant to run for which shape: the table the dispatcher reads
// and the tuner writes. Shapes fall into buckets by kind, k and size:
//   kind  square: the LU's trailing update (m ~ n >> k) and square products;
//         tall:   n * 4 <= m, the look-ahead update of the next panel (m x nb x nb);
//         wide:   m * 4 <= n, the inv(L11) product U12 = inv(L11) A12 (nb x N x nb);
//   k     <= 64, 128, 256, 384, 512, 768, 1024, or more (the panel width nb);
//   size  max(m, n) <= 2048, 4096, 8192, 16384, 32768, or more.
// Text form (the cache file's body, and the shipped defaults): one line per
// bucket, "<label> = <variant>", e.g. "square k<=64 size<=16384 = sgemm_rm_128x128x8_8x8_s3".
// No CUDA types here.
#ifndef TANDEM_GPU_SGEMM_TUNING_TABLE_HPP
#define TANDEM_GPU_SGEMM_TUNING_TABLE_HPP

#include <cstdint>
#include <string>
#include <vector>

namespace tandem::gpu {

enum class SgemmShapeKind : int { square = 0, tall = 1, wide = 2 };

inline constexpr int kSgemmShapeKinds = 3;
inline constexpr int kSgemmKClasses = 8;
inline constexpr int kSgemmSizeClasses = 6;

struct SgemmBucket {
    SgemmShapeKind kind = SgemmShapeKind::square;
    int k_class = 0;     // 0 .. kSgemmKClasses - 1
    int size_class = 0;  // 0 .. kSgemmSizeClasses - 1
};

struct SgemmShape {
    int64_t m = 0, n = 0, k = 0;
};

SgemmBucket sgemm_bucket(int64_t m, int64_t n, int64_t k);
// E.g. "square k<=64 size<=16384", "tall k>1024 size>32768".
std::string sgemm_bucket_label(const SgemmBucket& bucket);
// The shape the tuner times for a bucket (its upper bounds; 2048 for k > 1024
// and 65536 for size > 32768); sgemm_bucket() of it is the bucket itself.
SgemmShape sgemm_bucket_shape(const SgemmBucket& bucket);
// Every bucket, in the order of the text form.
std::vector<SgemmBucket> all_sgemm_buckets();

class SgemmTuningTable {
public:
    // The table shipped for sm_90 (H100 / H200); see sgemm_default_table.cpp.
    static const SgemmTuningTable& sm90_defaults();

    const std::string& variant(const SgemmBucket& bucket) const;
    const std::string& variant_for(int64_t m, int64_t n, int64_t k) const {
        return variant(sgemm_bucket(m, n, k));
    }
    void set_variant(const SgemmBucket& bucket, const std::string& name);

    // One "<label> = <variant>" line per bucket.
    std::string to_text() const;
    // Applies the lines of `text` to this table: blank lines and lines starting
    // with '#' are skipped; a line naming a variant that is not in the menu is
    // skipped (a table from an older menu); any other malformed line makes the
    // whole call fail (returns false, table unchanged, `error` says which line).
    bool apply_text(const std::string& text, std::string& error);

    bool operator==(const SgemmTuningTable& other) const { return variants_ == other.variants_; }
    bool operator!=(const SgemmTuningTable& other) const { return !(*this == other); }

private:
    SgemmTuningTable();
    std::vector<std::string> variants_;  // by bucket index
};

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_SGEMM_TUNING_TABLE_HPP
