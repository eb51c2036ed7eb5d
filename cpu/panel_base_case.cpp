#include "cpu/panel_base_case.hpp"

#include <algorithm>

#include "cpu/panel_kernels.hpp"

// The base case, per column j of the block (thread t owns rows [begin_t, end_t)):
//   1. t publishes its pivot candidate for column j (largest |a(i, j)| over its
//      rows i >= j, first row on ties) with a copy of that row, and the owner of
//      row j a copy of row j; then it waits until every thread has published.
//   2. every thread reduces the candidates to the same pivot row p (ties to the
//      lower thread, i.e. the lower row: LAPACK's isamax rule). The owner of
//      row j writes the copy of row p into row j and the owner of row p the copy
//      of row j into row p. Then each thread scales its rows i > j of column j
//      and updates them in the remaining columns of j's group of 8 (rank 1),
//      finding its candidate for column j + 1 on the way.
// The copies are what make one synchronization per column enough: the rows
// change in step 2, the copies do not, and they alternate between two buffers
// by the parity of j, so a thread already publishing for column j + 1 never
// overwrites what a slower thread still reads for column j (it cannot get to
// j + 2 before every thread has published j + 1, i.e. finished reading j).
// The synchronization is the publication itself: each candidate carries its
// column number on one cache line with the candidate's value and the part of its
// row in the column's group (the pivot and the U entries of the group's rank-1
// updates), and the readers wait for that line: a few cache-line transfers per
// column, where a barrier followed by the reduction costs several times more.
// Only the owners of rows j and p read the full row copies.
// After each group of 8 columns with columns to its right, the owner of the
// group's rows waits until they are final (their owners finished the group's last
// column; usually that is itself), solves the group's rows of U to the right of
// it (forward substitution with the group's unit lower triangle) and publishes
// that; every thread waits for it, then applies the rank-8 update of the group to
// its rows right of the group, finding its candidate for the next column.

