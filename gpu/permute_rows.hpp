// Row permutations applied as one gather: the solve's on column-major
// right-hand sides, a block's catch-up on row-major storage, and the columns
// that arrive beside the one-panel call's factorization.
#ifndef TANDEM_GPU_PERMUTE_ROWS_HPP
#define TANDEM_GPU_PERMUTE_ROWS_HPP

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tandem::gpu {

// in and out are rows x cols column-major device arrays (ld_in, ld_out >= rows)
// that must not overlap; perm is a device array holding a permutation of
// 0 .. rows-1.
//   gather  (scatter = false): out(i, c) = in(perm[i], c)   -- P * B
//   scatter (scatter = true):  out(perm[i], c) = in(i, c)   -- P^T * B
// Issued on `stream`.
void permute_rows(const float* in, int64_t ld_in, float* out, int64_t ld_out, int64_t rows,
                  int64_t cols, const int* perm, bool scatter, cudaStream_t stream);

// Row-major storage: out row i (cols floats) = in row perm[i], for i < rows.
// in and out must not overlap; perm is a device array of rows entries.
// Issued on `stream`. (Rows are contiguous here, so a warp copies along a row.)
void gather_rows_row_major(const float* in, int64_t ld_in, float* out, int64_t ld_out,
                           int64_t rows, int64_t cols, const int* perm, cudaStream_t stream);

// The interchanges k = 0 .. count-1 (swap rows k and ipiv[k]-1; ipiv 1-based,
// host memory) of a matrix of `rows` rows as one permutation (host memory):
// perm[i] = the row that row i holds after them, so that (P B)(i, :) =
// B(perm[i], :). A pivot outside 1 .. rows, or with `from_factorization`
// above its column's diagonal (ipiv[k] <= k, which no LU gives), throws
// TANDEM_ERROR_INTERNAL, naming `who`.
std::vector<int> fold_pivots(const int* ipiv, int64_t count, int64_t rows, const std::string& who,
                             bool from_factorization = false);

// perm[i] = i for i < rows (device array). Issued on `stream`.
void iota_rows(int* perm, int64_t rows, cudaStream_t stream);

// Folds the interchanges k = first .. first+count-1 (swap entries k and
// ipiv[k]-1; ipiv a HOST array of 1-based rows, copied into the launches'
// parameters) into the device permutation perm, in order: perm then maps each
// row of the interchanged matrix to its row before. Issued on `stream`.
void fold_swaps(int* perm, int64_t first, int64_t count, const int* ipiv, cudaStream_t stream);

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_PERMUTE_ROWS_HPP
