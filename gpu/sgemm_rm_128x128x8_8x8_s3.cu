// Menu entry sgemm_rm_128x128x8_8x8_s3.
// The workhorse: 256 threads, 8 x 8 accumulators, at most 128 registers so that
// two blocks share an SM and one block's C traffic overlaps the other's math
// (the LU's small-k updates, k = 64..256). The dispatcher falls back to its
// BK = 16 build (kDefaultVariant), then to its scalar build.
#include "gpu/sgemm_rm.cuh"

namespace tandem::gpu {

SgemmVariant make_sgemm_rm_128x128x8_8x8_s3() {
    return make_sgemm_rm_variant<SgemmRmConfig<128, 128, 8, 8, 8, 4, 3, 4, 2>>();
}

}  // namespace tandem::gpu
