#include "scheduler/cpu_panel.hpp"

#include <cblas.h>
#include <lapacke.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "scheduler/blas_threads.hpp"
#include "cpu/recursive_panel.hpp"
#include "tandem/tandem.hpp"

namespace tandem {

int factor_panel(int64_t rows, int width, float* panel, int64_t ld, int* ipiv,
                 PanelMethod method, int threads, PanelTeamUsage* usage) {
    if (usage != nullptr) *usage = PanelTeamUsage{};
    if (method != PanelMethod::lapack && rows >= width && width >= 1) {
        PanelOptions options;  // the automatic team, at most `threads`
        options.max_threads = std::max(threads, 0);
        options.usage = usage;
        return factor_panel_recursive(rows, width, panel, ld, ipiv, options);
    }
    const lapack_int info = LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, static_cast<lapack_int>(rows),
                                                width, panel, static_cast<lapack_int>(ld), ipiv);
    if (info < 0)
        throw Error(TANDEM_ERROR_INTERNAL,
                    "LAPACKE_sgetrf_work (panel) rejected argument " + std::to_string(-info));
    return info;
}

// Column blocks of inv(L11) solved by the team's threads: block [c, c + w) is
// the solve L11(c:, c:) X = I(c:, c : c + w) (inv(L11) is lower triangular, so
// its rows above c are zero). Not LAPACK's strtri: it runs on OpenBLAS's
// threads, which then spin for about 0.1 s (scheduler/blas_threads.hpp), into the
// next CPU panel's team a few milliseconds later in the factorization. (This
// was the first suspect for CPU panels that ran 13-17x slower in some runs on
// the H200 machine; those slow runs stayed after the change, so their cause
// lies elsewhere, see kCpuPanelPlanMargin.)
constexpr int kInverseBlockColumns = 32;

float invert_unit_lower(int width, const float* panel, int64_t ld, float* inv, int64_t ldi,
                        int max_threads) {
    if (width <= 0) return 0.0f;
    const int blocks = (width + kInverseBlockColumns - 1) / kInverseBlockColumns;
    const int team = max_threads > 0 ? std::min(max_threads, omp_get_max_threads()) : omp_get_max_threads();
    const int threads = std::max(1, std::min(team, blocks));
    const SingleThreadedBlas single_threaded_blas;
    // Dynamic: the blocks on the left solve taller triangles.
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (int b = 0; b < blocks; ++b) {
        const int c = b * kInverseBlockColumns;
        const int w = std::min(kInverseBlockColumns, width - c);
        for (int j = c; j < c + w; ++j) {
            float* col = inv + j * ldi;
            for (int i = 0; i < width; ++i) col[i] = i == j ? 1.0f : 0.0f;
        }
        cblas_strsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, width - c, w,
                    1.0f, panel + c + c * ld, static_cast<int>(ld), inv + c + c * ldi,
                    static_cast<int>(ldi));
    }
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
