// Menu entry sgemm_rm_64x128x16_8x8_s3.
// The half-height tile of sgemm_rm_64x128x8_8x8_s3 at BK = 16: half the
// barriers and pipeline bookkeeping per FFMA, still four blocks per SM, for
// the k = 64..128 updates where the 64-row tile wins.
#include "gpu/sgemm_rm.cuh"

namespace tandem::gpu {

SgemmVariant make_sgemm_rm_64x128x16_8x8_s3() {
    return make_sgemm_rm_variant<SgemmRmConfig<64, 128, 16, 8, 8, 4, 3, 4, 4>>();
}

}  // namespace tandem::gpu
