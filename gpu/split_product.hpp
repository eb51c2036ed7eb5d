// FP32 products on the TF32 tensor cores at close to FP32 accuracy (Ootomo &
// Yokota, arXiv 2203.03341): each operand is split as a = hi + lo with hi = a
// rounded to TF32 (10 fraction bits) and lo = a - hi (exact in FP32), and
// A B ~ A_lo B_hi + A_hi B_lo + A_hi B_hi (the lo*lo term is below FP32's
// rounding). The three products are one TF32 GEMM over a three times longer
// k, [A_lo | A_hi | A_hi] [B_hi; B_lo; B_hi], accumulated in FP32 (in
// whatever order cuBLAS's kernel sums its k). TF32 keeps FP32's exponent
// range; an entry whose rounding would overflow is truncated to TF32 instead,
// its remainder the low part; a low part below FP32's normal range counts as
// zero on the tensor cores.
#ifndef TANDEM_GPU_SPLIT_PRODUCT_HPP
#define TANDEM_GPU_SPLIT_PRODUCT_HPP

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/gemm.hpp"

namespace tandem::gpu {

// The left operand of the split product: A (m x k, row-major, lda) into
// `split` (m x 3k, row-major) as [A_lo | A_hi | A_hi].
void split_left_tf32x3(cudaStream_t stream, int64_t m, int64_t k, const float* a, int64_t lda,
                       float* split);

// The right operand: B (k x n, row-major, ldb) into `split` (3k x n,
// row-major) as [B_hi; B_lo; B_hi].
void split_right_tf32x3(cudaStream_t stream, int64_t k, int64_t n, const float* b, int64_t ldb,
                        float* split);

// C = alpha [A_lo | A_hi | A_hi] [B_hi; B_lo; B_hi] + beta C, row-major, C m x n
// (ldc), on the TF32 tensor cores with FP32 accumulation (cuBLAS).
void product_tf32x3(const BlasQueue& queue, int64_t m, int64_t n, int64_t k, float alpha,
                    const float* a_split, const float* b_split, float beta, float* c, int64_t ldc);

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_SPLIT_PRODUCT_HPP
