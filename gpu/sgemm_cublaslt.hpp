// cuBLASLt's FP32 SIMT kernel with CTA swizzling as a member of the SGEMM menu
// (variant `cublaslt_256x128_swizzled`). cublasSgemm picks the same 256 x 128
// SIMT kernel for the LU's large-k updates but launches its blocks row by
// row; with the swizzle, the blocks resident at one time share more of A and B
// in L2, and the product runs about 4-5% faster on the H200 at k >= 512
// (docs/PERFORMANCE.md).
#ifndef TANDEM_GPU_SGEMM_CUBLASLT_HPP
#define TANDEM_GPU_SGEMM_CUBLASLT_HPP

#include <vector>

#include "gpu/sgemm_variants.hpp"

namespace tandem::gpu {

// Runs where `cublas` runs (it needs where.cublas_handle: the fallback). A
// product that the configuration cannot take (a pointer or leading dimension
// not 16-byte aligned, a cuBLAS without that algorithm, or one asking for
// workspace) runs through cublasSgemm instead, so the variant is never slower
// to choose than `cublas` for want of the configuration.
SgemmVariant make_cublaslt_variant();

// Whether the variant runs `args` with its own configuration on the current
// device (rather than through cublasSgemm).
bool cublaslt_takes(const SgemmArgs& args);

// Destroys the cuBLASLt handles made so far (tandem::release_resources); the
// next product makes them again. No product may be running. The handles of
// the devices marked in context_reset (by ordinal) are only forgotten: their
// context, and the handle with it, is gone.
void release_cublaslt_handles(const std::vector<bool>& context_reset = {});

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_SGEMM_CUBLASLT_HPP
