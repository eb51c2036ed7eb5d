// Copies between the caller's row-major arrays and the column-major form the
// algorithm works on.
#ifndef TANDEM_SRC_LAYOUT_HPP
#define TANDEM_SRC_LAYOUT_HPP

#include <cstdint>
#include <vector>

namespace tandem::detail {

// Column-major copy (leading dimension max(rows,1)) of the rows x cols row-major matrix src (ld).
std::vector<float> col_major_copy(int64_t rows, int64_t cols, const float* src, int64_t ld);

// dst (row-major, ld) = the rows x cols column-major matrix src (leading dimension max(rows,1)).
void store_row_major(int64_t rows, int64_t cols, const float* src, float* dst, int64_t ld);

}  // namespace tandem::detail

#endif
