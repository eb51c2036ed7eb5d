// Probe: does cuBLAS have a faster FP32 SIMT kernel for the LU's trailing
// update than the one cublasSgemm picks? For each shape (row-major C -= A B,
// m x n x k, given to cuBLAS as the column-major C^T -= B^T A^T), times
//   * cublasSgemm (what tandem calls),
//   * every algorithm cublasLtMatmulAlgoGetHeuristic offers (up to 32), and
//   * every (algorithm id, tile, stages) that cublasLtMatmulAlgoCheck accepts,
//     split-k off (the exhaustive search of cuBLASLt's autotuning sample),
// and prints the fastest few with their configuration. Each configuration is
// timed once, the fastest 8 (and the heuristic's first) then as medians of 5
// CUDA-event times; pure FP32 compute (CUBLAS_COMPUTE_32F: no TF32).
//
// Build:
//   nvcc -O3 -std=c++17 -arch=sm_90 tools/probes/cublaslt_algorithms.cu -o build/cublaslt_algorithms -lcublasLt -lcublas
// Run:
//   build/cublaslt_algorithms 31744x31744x1024 32256x32256x512 8192x8192x8192
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "probe_check.cuh"
#include "probe_data.cuh"

namespace {

constexpr size_t kWorkspaceBytes = size_t(64) << 20;
constexpr int kRepeats = 5;          // timings of the finalists
constexpr int kFinalists = 8;        // configurations timed kRepeats times after one timing each
constexpr size_t kMaxConfigs = 400;  // per shape

struct Shape {
    int64_t m, n, k;
};

struct Timed {
    double ms;
    std::string what;
    cublasLtMatmulAlgo_t algo;
};

template <class Run>
double time_ms(Run run, int repeats = kRepeats) {
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    run();  // warm-up
    std::vector<double> times;
    for (int r = 0; r < repeats; ++r) {
        CHECK(cudaEventRecord(start));
        run();
        CHECK(cudaEventRecord(stop));
        CHECK(cudaEventSynchronize(stop));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, start, stop));
        times.push_back(ms);
    }
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    return median(times);
}

std::string describe(const cublasLtMatmulAlgo_t& algo) {
    int id = 0, tile = 0, stages = 0, splitk = 0, swizzle = 0, reduction = 0;
    size_t written = 0;
    cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &written);
    cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &written);
    cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages,
                                         &written);
    cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk,
                                         &written);
    cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swizzle,
                                         sizeof swizzle, &written);
    cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &reduction,
                                         sizeof reduction, &written);
    char text[160];
    std::snprintf(text, sizeof text, "algo %d tile %d stages %d splitk %d swizzle %d reduction %d", id,
                  tile, stages, splitk, swizzle, reduction);
    return text;
}

