// CudaDevice's choice of SGEMM: cuBLAS, tandem's kernels, or per shape bucket
// whichever the tuning table says is faster on this GPU.
#include "gpu/cuda_device.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/sgemm_dispatch.hpp"
#include "gpu/sgemm_tuner.hpp"
#include "gpu/sgemm_variants.hpp"

namespace tandem::gpu {

void CudaDevice::set_gemm_policy(GemmKernel kernel, const std::string& cache_dir) {
    gemm_policy_ = kernel;
    if (kernel == GemmKernel::cublas) return;
    const std::string key = std::to_string(static_cast<int>(kernel)) + "|" + cache_dir;
    if (gemm_table_ && key == gemm_table_key_) return;  // the file is read once per setting
    DeviceGuard guard(ordinal_);
    SgemmTuningTable table = load_sgemm_table_for_current_device(cache_dir);
    if (kernel == GemmKernel::tandem)  // every bucket that cuBLAS(Lt) won goes to our default kernel
        for (const SgemmBucket& bucket : all_sgemm_buckets())
            if (table.variant(bucket) == kCublasVariant || table.variant(bucket) == kCublasLtVariant)
                table.set_variant(bucket, kDefaultVariant);
    gemm_table_ = table;
    gemm_table_key_ = key;
}

void CudaDevice::product(Queue q, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                         int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                         int64_t ldc) {
    if (gemm_policy_ == GemmKernel::cublas || !gemm_table_) {
        gemm(blas(q), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return;
    }
    const BlasQueue where = blas(q);
    sgemm_rm(*gemm_table_, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
             SgemmStream{where.stream, where.handle});
}

}  // namespace tandem::gpu