namespace tandem {

BaseCaseWorkspace::BaseCaseWorkspace(int max_threads, int max_width)
    : max_threads_(max_threads),
      max_width_(max_width),
      lines_per_row_((static_cast<size_t>(max_width) + 15) / 16),
      candidates_(static_cast<size_t>(2 * max_threads)),
      finished_(static_cast<size_t>(max_threads)),
      rows_(2 * (static_cast<size_t>(max_threads) + 1) * lines_per_row_) {}

namespace {

struct RowBlock {  // rows of the block, relative to its first row
    int64_t begin;
    int64_t end;
};

// One thread's view of the team and of the block.
struct Member {
    float* a;
    int64_t ld;
    int first;  // the block's first panel column (and row)
    int width;
    const TeamMember* me;
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

// Step 1 of column j (group_end: the end of j's group): publish my candidate,
// then wait for everybody's.
void exchange_candidates(const Member& m, int j, int group_end, PivotCandidate mine) {
    const int column = m.first + j;
    const int parity = column & 1;
    BaseCaseWorkspace::Candidate& slot = m.shared->candidate(parity, m.me->id);
    slot.value = mine.value;
    slot.row = mine.row;
    if (mine.row >= 0) {
        copy_row(m, mine.row, m.shared->candidate_row(parity, m.me->id));
        for (int k = j; k < group_end; ++k) slot.group_part[k - j] = *m.at(mine.row, k);
    }
    if (m.owns(j)) copy_row(m, j, m.shared->diagonal_row(parity));
    publish(slot.column, column);
    for (int t = 0; t < m.me->size(); ++t)
        wait_until_at_least(m.shared->candidate(parity, t).column, column);
}

struct Pivot {
    int64_t row;
    const float* group_part;  // the pivot row from column j to the group's end
    const float* row_copy;    // the whole pivot row as it was before the swap
};

Pivot choose_pivot(const Member& m, int j) {
    const int parity = (m.first + j) & 1;
    int winner = -1;
    float best = -1.0f;  // a thread without candidate rows publishes -1
    for (int t = 0; t < m.me->size(); ++t) {
        const float value = m.shared->candidate(parity, t).value;
        if (value > best) {  // strict: ties go to the lower thread, whose rows come first
            best = value;
            winner = t;
        }
    }
    if (winner < 0) {  // only NaNs below the diagonal: keep row j, as isamax would
        const float* diagonal = m.shared->diagonal_row(parity);
        return {j, diagonal + j, diagonal};
    }
    const BaseCaseWorkspace::Candidate& c = m.shared->candidate(parity, winner);
    return {c.row, c.group_part, m.shared->candidate_row(parity, winner)};
}

void swap_pivot_row(const Member& m, int j, const Pivot& pivot) {
    if (pivot.row == j) return;
    if (m.owns(j)) write_row(m, j, pivot.row_copy);
    if (m.owns(pivot.row)) write_row(m, pivot.row, m.shared->diagonal_row((m.first + j) & 1));
}

// Step 2 of column j for my rows below row j; returns my candidate for column
// j + 1 when it lies in the same group.
PivotCandidate eliminate_my_rows(const Member& m, int j, int group_end, const Pivot& pivot) {
    const int64_t first = m.first_from(j + 1);
    const int count = group_end - j - 1;
    return shifted(eliminate_column(m.count_from(j + 1), m.at(first, j), pivot.group_part[0],
                                    count > 0 ? m.at(first, j + 1) : nullptr, m.ld,
                                    pivot.group_part + 1, count),
                   first);
}

// Rows first .. end-1 of U right of the group: forward substitution with the
// group's unit lower triangle (columns first .. end-1 of the same rows). Done by
// the owner of the group's first row once all the group's rows are final, and
// published to the team.
void solve_group_rows(const Member& m, int first, int end) {
    const int last_column = m.first + end - 1;
    if (!m.owns(first)) {
        wait_until_at_least(m.shared->solved_group(), last_column);
        return;
    }
    const RowPartition& rows = *m.me->partition;
    for (int t = rows.owner(m.first + first); t <= rows.owner(m.first + end - 1); ++t)
        if (t != m.me->id) wait_until_at_least(m.shared->finished_column(t), last_column);
    for (int q = end; q < m.width; ++q) {
        for (int p = first; p < end; ++p) {
            const float u = *m.at(p, q);
            for (int i = p + 1; i < end; ++i) *m.at(i, q) -= *m.at(i, p) * u;
        }
    }
    publish(m.shared->solved_group(), last_column);
}

// The group's update of my rows below it; returns my candidate for column `end`.
// Only groups with columns to their right are updated, and those are full.
PivotCandidate update_my_rows(const Member& m, int group_first, int group_end) {
    const int64_t first = m.first_from(group_end);
    return shifted(update_with_group(m.count_from(group_end), m.at(first, group_first),
                                     m.at(group_first, group_end), m.at(first, group_end), m.ld,
                                     m.width - group_end),
                   first);
}

}  // namespace

void factor_base_case(const TeamMember& me, int64_t rows, int first, int width, float* panel,
                      int64_t ld, int* ipiv, BaseCaseWorkspace& workspace) {
    const int64_t block_rows = rows - first;
    const Member m{panel + first + first * ld,
                   ld,
                   first,
                   width,
                   &me,
                   {std::clamp<int64_t>(me.begin - first, 0, block_rows),
                    std::clamp<int64_t>(me.end - first, 0, block_rows)},
                   &workspace};
    PivotCandidate mine =
        shifted(find_pivot_candidate(m.count_from(0), m.at(m.mine.begin, 0)), m.mine.begin);
    for (int group_first = 0; group_first < width; group_first += kGroupWidth) {
        const int group_end = std::min(width, group_first + kGroupWidth);
        for (int j = group_first; j < group_end; ++j) {
            exchange_candidates(m, j, group_end, mine);
            const Pivot pivot = choose_pivot(m, j);
            if (me.id == 0) {
                ipiv[first + j] = static_cast<int>(first + pivot.row) + 1;
                if (pivot.group_part[0] == 0.0f && workspace.info == 0)
                    workspace.info = first + j + 1;
            }
            swap_pivot_row(m, j, pivot);
            mine = eliminate_my_rows(m, j, group_end, pivot);
        }
        if (group_end < width) {
            publish(workspace.finished_column(me.id), first + group_end - 1);
            solve_group_rows(m, group_first, group_end);
            mine = update_my_rows(m, group_first, group_end);
        }
    }
#pragma omp barrier
}

}  // namespace tandem
