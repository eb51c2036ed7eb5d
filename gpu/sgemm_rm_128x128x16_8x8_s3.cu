// Menu entry sgemm_rm_128x128x16_8x8_s3.
// The workhorse with BK = 16: half the barriers and pipeline bookkeeping per
// FFMA, at twice the shared memory per stage (still two blocks per SM).
#include "gpu/sgemm_rm.cuh"

namespace tandem::gpu {

SgemmVariant make_sgemm_rm_128x128x16_8x8_s3() {
    return make_sgemm_rm_variant<SgemmRmConfig<128, 128, 16, 8, 8, 4, 3, 4, 2>>();
}

}  // namespace tandem::gpu
