#include "cpu/panel.hpp"

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "cpu/blas_threads.hpp"
#include "cpu/recursive_panel.hpp"
#include "tandem/tandem.hpp"

namespace tandem {

int factor_panel(int64_t rows, int width, float* panel, int64_t ld, int* ipiv,
                 PanelMethod method) {
    if (method != PanelMethod::lapack && rows >= width && width >= 1)
        return factor_panel_recursive(rows, width, panel, ld, ipiv, PanelOptions{});
    const lapack_int info = LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, static_cast<lapack_int>(rows),
                                                width, panel, static_cast<lapack_int>(ld), ipiv);
    if (info < 0)
        throw Error(TANDEM_ERROR_INTERNAL,
                    "LAPACKE_sgetrf_work (panel) rejected argument " + std::to_string(-info));
    return info;
}

namespace {

// ||inv||_1 of the lower triangle of inv; NaN when any column sum is NaN (so
// that it fails any threshold test and the TRSM path runs).
float lower_norm1(int width, const float* inv, int64_t ldi) {
    float norm1 = 0.0f;
    for (int j = 0; j < width; ++j) {
        float sum = 0.0f;
        for (int i = j; i < width; ++i) sum += std::fabs(inv[j * ldi + i]);
        if (std::isnan(sum)) return sum;
        norm1 = std::max(norm1, sum);
    }
    return norm1;
}

// LAPACK's strtri on a copy of the strict lower triangle (unit diagonal implied).
void invert_with_strtri(int width, const float* panel, int64_t ld, float* inv, int64_t ldi) {
    for (int j = 0; j < width; ++j) {
        float* col = inv + j * ldi;
        for (int i = 0; i < j; ++i) col[i] = 0.0f;
        col[j] = 1.0f;
        for (int i = j + 1; i < width; ++i) col[i] = panel[j * ld + i];
    }
    const lapack_int info =
        LAPACKE_strtri_work(LAPACK_COL_MAJOR, 'L', 'U', width, inv, static_cast<lapack_int>(ldi));
    if (info != 0)  // a unit triangle is never singular: info != 0 is an argument error
        throw Error(TANDEM_ERROR_INTERNAL, "LAPACKE_strtri_work failed with info " +
                                               std::to_string(info));
}

// inv(L11) one block of columns at a time: X(:, J) solves L11 X(:, J) = I(:, J),
// and since inv(L11) is lower triangular the block is zero above its first
// row, so only the trailing triangle L11(j0:, j0:) takes part. The blocks are
// independent, one OpenMP thread each, largest first: during the factorization
// OpenBLAS is held single-threaded, and strtri on one thread was a serial step
// of several ms in every CPU-panel step at width 512.
void invert_by_column_blocks(int width, const float* panel, int64_t ld, float* inv, int64_t ldi) {
    for (int j = 0; j < width; ++j) {
        float* col = inv + j * ldi;
        std::fill(col, col + width, 0.0f);
        col[j] = 1.0f;
    }
    constexpr int kBlock = 32;
    const int blocks = (width + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(dynamic, 1) if (width > 2 * kBlock)
    for (int b = 0; b < blocks; ++b) {
        const int j0 = b * kBlock;
        const int cols = std::min(kBlock, width - j0);
        cblas_strsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, width - j0, cols,
                    1.0f, panel + j0 * ld + j0, static_cast<int>(ld), inv + j0 * ldi + j0,
                    static_cast<int>(ldi));
    }
}

}  // namespace

// When OpenBLAS runs threads of its own (LAPACK panels), its strtri does the
// work: an OpenMP team started while its workers spin would compete with them
// (cpu/blas_threads.hpp).
float invert_unit_lower(int width, const float* panel, int64_t ld, float* inv, int64_t ldi) {
    if (openblas_get_num_threads() > 1)
        invert_with_strtri(width, panel, ld, inv, ldi);
    else
        invert_by_column_blocks(width, panel, ld, inv, ldi);
    return lower_norm1(width, inv, ldi);
}

}  // namespace tandem
