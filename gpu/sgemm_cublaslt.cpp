#include "gpu/sgemm_cublaslt.hpp"
#include "gpu/device_buffer.hpp"

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <mutex>
#include <vector>

#include "gpu/cuda_check.hpp"
#include "gpu/gemm.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {
namespace {

// The configuration, as cuBLASLt numbers it (CUDA 13.0; found by an
// exhaustive search over algorithms, tiles and stages on the LU's shapes).
constexpr int kAlgorithm = 55;
constexpr int kTile = CUBLASLT_MATMUL_TILE_256x128;
constexpr int kStages = 31;  // the algorithm's own stage count
constexpr uint32_t kSwizzle = 1;

const SgemmVariant& cublas_fallback() {
    static const SgemmVariant variant = make_cublas_variant();
    return variant;
}

// One cuBLASLt handle per device (a handle is tied to the device current at
// its creation), made at first use and kept until release_cublaslt_handles.
struct LtHandles {
    std::mutex mutex;
    std::vector<cublasLtHandle_t> by_device;
};

LtHandles& lt_handles() {
    static LtHandles* handles = new LtHandles;  // never destroyed at exit, as the GPU pool
    return *handles;
}

cublasLtHandle_t handle_for_current_device() {
    int device = 0;
    TANDEM_CUDA_CHECK(cudaGetDevice(&device));
    LtHandles& handles = lt_handles();
    std::lock_guard<std::mutex> lock(handles.mutex);
    if (handles.by_device.size() <= size_t(device)) handles.by_device.resize(size_t(device) + 1, nullptr);
    cublasLtHandle_t& handle = handles.by_device[size_t(device)];
    if (!handle) TANDEM_CUBLAS_CHECK(cublasLtCreate(&handle));
    return handle;
}

// The descriptors of one product, destroyed with it.
struct LtProduct {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t b = nullptr, a = nullptr, c = nullptr;
    ~LtProduct() {
        if (c) cublasLtMatrixLayoutDestroy(c);
        if (a) cublasLtMatrixLayoutDestroy(a);
        if (b) cublasLtMatrixLayoutDestroy(b);
        if (op) cublasLtMatmulDescDestroy(op);
    }
};

// Describes the product and the configuration to cuBLASLt; false where the
// configuration cannot take it. As for cublasSgemm (gpu/gemm.cpp), the
// row-major C = A B is the column-major C^T = B^T A^T on the same memory, so B
// comes first.
bool configure(const SgemmArgs& args, cublasLtHandle_t lt, LtProduct& product, cublasLtMatmulAlgo_t& algo) {
    if (!sgemm_all_vector_aligned(args)) return false;
    TANDEM_CUBLAS_CHECK(cublasLtMatmulDescCreate(&product.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    TANDEM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&product.b, CUDA_R_32F, uint64_t(args.n),
                                                   uint64_t(args.k), args.ldb));
    TANDEM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&product.a, CUDA_R_32F, uint64_t(args.k),
                                                   uint64_t(args.m), args.lda));
    TANDEM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&product.c, CUDA_R_32F, uint64_t(args.n),
                                                   uint64_t(args.m), args.ldc));
    if (cublasLtMatmulAlgoInit(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                               CUDA_R_32F, kAlgorithm, &algo) != CUBLAS_STATUS_SUCCESS)
        return false;
    TANDEM_CUBLAS_CHECK(
        cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &kTile, sizeof kTile));
    TANDEM_CUBLAS_CHECK(cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &kStages,
                                                             sizeof kStages));
    TANDEM_CUBLAS_CHECK(cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING,
                                                             &kSwizzle, sizeof kSwizzle));
    cublasLtMatmulHeuristicResult_t check{};
    return cublasLtMatmulAlgoCheck(lt, product.op, product.b, product.a, product.c, product.c, &algo,
                                   &check) == CUBLAS_STATUS_SUCCESS &&
           check.workspaceSize == 0;
}

void run_cublaslt(const SgemmArgs& args, const SgemmStream& where) {
    const cublasLtHandle_t lt = handle_for_current_device();
    LtProduct product;
    cublasLtMatmulAlgo_t algo;
    if (!configure(args, lt, product, algo)) return cublas_fallback().run(args, where);
    TANDEM_CUBLAS_CHECK(cublasLtMatmul(lt, product.op, &args.alpha, args.b, product.b, args.a, product.a,
                                       &args.beta, args.c, product.c, args.c, product.c, &algo, nullptr, 0,
                                       static_cast<cudaStream_t>(where.stream)));
}

}  // namespace

void release_cublaslt_handles(const std::vector<bool>& context_reset) {
    LtHandles& handles = lt_handles();
    std::lock_guard<std::mutex> lock(handles.mutex);
    for (size_t device = 0; device < handles.by_device.size(); ++device) {
        cublasLtHandle_t& handle = handles.by_device[device];
        // A failure leaves nothing to undo; after a context reset, nothing to destroy.
        const bool reset = device < context_reset.size() && context_reset[device];
        if (handle && !reset) cublasLtDestroy(handle);
        handle = nullptr;
    }
}

bool cublaslt_takes(const SgemmArgs& args) {
    LtProduct product;
    cublasLtMatmulAlgo_t algo;
    return configure(args, handle_for_current_device(), product, algo);
}

SgemmVariant make_cublaslt_variant() {
    SgemmVariant variant;
    variant.name = kCublasLtVariant;
    variant.can_run = cublas_fallback().can_run;
    variant.run = &run_cublaslt;
    return variant;
}

}  // namespace tandem::gpu
