// Menu entry sgemm_rm_128x128x8_8x8_s3_scalar.
// The workhorse with 4-byte B copies and C accesses: runs any alignment of
// pointers and leading dimensions (the dispatcher's last resort).
#include "gpu/sgemm_rm.cuh"

namespace tandem::gpu {

SgemmVariant make_sgemm_rm_128x128x8_8x8_s3_scalar() {
    return make_sgemm_rm_variant<SgemmRmConfig<128, 128, 8, 8, 8, 4, 3, 1, 2>>();
}

}  // namespace tandem::gpu
