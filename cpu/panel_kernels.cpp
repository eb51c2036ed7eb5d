#include "cpu/panel_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace tandem {
namespace {

// GCC's vector extensions: one source for every clone below. A 16-float vector is
// one AVX-512 register, two AVX2 registers or four SSE registers. The pivot
// search needs a max-with-first-index reduction, which compilers do not
// vectorize on their own without fast-math, hence explicit vectors.
using vfloat = float __attribute__((vector_size(64)));
using vint = int32_t __attribute__((vector_size(64)));
constexpr int kLanes = 16;

// Rows are processed in chunks so that the chunk of the group's l columns
// (8 x 256 floats = 8 KiB) stays in L1 while the columns of c stream past it.
constexpr int64_t kChunkRows = 256;
static_assert(kChunkRows % kLanes == 0, "chunks must hold whole vectors");

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define TANDEM_KERNEL_CLONES \
    __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define TANDEM_KERNEL_CLONES
#endif
#define TANDEM_INLINE inline __attribute__((always_inline))

// The vector helpers are always inlined, so no vector crosses a call boundary
// and the ABI of passing 64-byte vectors without AVX-512 never comes into play.
#pragma GCC diagnostic ignored "-Wpsabi"

TANDEM_INLINE vfloat load(const float* p) {
    vfloat v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

TANDEM_INLINE void store(float* p, const vfloat& v) { std::memcpy(p, &v, sizeof v); }

TANDEM_INLINE vfloat abs_value(const vfloat& v) {
    return reinterpret_cast<vfloat>(reinterpret_cast<vint>(v) & 0x7fffffff);
}

// Running isamax over rows visited in increasing order: per lane the first row
// of the lane's largest |value| (strict >), then the lanes reduced with ties
// going to the smaller row. Starting at -1 lets a zero column still name its
// first row, as isamax does.
class CandidateTracker {
public:
    TANDEM_INLINE CandidateTracker() {
        lane_value_ = vfloat{} - 1.0f;
        lane_row_ = vint{} - 1;
    }

    // x holds rows row0 .. row0 + 15.
    TANDEM_INLINE void add(const vfloat& x, int64_t row0) {
        const vfloat magnitude = abs_value(x);
        const vint better = magnitude > lane_value_;
        const vint rows = kLaneOffsets + static_cast<int32_t>(row0);
        lane_value_ = better ? magnitude : lane_value_;
        lane_row_ = better ? rows : lane_row_;
    }

    // Scalar rows must come after every vector row added so far.
    TANDEM_INLINE void add(float x, int64_t row) {
        if (std::fabs(x) > tail_.value) tail_ = {std::fabs(x), row};
    }

    TANDEM_INLINE PivotCandidate result() const {
        PivotCandidate best;
        for (int lane = 0; lane < kLanes; ++lane) {
            const float v = lane_value_[lane];
            const int64_t row = lane_row_[lane];
            if (v > best.value || (v == best.value && v >= 0.0f && row < best.row)) best = {v, row};
        }
        return tail_.value > best.value ? tail_ : best;
    }

private:
    static constexpr vint kLaneOffsets = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    vfloat lane_value_;
    vint lane_row_;
    PivotCandidate tail_;
};

// column[0 .. n) scaled by LAPACK's sgetf2 rule.
TANDEM_INLINE void scale_column(int64_t n, float* __restrict column, float pivot) {
    if (pivot == 0.0f) return;  // a zero pivot leaves the column as it is (INFO > 0)
    int64_t i = 0;
    if (std::fabs(pivot) >= std::numeric_limits<float>::min()) {
        const float reciprocal = 1.0f / pivot;
        for (; i + kLanes <= n; i += kLanes) store(column + i, load(column + i) * reciprocal);
        for (; i < n; ++i) column[i] *= reciprocal;
    } else {  // 1 / pivot would overflow
        for (; i + kLanes <= n; i += kLanes) store(column + i, load(column + i) / pivot);
        for (; i < n; ++i) column[i] /= pivot;
    }
}

// c[0 .. n) -= l[0 .. n) * u, tracking the candidate when kTrack.
template <bool kTrack>
TANDEM_INLINE void axpy_column(int64_t n, const float* __restrict l, float u, float* __restrict c,
                               int64_t row0, CandidateTracker& tracker) {
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
        const vfloat s = load(c + i) - load(l + i) * u;
        store(c + i, s);
        if (kTrack) tracker.add(s, row0 + i);
    }
    for (; i < n; ++i) {
        c[i] -= l[i] * u;
        if (kTrack) tracker.add(c[i], row0 + i);
    }
}

// c[0 .. n) -= sum_p l(., p) * coef[p] over the group's columns of l (leading
// dimension ld).
template <bool kTrack>
TANDEM_INLINE void update_column(int64_t n, const float* __restrict l, int64_t ld,
                                 const float* coef, float* __restrict c, int64_t row0,
                                 CandidateTracker& tracker) {
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
        vfloat s = load(c + i);
        for (int p = 0; p < kGroupWidth; ++p) s -= load(l + p * ld + i) * coef[p];
        store(c + i, s);
        if (kTrack) tracker.add(s, row0 + i);
    }
    for (; i < n; ++i) {
        float s = c[i];
        for (int p = 0; p < kGroupWidth; ++p) s -= l[p * ld + i] * coef[p];
        c[i] = s;
        if (kTrack) tracker.add(s, row0 + i);
    }
}

