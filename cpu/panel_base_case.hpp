// The cache-resident base case of the CPU panel (recursive_panel.cpp): LU with
// partial pivoting of a tall, narrow block of columns by the panel's whole team,
// each thread on its own block of rows (panel_team.hpp), which stays in its own
// cache from one column to the next.
#ifndef TANDEM_CPU_PANEL_BASE_CASE_HPP
#define TANDEM_CPU_PANEL_BASE_CASE_HPP

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cpu/panel_kernels.hpp"
#include "cpu/panel_team.hpp"

namespace tandem {

// Rows a thread must own for one more thread to pay for itself: below this the
// per-column synchronization costs more than the thread's share of the work saves.
constexpr int64_t kMinRowsPerThread = 32;

// Memory the team shares, allocated once per panel (the flags count columns of
// the panel, so one workspace serves exactly one panel): per thread and column
// parity its pivot candidate and a copy of the candidate's row, a copy of the
// diagonal row, per thread how far it got, and the panel's INFO.
class BaseCaseWorkspace {
public:
    BaseCaseWorkspace(int max_threads, int max_width);

    // A thread's pivot candidate for one column, on one cache line that also
    // carries what every thread needs of the candidate's row if it wins: the
    // pivot and the rest of the row within the column's group.
    struct alignas(64) Candidate {
        std::atomic<int64_t> column{-1};  // the panel column it is for, published last
        int64_t row = -1;
        float value = -1.0f;            // |pivot|
        float group_part[kGroupWidth];  // the row from the column to the group's end
    };

    int max_threads() const { return max_threads_; }
    int max_width() const { return max_width_; }
    Candidate& candidate(int parity, int thread) {
        return candidates_[static_cast<size_t>(parity * max_threads_ + thread)];
    }
    float* candidate_row(int parity, int thread) { return row_copy(parity, thread); }
    float* diagonal_row(int parity) { return row_copy(parity, max_threads_); }
    // The last panel column whose elimination step `thread` has finished.
    std::atomic<int64_t>& finished_column(int thread) {
        return finished_[static_cast<size_t>(thread)].value;
    }
    // The last column of the last group whose rows of U right of it are solved.
    std::atomic<int64_t>& solved_group() { return solved_group_.value; }

    // LAPACK's INFO: the first exactly zero pivot (1-based panel column), or 0.
    // Written by thread 0 only; columns are factored in increasing order.
    int info = 0;

private:
    struct alignas(64) Line {
        float v[16];
    };

    float* row_copy(int parity, int slot) {
        return rows_[(static_cast<size_t>(parity) * (max_threads_ + 1) + slot) * lines_per_row_].v;
    }

    int max_threads_;
    int max_width_;
    size_t lines_per_row_;
    std::vector<Candidate> candidates_;
    std::vector<SyncFlag> finished_;
    SyncFlag solved_group_;
    std::vector<Line> rows_;
};

// LU with partial pivoting of columns [first, first + width) and rows [first,
// rows) of the column-major panel (ld), width <= workspace.max_width(), by the
// whole team: every thread of the enclosing parallel region calls it with its
// TeamMember (team size <= workspace.max_threads()). Row interchanges are applied
// across these `width` columns only. Thread 0 writes ipiv[first .. first+width)
// (1-based panel rows) and records a zero pivot in workspace.info. Ends with a
// barrier: afterwards every thread may read the whole block and ipiv.
void factor_base_case(const TeamMember& me, int64_t rows, int first, int width, float* panel,
                      int64_t ld, int* ipiv, BaseCaseWorkspace& workspace);

}  // namespace tandem

#endif
