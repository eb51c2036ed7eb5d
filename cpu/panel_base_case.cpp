#include "cpu/panel_base_case.hpp"

#include <omp.h>

#include <algorithm>
#include <string>

#include "cpu/panel_kernels.hpp"
#include "tandem/tandem.hpp"

// The base case, per column j of the block (thread t owns rows [begin_t, end_t)):
//   1. t publishes its pivot candidate for column j (largest |a(i, j)| over its
//      rows i >= j, first row on ties) with a copy of that row, and the owner of
//      row j a copy of row j.                                      -- barrier --
//   2. every thread reduces the candidates to the same pivot row p (ties to the
//      lower thread, i.e. the lower row: LAPACK's isamax rule). The owner of
//      row j writes the copy of row p into row j and the owner of row p the copy
//      of row j into row p. Then each thread scales its rows i > j of column j
//      and updates them in the remaining columns of j's group of 8 with the
//      pivot row's copy, finding its candidate for column j + 1 on the way.
// The copies are what make one barrier per column enough: the rows themselves
// change in step 2, the copies do not, and they alternate between two buffers
// by the parity of j, so a thread already publishing for column j + 1 never
// overwrites what a slower thread still reads for column j.
// After each group of 8 columns (if columns remain to its right):
//                                                                  -- barrier --
//   the owner of the group's first row solves its 8 rows of U to the right of the
//   group (forward substitution with the group's unit lower triangle);
//                                                                  -- barrier --
//   every thread applies the rank-8 update of the group to its rows of the
//   columns to the right, finding its candidate for the next column on the way.
// So 1 + 2/8 barriers per column; rows never cross threads except the two rows
// of a swap, once each, through the copies.

namespace tandem {

BaseCaseWorkspace::BaseCaseWorkspace(int max_threads, int max_width)
    : max_threads_(max_threads),
      max_width_(max_width),
      row_stride_((static_cast<int64_t>(max_width) + 15) / 16 * 16),
      candidates_(static_cast<size_t>(2 * max_threads)),
      rows_(static_cast<size_t>(2 * (max_threads + 1) * row_stride_)) {}

namespace {

// Columns factored with rank-1 updates before one rank-8 update of the rest: the
// update's vectors of 16 rows then do 8 FMAs per load and store of c.
constexpr int kGroupWidth = 8;

// Thread blocks are whole multiples of 16 rows (one cache line of a column), so
// threads share no line of a column when the column starts on a line.
constexpr int64_t kRowUnit = 16;

struct RowBlock {
    int64_t begin;
    int64_t end;
};

RowBlock thread_rows(int64_t rows, int team, int thread) {
    const int64_t units = (rows + kRowUnit - 1) / kRowUnit;
    const int64_t base = units / team;
    const int64_t extra = units % team;
    const int64_t first = thread * base + std::min<int64_t>(thread, extra);
    const int64_t count = base + (thread < extra ? 1 : 0);
    return {std::min(rows, first * kRowUnit), std::min(rows, (first + count) * kRowUnit)};
}

// One thread's view of the team and of the block.
struct Member {
    float* a;
    int64_t ld;
    int width;
    int team;
    int id;
    RowBlock mine;
    BaseCaseWorkspace* shared;

