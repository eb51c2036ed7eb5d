// The inner loops of the parallel base case of the CPU panel (panel_base_case.cpp):
// each runs on one thread's own block of rows, which stays in that thread's cache
// across the columns of the base case.
//
// All matrices are column-major with leading dimension ld; row counts are those
// of the calling thread's block. The kernels are compiled for AVX-512, AVX2+FMA
// and baseline x86-64 and picked at load time (GCC target_clones), so the library
// stays portable while the base case runs at the machine's vector width.
#ifndef TANDEM_CPU_PANEL_KERNELS_HPP
#define TANDEM_CPU_PANEL_KERNELS_HPP

#include <cstdint>

namespace tandem {

// The largest |value| of one column over some rows and the first row holding it
// (LAPACK's isamax rule). NaNs never win; row is -1 (and value -1) when no row
// is a candidate (no rows, or only NaNs).
struct PivotCandidate {
    float value = -1.0f;
    int64_t row = -1;
};

// The candidate of x[0 .. n).
PivotCandidate find_pivot_candidate(int64_t n, const float* x);

// One column step of LU on n rows below the pivot row:
//   column[i] *= 1 / pivot (or column[i] /= pivot when |pivot| < sfmin, as
//   LAPACK's sgetf2; no scaling when pivot == 0), then for k < count:
//   right[i + k * ld] -= column[i] * u[k].
// Returns the pivot candidate of right column 0 after its update (rows relative
// to column), or no candidate when count == 0.
PivotCandidate eliminate_column(int64_t n, float* column, float pivot, float* right, int64_t ld,
                                const float* u, int count);

// Columns the base case factors with rank-1 updates before one rank-8 update of
// the columns to their right: each vector of 16 rows of those columns then gets
// 8 FMAs per load and store.
constexpr int kGroupWidth = 8;

// The rank-8 update of a block of columns by a group of kGroupWidth factored columns:
//   c(i, q) -= sum_{p < 8} l(i, p) * u(p, q)  for i < n, q < ncols,
// where l (n x 8), u (8 x ncols) and c (n x ncols) all have leading dimension ld
// and do not overlap. Returns the pivot candidate of column 0 of c after its
// update (rows relative to c), or no candidate when ncols == 0.
PivotCandidate update_with_group(int64_t n, const float* l, const float* u, float* c, int64_t ld,
                                 int ncols);

}  // namespace tandem

#endif