void probe(const Shape& s, cublasHandle_t blas, cublasLtHandle_t lt, void* workspace) {
    float *a, *b, *c;
    CHECK(cudaMalloc(&a, sizeof(float) * s.m * s.k));
    CHECK(cudaMalloc(&b, sizeof(float) * s.k * s.n));
    CHECK(cudaMalloc(&c, sizeof(float) * s.m * s.n));
    fill_random(a, size_t(s.m * s.k), 1);
    fill_random(b, size_t(s.k * s.n), 2);
    fill_random(c, size_t(s.m * s.n), 3);
    const float minus_one = -1.0f, one = 1.0f;
    const double tflop = 2.0 * s.m * s.n * s.k * 1e-12;
    std::vector<Timed> results;

    // Column-major view: C^T (n x m, ld n) -= B^T (n x k, ld n) A^T (k x m, ld k).
    const double sgemm_ms = time_ms([&] {
        CHECK_STATUS(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, int(s.n), int(s.m), int(s.k), &minus_one,
                                 b, int(s.n), a, int(s.k), &one, c, int(s.n)));
    });

    cublasLtMatmulDesc_t op;
    CHECK_STATUS(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasLtMatrixLayout_t lb, la, lc;
    CHECK_STATUS(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, s.n, s.k, s.n));
    CHECK_STATUS(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, s.k, s.m, s.k));
    CHECK_STATUS(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, s.n, s.m, s.n));
    cublasLtMatmulPreference_t pref;
    CHECK_STATUS(cublasLtMatmulPreferenceCreate(&pref));
    CHECK_STATUS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                      &kWorkspaceBytes, sizeof kWorkspaceBytes));
    // Times `algo` once (after a warm-up), or `repeats` times; a negative time if it cannot run.
    auto time_algo = [&](const cublasLtMatmulAlgo_t& algo, int repeats) {
        bool failed = false;
        const double ms = time_ms(
            [&] {
                if (cublasLtMatmul(lt, op, &minus_one, b, lb, a, la, &one, c, lc, c, lc, &algo, workspace,
                                   kWorkspaceBytes, 0) != CUBLAS_STATUS_SUCCESS)
                    failed = true;
            },
            repeats);
        return failed ? -1.0 : ms;
    };
    auto run_algo = [&](const cublasLtMatmulAlgo_t& algo, const char* source) {
        if (results.size() >= kMaxConfigs) return;
        cublasLtMatmulHeuristicResult_t check{};
        if (cublasLtMatmulAlgoCheck(lt, op, lb, la, lc, lc, &algo, &check) != CUBLAS_STATUS_SUCCESS) return;
        if (check.workspaceSize > kWorkspaceBytes) return;
        const double ms = time_algo(algo, 1);
        if (ms > 0) results.push_back({ms, std::string(source) + " " + describe(algo), algo});
    };

    cublasLtMatmulHeuristicResult_t heuristic[32];
    int found = 0;
    CHECK_STATUS(cublasLtMatmulAlgoGetHeuristic(lt, op, lb, la, lc, lc, pref, 32, heuristic, &found));
    for (int i = 0; i < found; ++i) run_algo(heuristic[i].algo, i == 0 ? "heuristic#0" : "heuristic");

    int ids[64];
    int id_count = 0;
    CHECK_STATUS(cublasLtMatmulAlgoGetIds(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                                          CUDA_R_32F, CUDA_R_32F, 64, ids, &id_count));
    for (int i = 0; i < id_count; ++i) {
        cublasLtMatmulAlgo_t algo;
        if (cublasLtMatmulAlgoInit(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                                   CUDA_R_32F, ids[i], &algo) != CUBLAS_STATUS_SUCCESS)
            continue;
        size_t bytes = 0;
        cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_TILE_IDS, nullptr, 0, &bytes);
        std::vector<int> tiles(std::max<size_t>(1, bytes / sizeof(int)), CUBLASLT_MATMUL_TILE_UNDEFINED);
        if (bytes) cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_TILE_IDS, tiles.data(), bytes, &bytes);
        cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_STAGES_IDS, nullptr, 0, &bytes);
        std::vector<int> stages(std::max<size_t>(1, bytes / sizeof(int)), CUBLASLT_MATMUL_STAGES_UNDEFINED);
        if (bytes) cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_STAGES_IDS, stages.data(), bytes, &bytes);
        for (int tile : tiles)
            for (int stage : stages)
                for (int swizzle : {0, 1}) {
                    cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile);
                    cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stage,
                                                         sizeof stage);
                    cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swizzle,
                                                         sizeof swizzle);
                    run_algo(algo, "search");
                }
    }

    auto by_time = [](const Timed& x, const Timed& y) { return x.ms < y.ms; };
    std::sort(results.begin(), results.end(), by_time);
    // The finalists and the heuristic's first choice again, kRepeats times each.
    for (size_t i = 0; i < results.size(); ++i)
        if (i < size_t(kFinalists) || results[i].what.rfind("heuristic#0", 0) == 0)
            results[i].ms = time_algo(results[i].algo, kRepeats);
    std::sort(results.begin(), results.begin() + std::min(results.size(), size_t(kFinalists)), by_time);
    std::printf("%lld x %lld x %lld: cublasSgemm %.3f ms %.1f TF/s; %zu cuBLASLt configurations ran\n",
                (long long)s.m, (long long)s.n, (long long)s.k, sgemm_ms, tflop / sgemm_ms * 1e3,
                results.size());
    for (size_t i = 0; i < results.size() && i < 6; ++i)
        std::printf("  %.3f ms %.1f TF/s (%.3fx cublasSgemm)  %s\n", results[i].ms,
                    tflop / results[i].ms * 1e3, sgemm_ms / results[i].ms, results[i].what.c_str());
    for (const Timed& t : results)
        if (t.what.rfind("heuristic#0", 0) == 0)
            std::printf("  heuristic's first: %.3f ms %.1f TF/s  %s\n", t.ms, tflop / t.ms * 1e3, t.what.c_str());
    std::fflush(stdout);

    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(la), cublasLtMatrixLayoutDestroy(lb), cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(op);
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(c));
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<Shape> shapes;
    for (int i = 1; i < argc; ++i) {
        Shape s{};
        if (std::sscanf(argv[i], "%lldx%lldx%lld", (long long*)&s.m, (long long*)&s.n, (long long*)&s.k) != 3) {
            std::fprintf(stderr, "usage: %s MxNxK...\n", argv[0]);
            return 2;
        }
        shapes.push_back(s);
    }
    cublasHandle_t blas;
    cublasLtHandle_t lt;
    CHECK_STATUS(cublasCreate(&blas));
    CHECK_STATUS(cublasSetMathMode(blas, CUBLAS_DEFAULT_MATH));  // as tandem (FP32; TF32 only if asked)
    CHECK_STATUS(cublasLtCreate(&lt));
    void* workspace;
    CHECK(cudaMalloc(&workspace, kWorkspaceBytes));
    for (const Shape& s : shapes) probe(s, blas, lt, workspace);
    CHECK(cudaFree(workspace));
    cublasLtDestroy(lt);
    cublasDestroy(blas);
    return 0;
}
