// Menu entry sgemm_rm_128x256x8_8x16_s3.
// The transposed large tile: 8 x 16 accumulators, warps of 8 x 4 threads;
// wide B tiles (1 KiB rows) for shapes with n much larger than m.
#include "gpu/sgemm_rm.cuh"

namespace tandem::gpu {

SgemmVariant make_sgemm_rm_128x256x8_8x16_s3() {
    return make_sgemm_rm_variant<SgemmRmConfig<128, 256, 8, 8, 16, 8, 3, 4, 1>>();
}

}  // namespace tandem::gpu
