#include "src/layout.hpp"

#include <algorithm>
#include <new>

#include "tandem/tandem.hpp"

namespace tandem::detail {

std::vector<float> col_major_copy(int64_t rows, int64_t cols, const float* src, int64_t ld) {
    const int64_t ldc = std::max<int64_t>(rows, 1);
    std::vector<float> out;
    try {
        out.resize(static_cast<size_t>(ldc * cols));
    } catch (const std::bad_alloc&) {
        throw Error(TANDEM_ERROR_OUT_OF_MEMORY, "tandem: no memory for a row-major copy of " +
                                                    std::to_string(rows) + " x " +
                                                    std::to_string(cols));
    }
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) out[j * ldc + i] = src[i * ld + j];
    return out;
}

void store_row_major(int64_t rows, int64_t cols, const float* src, float* dst, int64_t ld) {
    const int64_t lds = std::max<int64_t>(rows, 1);
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) dst[i * ld + j] = src[j * lds + i];
}

}  // namespace tandem::detail
