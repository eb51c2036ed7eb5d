// The cache-resident parallel base case of the recursive CPU panel
// (recursive_panel.cpp): LU with partial pivoting of a tall, narrow block of
// columns by one OpenMP team in which every thread owns a contiguous block of
// rows for the whole base case, so its rows stay in its own cache from the first
// column to the last.
#ifndef TANDEM_CPU_PANEL_BASE_CASE_HPP
#define TANDEM_CPU_PANEL_BASE_CASE_HPP

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tandem {

// Rows a thread must own for one more thread to pay for itself: below this the
// per-column barrier costs more than the thread's share of the work saves.
constexpr int64_t kMinRowsPerThread = 32;

// Memory shared by the team of a base case, allocated once per panel and reused
// by every base case of it: per thread and column parity, its pivot candidate
// and a copy of the candidate's row, plus a copy of the diagonal row.
class BaseCaseWorkspace {
public:
    BaseCaseWorkspace(int max_threads, int max_width);

    struct alignas(64) Candidate {  // one cache line each: written by one thread
        float value;
        int64_t row;
    };

    int max_threads() const { return max_threads_; }
    int max_width() const { return max_width_; }
    Candidate& candidate(int parity, int thread) {
        return candidates_[static_cast<size_t>(parity * max_threads_ + thread)];
    }
    float* candidate_row(int parity, int thread) { return row_copy(parity, thread); }
    float* diagonal_row(int parity) { return row_copy(parity, max_threads_); }

private:
    float* row_copy(int parity, int slot) {
        return rows_.data() + (static_cast<size_t>(parity) * (max_threads_ + 1) + slot) * row_stride_;
    }

    int max_threads_;
    int max_width_;
    int64_t row_stride_;  // max_width rounded up to whole cache lines
    std::vector<Candidate> candidates_;
    std::vector<float> rows_;
};

// LU with partial pivoting of the rows x width column-major block a (ld), rows >=
// width, width <= workspace.max_width(), by a team of at most `threads` (<=
// workspace.max_threads()) threads. Row interchanges are applied across the
// block's full width. ipiv receives `width` 1-based pivots relative to a's first
// row. Returns LAPACK's info for the block (0, or the 1-based column of the first
// exactly zero pivot; the factorization goes on past it, as sgetf2 does).
int factor_base_case(int64_t rows, int width, float* a, int64_t ld, int* ipiv, int threads,
                     BaseCaseWorkspace& workspace);

}  // namespace tandem

#endif
