// The device panel beside the trailing update: how much slower a panel runs
// while an update's SGEMM holds the SMs, and whether it pays to give the panel
// SMs of its own. For the panels of an n = 16384 (or --n) factorization with
// 1024-wide steps, each panel launched together with the update it overlaps
// in the LU (same rows, k = the panel width), timed as
//   alone       panel and GEMM each alone
//   beside      both at once on the whole GPU, the panel's stream at high priority
//   reserve P   the update in a green context without P of the SMs, the panel
//               on the whole GPU at high priority
//   green P     both at once in disjoint green contexts: P SMs for the panel
// Medians of 5, ms. Built with the CUDA backend as build/bench/tandem-panel-beside-update.
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <stdexcept>
#include <vector>

#include "gpu/gemm.hpp"
#include "gpu/panel_leaf.hpp"
#include "gpu/recursive_panel.hpp"
#include "probe_check.hpp"

using namespace tandem::gpu;

namespace {

// One place for work: a context (primary or green), its stream, cuBLAS handle and events.
struct Lane {
    CUcontext context = nullptr;
    cudaStream_t stream = nullptr;
    cublasHandle_t blas = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    int sms = 0;
    void enter() const { CHECK(cuCtxSetCurrent(context)); }
};

Lane make_lane(CUcontext context, cudaStream_t stream, int sms) {
    Lane lane;
    lane.context = context;
    lane.stream = stream;
    lane.sms = sms;
    lane.enter();
    CHECK(cublasCreate(&lane.blas));
    CHECK(cublasSetStream(lane.blas, stream));
    CHECK(cudaEventCreate(&lane.start));
    CHECK(cudaEventCreate(&lane.stop));
    return lane;
}

// A green context of `sms` SMs (rounded as the driver requires) and one of the rest.
std::pair<Lane, Lane> green_lanes(CUdevice device, unsigned sms, int high, int low) {
    CUdevResource all, group, rest;
    CHECK(cuDeviceGetDevResource(device, &all, CU_DEV_RESOURCE_TYPE_SM));
    unsigned groups = 1;
    CHECK(cuDevSmResourceSplitByCount(&group, &groups, &all, &rest, 0, sms));
    CUdevResourceDesc panel_desc, update_desc;
    CHECK(cuDevResourceGenerateDesc(&panel_desc, &group, 1));
    CHECK(cuDevResourceGenerateDesc(&update_desc, &rest, 1));
    CUgreenCtx panel_green, update_green;
    CHECK(cuGreenCtxCreate(&panel_green, panel_desc, device, CU_GREEN_CTX_DEFAULT_STREAM));
    CHECK(cuGreenCtxCreate(&update_green, update_desc, device, CU_GREEN_CTX_DEFAULT_STREAM));
    CUstream panel_stream, update_stream;
    CHECK(cuGreenCtxStreamCreate(&panel_stream, panel_green, CU_STREAM_NON_BLOCKING, high));
    CHECK(cuGreenCtxStreamCreate(&update_stream, update_green, CU_STREAM_NON_BLOCKING, low));
    CUcontext panel_context, update_context;
    CHECK(cuCtxFromGreenCtx(&panel_context, panel_green));
    CHECK(cuCtxFromGreenCtx(&update_context, update_green));
    return {make_lane(panel_context, panel_stream, int(group.sm.smCount)),
            make_lane(update_context, update_stream, int(rest.sm.smCount))};
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    int64_t n = 16384;
    int nb = 1024;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--n")) n = std::atoll(argv[i + 1]);
        if (!std::strcmp(argv[i], "--nb")) nb = std::atoi(argv[i + 1]);
    }
    CHECK(cuInit(0));
    CUdevice device;
    CHECK(cuDeviceGet(&device, 0));
    CUcontext primary;
    CHECK(cuDevicePrimaryCtxRetain(&primary, device));
    CHECK(cuCtxSetCurrent(primary));
    int least = 0, greatest = 0;
    CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    int sm_count = 0;
    CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0));

    cudaStream_t panel_stream, update_stream;
    CHECK(cudaStreamCreateWithPriority(&panel_stream, cudaStreamNonBlocking, greatest));
    CHECK(cudaStreamCreateWithPriority(&update_stream, cudaStreamNonBlocking, least));
    const Lane primary_panel = make_lane(primary, panel_stream, sm_count);
    const Lane primary_update = make_lane(primary, update_stream, sm_count);

    // The panel (column-major, ld = n) and the update's operands, all in primary-context memory.
    const int64_t panel_floats = n * nb;
    const int64_t update_floats = n * n;
    std::vector<float> host(panel_floats);
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (float& x : host) x = u(rng);
    float *source, *panel, *c, *l21, *u12;
    int* ints;
    CHECK(cudaMalloc(&source, sizeof(float) * panel_floats));
    CHECK(cudaMalloc(&panel, sizeof(float) * panel_floats));
    CHECK(cudaMalloc(&c, sizeof(float) * update_floats));
    CHECK(cudaMalloc(&l21, sizeof(float) * n * nb));
    CHECK(cudaMalloc(&u12, sizeof(float) * n * nb));
    CHECK(cudaMalloc(&ints, sizeof(int) * (65536 + 1 + kLeafMovesInts)));
    CHECK(cudaMemcpy(source, host.data(), sizeof(float) * panel_floats, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(c, 0, sizeof(float) * update_floats));
    CHECK(cudaMemset(l21, 0, sizeof(float) * n * nb));
    CHECK(cudaMemset(u12, 0, sizeof(float) * n * nb));
    int* info = ints + 65536;
    int* moves = info + 1;

    // Panel of `rows` rows and the update A22 -= L21 U12 of the same step: rows x (rows - nb) x nb.
    auto issue_panel = [&](const Lane& lane, int64_t rows) {
        lane.enter();
        CHECK(cudaMemcpyAsync(panel, source, sizeof(float) * rows * nb, cudaMemcpyDeviceToDevice,
                              lane.stream));
        CHECK(cudaMemsetAsync(info, 0, sizeof(int), lane.stream));
        CHECK(cudaEventRecord(lane.start, lane.stream));
        const BlasQueue queue{lane.stream, lane.blas};
        const SubtractProduct subtract = [&, ld = rows](int64_t m, int64_t cols, int64_t k,
                                                        const float* x, const float* y, float* out) {
            gemm(queue, cols, m, k, -1.0f, y, ld, x, ld, 1.0f, out, ld);
        };
        factor_panel_recursive({panel, rows, true, rows, nb, ints, info, moves}, queue, subtract);
        CHECK(cudaEventRecord(lane.stop, lane.stream));
    };
    auto issue_update = [&](const Lane& lane, int64_t rows) {
        lane.enter();
        CHECK(cudaEventRecord(lane.start, lane.stream));
        const BlasQueue queue{lane.stream, lane.blas};
        gemm(queue, rows, rows - nb, nb, -1.0f, l21, nb, u12, rows, 1.0f, c, rows);  // row-major
        CHECK(cudaEventRecord(lane.stop, lane.stream));
    };
    auto elapsed = [](const Lane& lane) {
        lane.enter();
        CHECK(cudaEventSynchronize(lane.stop));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, lane.start, lane.stop));
        return double(ms);
    };
    // Panel and update timed alone (median of 5 after a warm-up), then together.
    auto run = [&](const char* label, const Lane& p, const Lane& up, int64_t rows) {
        std::vector<double> panel_alone, update_alone, panel_beside, update_beside, both;
        for (int r = 0; r < 6; ++r) {
            issue_panel(p, rows);
            const double pa = elapsed(p);
            issue_update(up, rows);
            const double ua = elapsed(up);
            CHECK(cudaDeviceSynchronize());
            // Together: the panel issued first so that its first kernels are queued when the GEMM arrives.
            issue_panel(p, rows);
            issue_update(up, rows);
            const double pb = elapsed(p), ub = elapsed(up);
            float span = 0;
            p.enter();
            // The two lanes' clocks are the GPU's: the span from the earlier start to the later stop.
            // (Events of two green contexts may not compare: then the larger of the two.)
            float p_to_u = 0;
            if (cudaEventElapsedTime(&p_to_u, p.start, up.start) != cudaSuccess) {
                (void)cudaGetLastError();
                p_to_u = 0;
            }
            span = std::max(float(pb), p_to_u + float(ub)) - std::min(0.0f, p_to_u);
            if (r == 0) continue;
            panel_alone.push_back(pa);
            update_alone.push_back(ua);
            panel_beside.push_back(pb);
            update_beside.push_back(ub);
            both.push_back(span);
        }
        const double gemm_flops = 2.0 * rows * (rows - nb) * nb;
        std::printf("  %-10s %3d/%3d SMs  rows %6lld: panel %7.3f alone %7.3f beside (%.2fx)  "
                    "update %7.3f alone (%5.1f TF/s) %7.3f beside  both %7.3f (sum alone %7.3f)\n",
                    label, p.sms, up.sms, (long long)rows, median(panel_alone), median(panel_beside),
                    median(panel_beside) / median(panel_alone), median(update_alone),
                    gemm_flops / median(update_alone) / 1e9, median(update_beside), median(both),
                    median(panel_alone) + median(update_alone));
    };

    std::vector<int64_t> rows_list;
    for (int64_t k = 1; k * nb < n; k += std::max<int64_t>(1, (n / nb) / 5)) rows_list.push_back(n - k * nb);
    std::printf("n %lld, nb %d: panels rows x %d, updates rows x (rows - %d) x %d, %d SMs\n",
                (long long)n, nb, nb, nb, nb, sm_count);
    // One measurement, skipped where the leaves (at the cluster limit set) do not reach.
    auto try_run = [&](const char* label, const Lane& p, const Lane& up, int64_t rows) {
        if (!recursive_panel_fits(rows)) {
            std::printf("  %-10s rows %6lld: the leaves do not reach\n", label, (long long)rows);
            return;
        }
        try {
            run(label, p, up, rows);
        } catch (const std::exception& e) {
            std::printf("  %-10s rows %6lld: %s\n", label, (long long)rows, e.what());
            (void)cudaGetLastError();
        }
    };
    for (int64_t rows : rows_list) try_run("beside", primary_panel, primary_update, rows);
    // Green contexts: the update on the rest of the SMs, the panel either on
    // its P SMs only ("green") or on the whole GPU, where P SMs are always free
    // of the update ("reserve").
    for (unsigned sms : {8u, 16u, 24u, 32u}) {
        auto [p, up] = green_lanes(device, sms, greatest, least);
        for (int64_t rows : rows_list) {
            char label[32];
            std::snprintf(label, sizeof label, "reserve%u", p.sms);
            try_run(label, primary_panel, up, rows);
            set_leaf_cluster_limit(8);  // a 16-block cluster may not fit P SMs
            std::snprintf(label, sizeof label, "green%u", p.sms);
            try_run(label, p, up, rows);
            set_leaf_cluster_limit(kDefaultLeafClusterLimit);
        }
    }
    return 0;
}
