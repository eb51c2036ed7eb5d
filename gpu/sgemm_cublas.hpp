// cuBLAS as a member of the SGEMM menu (variant `cublas`): the baseline that the
// tuner and the benchmark measure our kernels against, and the dispatcher's
// choice wherever the tuning table says cuBLAS wins.
#ifndef TANDEM_GPU_SGEMM_CUBLAS_HPP
#define TANDEM_GPU_SGEMM_CUBLAS_HPP

#include "gpu/sgemm_variants.hpp"

namespace tandem::gpu {

// Runs when where.cublas_handle is set and the leading dimensions fit in int.
// Binds the handle to where.stream; uses the handle's math mode (the default,
// CUBLAS_DEFAULT_MATH, is plain FP32 without tensor cores).
SgemmVariant make_cublas_variant();

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_SGEMM_CUBLAS_HPP
