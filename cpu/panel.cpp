#include "cpu/panel.hpp"

#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <string>

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

float invert_unit_lower(int width, const float* panel, int64_t ld, float* inv, int64_t ldi) {
    // Copy the strict lower triangle (the diagonal is an implied 1), zero above.
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
    float norm1 = 0.0f;
    for (int j = 0; j < width; ++j) {
        float sum = 0.0f;
        for (int i = j; i < width; ++i) sum += std::fabs(inv[j * ldi + i]);
        if (std::isnan(sum)) return sum;  // fails any threshold test: the TRSM path runs
        norm1 = std::max(norm1, sum);
    }
    return norm1;
}

}  // namespace tandem
