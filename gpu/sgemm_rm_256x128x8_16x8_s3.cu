// Menu entry sgemm_rm_256x128x8_16x8_s3.
// Large tiles for large k: 16 x 8 accumulators per thread (about 200 registers,
// one block per SM), 6 shared loads per 128 FFMAs and 43 flops per byte of
// L2 traffic, as in CUTLASS's SIMT 256 x 128 (what cuBLAS runs at k = 1024).
#include "gpu/sgemm_rm.cuh"

namespace tandem::gpu {

SgemmVariant make_sgemm_rm_256x128x8_16x8_s3() {
    return make_sgemm_rm_variant<SgemmRmConfig<256, 128, 8, 16, 8, 4, 3, 4, 1>>();
}

}  // namespace tandem::gpu
