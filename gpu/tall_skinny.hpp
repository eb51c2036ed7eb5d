// The tall-skinny SGEMM: C = alpha * A * B + beta * C for row-major matrices
// with few columns (n <= 64) and many rows: the LU's look-ahead update of the
// next panel (m x nb x nb) and, later, the recursive panel. Such products move
// far more bytes than they compute on, so the kernel is built to stream A and
// C once at full bandwidth; judge it in GB/s (A once, B, C read and written).
#ifndef TANDEM_GPU_TALL_SKINNY_HPP
#define TANDEM_GPU_TALL_SKINNY_HPP

#include "gpu/sgemm_args.hpp"
#include "gpu/sgemm_variants.hpp"

namespace tandem::gpu {

inline constexpr int kTallSkinnyMaxN = 64;

// The menu entry `tall_skinny`: any k, any alignment, n <= kTallSkinnyMaxN.
// See SgemmArgs for the layouts.
SgemmVariant make_tall_skinny_variant();

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_TALL_SKINNY_HPP