// Four columns of c at once, c(., r) -= sum_p l(., p) * coef[p][r]: each vector of
// l is loaded once for 4 FMAs, and the 4 accumulators are independent chains.
TANDEM_INLINE void update_four_columns(int64_t n, const float* __restrict l, int64_t ld,
                                       const float (*coef)[4], float* __restrict c) {
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
        vfloat s0 = load(c + i), s1 = load(c + ld + i), s2 = load(c + 2 * ld + i),
               s3 = load(c + 3 * ld + i);
        for (int p = 0; p < kGroupWidth; ++p) {
            const vfloat x = load(l + p * ld + i);
            s0 -= x * coef[p][0];
            s1 -= x * coef[p][1];
            s2 -= x * coef[p][2];
            s3 -= x * coef[p][3];
        }
        store(c + i, s0);
        store(c + ld + i, s1);
        store(c + 2 * ld + i, s2);
        store(c + 3 * ld + i, s3);
    }
    for (; i < n; ++i) {
        for (int r = 0; r < 4; ++r) {
            float s = c[r * ld + i];
            for (int p = 0; p < kGroupWidth; ++p) s -= l[p * ld + i] * coef[p][r];
            c[r * ld + i] = s;
        }
    }
}

// u: the column's kGroupWidth entries of the group's rows of U.
template <bool kTrack>
TANDEM_INLINE void update_one_column(int64_t n, const float* l, const float* u, float* c,
                                     int64_t ld, int64_t row0, CandidateTracker& tracker) {
    float coef[kGroupWidth];
    for (int p = 0; p < kGroupWidth; ++p) coef[p] = u[p];
    update_column<kTrack>(n, l, ld, coef, c, row0, tracker);
}

}  // namespace

TANDEM_KERNEL_CLONES
PivotCandidate find_pivot_candidate(int64_t n, const float* x) {
    CandidateTracker tracker;
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) tracker.add(load(x + i), i);
    for (; i < n; ++i) tracker.add(x[i], i);
    return tracker.result();
}

TANDEM_KERNEL_CLONES
PivotCandidate eliminate_column(int64_t n, float* column, float pivot, float* right, int64_t ld,
                                const float* u, int count) {
    CandidateTracker tracker;
    for (int64_t i0 = 0; i0 < n; i0 += kChunkRows) {
        const int64_t len = std::min(kChunkRows, n - i0);
        scale_column(len, column + i0, pivot);
        for (int k = 0; k < count; ++k) {
            if (k == 0) {
                axpy_column<true>(len, column + i0, u[k], right + i0, i0, tracker);
            } else {
                axpy_column<false>(len, column + i0, u[k], right + k * ld + i0, i0, tracker);
            }
        }
    }
    return count > 0 ? tracker.result() : PivotCandidate{};
}

TANDEM_KERNEL_CLONES
PivotCandidate update_with_group(int64_t n, const float* l, const float* u, float* c, int64_t ld,
                                 int ncols) {
    if (ncols == 0) return PivotCandidate{};
    CandidateTracker tracker;
    for (int64_t i0 = 0; i0 < n; i0 += kChunkRows) {
        const int64_t len = std::min(kChunkRows, n - i0);
        // Column 0 alone, tracking the next pivot; then fours; then the rest.
        update_one_column<true>(len, l + i0, u, c + i0, ld, i0, tracker);
        int q = 1;
        for (; q + 4 <= ncols; q += 4) {
            float coef[kGroupWidth][4];
            for (int p = 0; p < kGroupWidth; ++p)
                for (int r = 0; r < 4; ++r) coef[p][r] = u[p + (q + r) * ld];
            update_four_columns(len, l + i0, ld, coef, c + q * ld + i0);
        }
        for (; q < ncols; ++q)
            update_one_column<false>(len, l + i0, u + q * ld, c + q * ld + i0, ld, i0, tracker);
    }
    return tracker.result();
}

}  // namespace tandem