    float* at(int64_t row, int col) const { return a + row + col * ld; }
    bool owns(int64_t row) const { return row >= mine.begin && row < mine.end; }
    // The first of my rows at or below `row`, and how many of mine there are from it.
    int64_t first_from(int64_t row) const { return std::max(mine.begin, std::min(row, mine.end)); }
    int64_t count_from(int64_t row) const { return mine.end - first_from(row); }
};

PivotCandidate shifted(PivotCandidate c, int64_t first_row) {
    if (c.row >= 0) c.row += first_row;
    return c;
}

void copy_row(const Member& m, int64_t row, float* out) {
    for (int k = 0; k < m.width; ++k) out[k] = *m.at(row, k);
}

void write_row(const Member& m, int64_t row, const float* in) {
    for (int k = 0; k < m.width; ++k) *m.at(row, k) = in[k];
}

void publish_candidate(const Member& m, int j, PivotCandidate mine) {
    const int parity = j & 1;
    m.shared->candidate(parity, m.id) = {mine.value, mine.row};
    if (mine.row >= 0) copy_row(m, mine.row, m.shared->candidate_row(parity, m.id));
    if (m.owns(j)) copy_row(m, j, m.shared->diagonal_row(parity));
}

struct Pivot {
    int64_t row;
    const float* row_copy;  // the pivot row as it was before the swap, full width
    float value;
};

Pivot choose_pivot(const Member& m, int j) {
    const int parity = j & 1;
    int winner = -1;
    float best = -1.0f;  // a thread without candidate rows publishes -1
    for (int t = 0; t < m.team; ++t) {
        const float value = m.shared->candidate(parity, t).value;
        if (value > best) {  // strict: ties go to the lower thread, whose rows come first
            best = value;
            winner = t;
        }
    }
    Pivot pivot;
    if (winner < 0) {  // only NaNs below the diagonal: keep row j, as isamax would
        pivot.row = j;
        pivot.row_copy = m.shared->diagonal_row(parity);
    } else {
        pivot.row = m.shared->candidate(parity, winner).row;
        pivot.row_copy = m.shared->candidate_row(parity, winner);
    }
    pivot.value = pivot.row_copy[j];
    return pivot;
}

void swap_pivot_row(const Member& m, int j, const Pivot& pivot) {
    if (pivot.row == j) return;
    if (m.owns(j)) write_row(m, j, pivot.row_copy);
    if (m.owns(pivot.row)) write_row(m, pivot.row, m.shared->diagonal_row(j & 1));
}

// Rows first .. end-1 of U to the right of the group: forward substitution with
// the group's unit lower triangle (columns first .. end-1 of the same rows).
void solve_group_rows(const Member& m, int first, int end) {
    for (int q = end; q < m.width; ++q) {
        for (int p = first; p < end; ++p) {
            const float u = *m.at(p, q);
            for (int i = p + 1; i < end; ++i) *m.at(i, q) -= *m.at(i, p) * u;
        }
    }
}

// Step 2 of column j for my rows below row j; returns my candidate for column
// j + 1 when it lies in the same group.
PivotCandidate eliminate_my_rows(const Member& m, int j, int group_end, const Pivot& pivot) {
    const int64_t first = m.first_from(j + 1);
    const int count = group_end - j - 1;
    return shifted(eliminate_column(m.count_from(j + 1), m.at(first, j), pivot.value,
                                    count > 0 ? m.at(first, j + 1) : nullptr, m.ld,
                                    pivot.row_copy + j + 1, count),
                   first);
}

// The group's update of my rows below it; returns my candidate for column `end`.
PivotCandidate update_my_rows(const Member& m, int group_first, int group_end) {
    const int64_t first = m.first_from(group_end);
    return shifted(update_with_group(m.count_from(group_end), group_end - group_first,
                                     m.at(first, group_first), m.at(group_first, group_end),
                                     m.at(first, group_end), m.ld, m.width - group_end),
                   first);
}

}  // namespace

int factor_base_case(int64_t rows, int width, float* a, int64_t ld, int* ipiv, int threads,
                     BaseCaseWorkspace& workspace) {
    if (width < 1 || rows < width || ld < rows || threads < 1 ||
        width > workspace.max_width() || threads > workspace.max_threads())
        throw Error(TANDEM_ERROR_INTERNAL,
                    "factor_base_case: bad block " + std::to_string(rows) + " x " +
                        std::to_string(width) + " (ld " + std::to_string(ld) + ", " +
                        std::to_string(threads) + " threads)");
    int info = 0;
#pragma omp parallel num_threads(threads)
    {
        // The team may be smaller than asked (nested parallelism off, thread
        // limits): the rows are split over the threads actually running.
        Member m{a, ld, width, omp_get_num_threads(), omp_get_thread_num(), {0, 0}, &workspace};
        m.mine = thread_rows(rows, m.team, m.id);
        PivotCandidate mine = shifted(find_pivot_candidate(m.count_from(0), m.at(m.mine.begin, 0)),
                                      m.mine.begin);
        for (int group_first = 0; group_first < width; group_first += kGroupWidth) {
            const int group_end = std::min(width, group_first + kGroupWidth);
            for (int j = group_first; j < group_end; ++j) {
                publish_candidate(m, j, mine);
#pragma omp barrier
                const Pivot pivot = choose_pivot(m, j);
                if (m.id == 0) {
                    ipiv[j] = static_cast<int>(pivot.row) + 1;
                    if (pivot.value == 0.0f && info == 0) info = j + 1;
                }
                swap_pivot_row(m, j, pivot);
                mine = eliminate_my_rows(m, j, group_end, pivot);
            }
            if (group_end < width) {
#pragma omp barrier
                if (m.owns(group_first)) solve_group_rows(m, group_first, group_end);
#pragma omp barrier
                mine = update_my_rows(m, group_first, group_end);
            }
        }
    }
    return info;
}

}  // namespace tandem
