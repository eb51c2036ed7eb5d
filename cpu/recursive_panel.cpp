#include "cpu/recursive_panel.hpp"

#include "scheduler/blas_threads.hpp"

#include <cblas.h>
#include <omp.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <mutex>
#include <string>
#include <vector>

#include "cpu/panel_base_case.hpp"
#include "tandem/tandem.hpp"

// Recursive LU of columns [first, first + count) of the panel, rows first .. rows-1
// (Toledo; Gustavson), with n1 + n2 = count:
//
//   [ A11 A12 ]      1. factor [A11; A21] (n1 columns), recursively
//   [ A21 A22 ]      2. apply its row interchanges to [A12; A22]
//                    3. A12 = inv(L11) * A12                      (TRSM)
//                    4. A22 -= A21 * A12                          (GEMM)
//                    5. factor A22 (n2 columns), recursively
//                    6. apply its row interchanges to [A11; A21] below A12
//
// One OpenMP team runs the whole panel, each thread owning the same contiguous
// block of rows throughout (panel_team.hpp): the leaves (at most base_width
// columns) are the cache-resident base case (panel_base_case.hpp), and in steps
// 2-4 and 6 each thread calls the BLAS, single-threaded, on its own share:
// columns of the interchanges and of the TRSM, its rows of the GEMM, which are the
// rows it factors next, still in its cache. OpenBLAS's own threads stay out of
// it, its thread count being 1 for the duration of the panel: two thread pools
// taking turns on the same cores (OpenMP's threads spinning while OpenBLAS's run,
// and the reverse) made the panel several times slower than either pool alone.

namespace tandem {
namespace {

struct Panel {
    int64_t rows;
    float* a;
    int64_t ld;
    int* ipiv;
    int base_width;
    BaseCaseWorkspace* workspace;

    float* at(int64_t row, int64_t col) const { return a + row + col * ld; }
};

// The team: as asked, but never below kMinRowsPerThread rows a thread; when not
// asked, all of OpenMP's threads down to kAutomaticRowsPerThread rows a thread,
// below which a smaller team finishes first (each column costs the team one
// exchange of candidates, dearer with more threads; measured on a 16-core Xeon).
int team_size(int64_t rows, int requested, int cap) {
    constexpr int64_t kAutomaticRowsPerThread = 512;
    const int64_t limit = requested > 0 ? rows / kMinRowsPerThread : rows / kAutomaticRowsPerThread;
    int64_t wanted = requested > 0 ? requested : std::max(1, omp_get_max_threads());
    if (requested <= 0 && cap > 0) wanted = std::min<int64_t>(wanted, cap);
    return static_cast<int>(std::clamp<int64_t>(limit, 1, wanted));
}

// Base cases of 32 columns were fastest or within a few percent of it on every
// panel measured (4096..65536 rows, 128..512 columns, 16 cores): narrower ones
// need more of the recursion's TRSMs and GEMMs, wider ones more rank-8 updates.
constexpr int kAutomaticBaseWidth = 32;

// My contiguous share of `count` items split over the team.
struct Share {
    int first;
    int count;
};

Share my_share(const TeamMember& me, int count) {
    const int base = count / me.size();
    const int extra = count % me.size();
    return {me.id * base + std::min(me.id, extra), base + (me.id < extra ? 1 : 0)};
}

// Interchanges first_pivot .. first_pivot + count - 1 (rows k and ipiv[k] - 1, in
// order, as LAPACK's slaswp) applied to my share of columns [first_col,
// first_col + cols). Ends with a barrier.
void apply_swaps(const TeamMember& me, const Panel& p, int first_col, int cols, int first_pivot,
                 int count) {
    const Share mine = my_share(me, cols);
    for (int c = first_col + mine.first; c < first_col + mine.first + mine.count; ++c) {
        float* column = p.at(0, c);
        for (int k = first_pivot; k < first_pivot + count; ++k) {
            const int target = p.ipiv[k] - 1;
            if (target != k) std::swap(column[k], column[target]);
        }
    }
#pragma omp barrier
}

// A12 = inv(L11) * A12 on my share of A12's columns, L11 the unit lower n1 x n1
// block at (first, first). Ends with a barrier.
void solve_top_right(const TeamMember& me, const Panel& p, int first, int n1, int n2) {
    const Share mine = my_share(me, n2);
    if (mine.count > 0)
        cblas_strsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, n1, mine.count,
                    1.0f, p.at(first, first), static_cast<int>(p.ld),
                    p.at(first, first + n1 + mine.first), static_cast<int>(p.ld));
#pragma omp barrier
}

// A22 -= A21 * A12 on my rows of A22 (below row first + n1). No barrier follows:
// the next thing to read these rows is the base case, whose other threads see my
// rows only through what I publish after my own update.
void update_bottom_right(const TeamMember& me, const Panel& p, int first, int n1, int n2) {
    const int64_t begin = std::max<int64_t>(me.begin, first + n1);
    const int64_t rows = me.end - begin;
    if (rows <= 0) return;
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows), n2, n1, -1.0f,
                p.at(begin, first), static_cast<int>(p.ld), p.at(first, first + n1),
                static_cast<int>(p.ld), 1.0f, p.at(begin, first + n1), static_cast<int>(p.ld));
}

