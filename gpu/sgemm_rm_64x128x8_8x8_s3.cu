// Menu entry sgemm_rm_64x128x8_8x8_s3.
// Half-height tiles of 128 threads, up to four blocks per SM: more blocks for
// mid-size products (m or n of a few thousand) and for the inv(L11) product
// (m = nb rows), where 128 x 128 tiles leave SMs idle.
#include "gpu/sgemm_rm.cuh"

namespace tandem::gpu {

SgemmVariant make_sgemm_rm_64x128x8_8x8_s3() {
    return make_sgemm_rm_variant<SgemmRmConfig<64, 128, 8, 8, 8, 4, 3, 4, 4>>();
}

}  // namespace tandem::gpu
