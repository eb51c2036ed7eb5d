// Probe: does launching cuSOLVER's panel getrf as a CUDA graph make the device
// panel faster, alone or beside the trailing update? At n = 16384 the chain of
// device panels sets the pace (each panel outlasts the update beside it), and
// cusolverDnSgetrf issues a handful of small kernels per block of columns, so
// the gaps between them may matter. For each m x w column-major panel:
//   * getrf issued directly, and the same getrf captured once into a graph and
//     replayed, each alone (CUDA events around it);
//   * both again beside an m x m x w SGEMM on a low-priority stream (the
//     panel's stream at high priority, as in tandem), the panel timed by its
//     own events and the pair by the host.
// Medians of 7; the panel is restored from a pristine copy before each run.
// Also: the update split into 2 and 4 products along k, beside the direct getrf.
//
// Build:
//   nvcc -O3 -std=c++17 -arch=sm_90 tools/probes/panel_graph.cu -o build/panel_graph -lcusolver -lcublas
// Run:
//   build/panel_graph 12288x512 8192x512 8192x1024 4096x256
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "probe_check.cuh"
#include "probe_data.cuh"

namespace {

constexpr int kRepeats = 7;

struct Timing {
    double panel_ms, pair_ms;
};

void probe(int m, int w, cusolverDnHandle_t solver, cublasHandle_t blas, cudaStream_t panel_stream,
           cudaStream_t gemm_stream) {
    float *pristine, *panel, *work, *ga, *gb, *gc;
    int *pivots, work_floats = 0;
    CHECK(cudaMalloc(&pristine, sizeof(float) * m * w));
    CHECK(cudaMalloc(&panel, sizeof(float) * m * w));
    CHECK(cudaMalloc(&pivots, sizeof(int) * (w + 1)));
    CHECK(cudaMalloc(&ga, sizeof(float) * m * w));
    CHECK(cudaMalloc(&gb, sizeof(float) * w * m));
    CHECK(cudaMalloc(&gc, sizeof(float) * m * m));
    fill_random(pristine, size_t(m) * w, 7);
    fill_random(ga, size_t(m) * w, 8);
    fill_random(gb, size_t(m) * w, 9);
    fill_random(gc, size_t(m) * m, 10);
    CHECK_STATUS(cusolverDnSetStream(solver, panel_stream));
    CHECK_STATUS(cublasSetStream(blas, gemm_stream));
    CHECK_STATUS(cusolverDnSgetrf_bufferSize(solver, m, w, panel, m, &work_floats));
    CHECK(cudaMalloc(&work, sizeof(float) * std::max(work_floats, 1)));
    auto getrf = [&] { CHECK_STATUS(cusolverDnSgetrf(solver, m, w, panel, m, work, pivots, pivots + w)); };

    cudaGraph_t graph;
    cudaGraphExec_t graph_exec;
    CHECK(cudaStreamBeginCapture(panel_stream, cudaStreamCaptureModeThreadLocal));
    getrf();
    CHECK(cudaStreamEndCapture(panel_stream, &graph));
    CHECK(cudaGraphInstantiate(&graph_exec, graph, 0));
    size_t nodes = 0;
    CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));

    const float minus_one = -1.0f, one = 1.0f;
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    int update_chunks = 1;
    auto run = [&](bool as_graph, bool beside_gemm) {
        std::vector<double> panel_ms, pair_ms;
        for (int r = 0; r < kRepeats + 1; ++r) {
            CHECK(cudaMemcpyAsync(panel, pristine, sizeof(float) * m * w, cudaMemcpyDeviceToDevice,
                                  panel_stream));
            CHECK(cudaDeviceSynchronize());
            const auto t0 = std::chrono::steady_clock::now();
            if (beside_gemm)
                for (int c = 0; c < update_chunks; ++c) {
                    const int kc = w / update_chunks;
                    CHECK_STATUS(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, m, m, kc, &minus_one,
                                             ga + size_t(c) * kc * m, m, gb + size_t(c) * kc, w, &one, gc, m));
                }
            CHECK(cudaEventRecord(start, panel_stream));
            if (as_graph)
                CHECK(cudaGraphLaunch(graph_exec, panel_stream));
            else
                getrf();
            CHECK(cudaEventRecord(stop, panel_stream));
            CHECK(cudaDeviceSynchronize());
            const double pair = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            float ms = 0;
            CHECK(cudaEventElapsedTime(&ms, start, stop));
            if (r > 0) panel_ms.push_back(ms), pair_ms.push_back(pair);  // the first is a warm-up
        }
        return Timing{median(panel_ms), median(pair_ms)};
    };
    const Timing direct = run(false, false), graphed = run(true, false);
    const Timing direct_beside = run(false, true), graphed_beside = run(true, true);
    // The update issued as `chunks` products of k = w / chunks each: its blocks
    // run chunks times shorter, so the panel's kernels wait less for SMs.
    std::vector<Timing> split;
    for (int chunks : {2, 4}) {
        update_chunks = chunks;
        split.push_back(run(false, true));
    }
    update_chunks = 1;
    std::printf("%d x %d (%zu graph nodes): alone %.3f ms direct, %.3f ms graph | beside a %d x %d x %d SGEMM: "
                "panel %.3f / %.3f ms, pair %.3f / %.3f ms (direct / graph)\n",
                m, w, nodes, direct.panel_ms, graphed.panel_ms, m, m, w, direct_beside.panel_ms,
                graphed_beside.panel_ms, direct_beside.pair_ms, graphed_beside.pair_ms);
    std::printf("  the update in 2 / 4 products of k = %d / %d: panel %.3f / %.3f ms, pair %.3f / %.3f ms\n", w / 2,
                w / 4, split[0].panel_ms, split[1].panel_ms, split[0].pair_ms, split[1].pair_ms);
    std::fflush(stdout);
    CHECK(cudaGraphExecDestroy(graph_exec));
    CHECK(cudaGraphDestroy(graph));
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    for (void* p : {(void*)pristine, (void*)panel, (void*)work, (void*)pivots, (void*)ga, (void*)gb, (void*)gc})
        CHECK(cudaFree(p));
}

}  // namespace

int main(int argc, char** argv) {
    cusolverDnHandle_t solver;
    cublasHandle_t blas;
    CHECK_STATUS(cusolverDnCreate(&solver));
    CHECK_STATUS(cublasCreate(&blas));
    int least = 0, greatest = 0;
    CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    cudaStream_t panel_stream, gemm_stream;
    CHECK(cudaStreamCreateWithPriority(&panel_stream, cudaStreamNonBlocking, greatest));
    CHECK(cudaStreamCreateWithPriority(&gemm_stream, cudaStreamNonBlocking, least));
    for (int i = 1; i < argc; ++i) {
        int m = 0, w = 0;
        if (std::sscanf(argv[i], "%dx%d", &m, &w) != 2) {
            std::fprintf(stderr, "usage: %s MxW...\n", argv[0]);
            return 2;
        }
        probe(m, w, solver, blas, panel_stream, gemm_stream);
    }
    cusolverDnDestroy(solver);
    cublasDestroy(blas);
    return 0;
}