// The split keeps n1 a multiple of 8 where possible, so that every leaf starts on
// a group boundary of the base case and the GEMMs see aligned k.
int left_width(int count) {
    const int half = count / 2;
    return half >= 16 ? half / 8 * 8 : half;
}

// The calling thread's CPU time and involuntary context switches so far.
struct ThreadUsage {
    double cpu_seconds = 0.0;
    long involuntary_switches = 0;
};

ThreadUsage this_thread_usage() {
    ThreadUsage u;
    timespec t{};
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) == 0)
        u.cpu_seconds = double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
#ifdef RUSAGE_THREAD
    rusage r{};
    if (getrusage(RUSAGE_THREAD, &r) == 0) u.involuntary_switches = r.ru_nivcsw;
#endif
    return u;
}

// Called by every thread of the team.
void factor_columns(const TeamMember& me, const Panel& p, int first, int count) {
    if (count <= p.base_width) {
        factor_base_case(me, p.rows, first, count, p.a, p.ld, p.ipiv, *p.workspace);
        return;
    }
    const int n1 = left_width(count);
    const int n2 = count - n1;
    factor_columns(me, p, first, n1);
    apply_swaps(me, p, first + n1, n2, first, n1);
    solve_top_right(me, p, first, n1, n2);
    update_bottom_right(me, p, first, n1, n2);
    factor_columns(me, p, first + n1, n2);
    apply_swaps(me, p, first, n1, first + n1, n2);
}



}  // namespace

int panel_threads(int64_t rows, const PanelOptions& options) {
    return team_size(rows, options.threads, options.max_threads);
}

int factor_panel_recursive(int64_t rows, int width, float* panel, int64_t ld, int* ipiv,
                           const PanelOptions& options) {
    if (width < 1 || rows < width || rows > INT_MAX || ld < rows || ld > INT_MAX ||
        panel == nullptr || ipiv == nullptr || options.threads < 0 || options.max_threads < 0 || options.base_width < 0)
        throw Error(TANDEM_ERROR_INTERNAL,
                    "factor_panel_recursive: bad panel " + std::to_string(rows) + " x " +
                        std::to_string(width) + " (ld " + std::to_string(ld) + ", threads " +
                        std::to_string(options.threads) + ", base width " +
                        std::to_string(options.base_width) + ")");
    const int threads = panel_threads(rows, options);
    const int base_width =
        std::min(options.base_width > 0 ? options.base_width : kAutomaticBaseWidth, width);
    // The recursion halves until a part is at most base_width wide, so leaves are
    // never wider than base_width.
    BaseCaseWorkspace workspace(threads, base_width);
    const Panel p{rows, panel, ld, ipiv, base_width, &workspace};
    const SingleThreadedBlas single_threaded_blas;
    // Each thread's usage before and after its part, when asked for.
    std::vector<ThreadUsage> before(options.usage ? threads : 0), after(before.size());
    int team = 0;
    const auto start = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads)
    {
        // The team may be smaller than asked (nested parallelism off, thread
        // limits): the rows are split over the threads actually running.
        const RowPartition partition(rows, omp_get_num_threads(), panel);
        const int id = omp_get_thread_num();
        if (options.usage) before[id] = this_thread_usage();
        factor_columns({&partition, id, partition.begin(id), partition.end(id)}, p, 0, width);
        if (options.usage) after[id] = this_thread_usage();
        if (id == 0) team = omp_get_num_threads();
    }
    if (options.usage) {
        PanelTeamUsage& u = *options.usage;
        u.threads = team;
        u.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        u.least_thread_cpu_seconds = team > 0 ? after[0].cpu_seconds - before[0].cpu_seconds : 0.0;
        u.involuntary_switches = 0;
        for (int t = 0; t < team; ++t) {
            u.least_thread_cpu_seconds =
                std::min(u.least_thread_cpu_seconds, after[t].cpu_seconds - before[t].cpu_seconds);
            u.involuntary_switches += after[t].involuntary_switches - before[t].involuntary_switches;
        }
    }
    return workspace.info;
}

}  // namespace tandem
