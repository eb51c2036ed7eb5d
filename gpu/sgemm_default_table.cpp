// The SGEMM tuning table shipped for sm_90 (H100 / H200), so that the first
// call needs no tuning. Its text is exactly what `tandem-bench --tune` prints
// and stores in the cache file: paste a new measurement over it.
//
// Provenance: INITIAL GUESSES, not yet measured. 128 x 128 tiles (two blocks
// per SM, overlapping one block's C traffic with the other's math) for the
// small-k updates; 256 x 128 tiles (16 x 8 accumulators, fewer shared-memory
// and L2 bytes per FFMA) from k = 384 on; 64 x 128 tiles where 128 x 128 tiles
// would leave SMs idle (size <= 4096, the nb-row inv(L11) product); the
// tall-skinny kernel for the look-ahead update at nb <= 64.
#include "gpu/sgemm_tuning_table.hpp"

#include "tandem/tandem.hpp"

namespace tandem::gpu {
namespace {

const char* const kSm90Table = R"(
square k<=64 size<=2048 = sgemm_rm_64x128x8_8x8_s3
square k<=64 size<=4096 = sgemm_rm_64x128x8_8x8_s3
square k<=64 size<=8192 = sgemm_rm_128x128x8_8x8_s3
square k<=64 size<=16384 = sgemm_rm_128x128x8_8x8_s3
square k<=64 size<=32768 = sgemm_rm_128x128x8_8x8_s3
square k<=64 size>32768 = sgemm_rm_128x128x8_8x8_s3
square k<=128 size<=2048 = sgemm_rm_64x128x8_8x8_s3
square k<=128 size<=4096 = sgemm_rm_64x128x8_8x8_s3
square k<=128 size<=8192 = sgemm_rm_128x128x8_8x8_s3
square k<=128 size<=16384 = sgemm_rm_128x128x8_8x8_s3
square k<=128 size<=32768 = sgemm_rm_128x128x8_8x8_s3
square k<=128 size>32768 = sgemm_rm_128x128x8_8x8_s3
square k<=256 size<=2048 = sgemm_rm_64x128x8_8x8_s3
square k<=256 size<=4096 = sgemm_rm_64x128x8_8x8_s3
square k<=256 size<=8192 = sgemm_rm_128x128x8_8x8_s3
square k<=256 size<=16384 = sgemm_rm_128x128x8_8x8_s3
square k<=256 size<=32768 = sgemm_rm_128x128x8_8x8_s3
square k<=256 size>32768 = sgemm_rm_128x128x8_8x8_s3
square k<=384 size<=2048 = sgemm_rm_128x128x8_8x8_s3
square k<=384 size<=4096 = sgemm_rm_128x128x8_8x8_s3
square k<=384 size<=8192 = sgemm_rm_256x128x8_16x8_s3
square k<=384 size<=16384 = sgemm_rm_256x128x8_16x8_s3
square k<=384 size<=32768 = sgemm_rm_256x128x8_16x8_s3
square k<=384 size>32768 = sgemm_rm_256x128x8_16x8_s3
square k<=512 size<=2048 = sgemm_rm_128x128x8_8x8_s3
square k<=512 size<=4096 = sgemm_rm_128x128x8_8x8_s3
square k<=512 size<=8192 = sgemm_rm_256x128x8_16x8_s3
square k<=512 size<=16384 = sgemm_rm_256x128x8_16x8_s3
square k<=512 size<=32768 = sgemm_rm_256x128x8_16x8_s3
square k<=512 size>32768 = sgemm_rm_256x128x8_16x8_s3
square k<=768 size<=2048 = sgemm_rm_128x128x8_8x8_s3
square k<=768 size<=4096 = sgemm_rm_128x128x8_8x8_s3
square k<=768 size<=8192 = sgemm_rm_256x128x8_16x8_s3
square k<=768 size<=16384 = sgemm_rm_256x128x8_16x8_s3
square k<=768 size<=32768 = sgemm_rm_256x128x8_16x8_s3
square k<=768 size>32768 = sgemm_rm_256x128x8_16x8_s3
square k<=1024 size<=2048 = sgemm_rm_128x128x8_8x8_s3
square k<=1024 size<=4096 = sgemm_rm_128x128x8_8x8_s3
square k<=1024 size<=8192 = sgemm_rm_256x128x8_16x8_s3
square k<=1024 size<=16384 = sgemm_rm_256x128x8_16x8_s3
square k<=1024 size<=32768 = sgemm_rm_256x128x8_16x8_s3
square k<=1024 size>32768 = sgemm_rm_256x128x8_16x8_s3
square k>1024 size<=2048 = sgemm_rm_128x128x8_8x8_s3
square k>1024 size<=4096 = sgemm_rm_128x128x8_8x8_s3
square k>1024 size<=8192 = sgemm_rm_256x128x8_16x8_s3
square k>1024 size<=16384 = sgemm_rm_256x128x8_16x8_s3
square k>1024 size<=32768 = sgemm_rm_256x128x8_16x8_s3
square k>1024 size>32768 = sgemm_rm_256x128x8_16x8_s3
tall k<=64 size<=2048 = tall_skinny
tall k<=64 size<=4096 = tall_skinny
tall k<=64 size<=8192 = tall_skinny
tall k<=64 size<=16384 = tall_skinny
tall k<=64 size<=32768 = tall_skinny
tall k<=64 size>32768 = tall_skinny
tall k<=128 size<=2048 = sgemm_rm_64x128x8_8x8_s3
tall k<=128 size<=4096 = sgemm_rm_64x128x8_8x8_s3
tall k<=128 size<=8192 = sgemm_rm_128x128x8_8x8_s3
tall k<=128 size<=16384 = sgemm_rm_128x128x8_8x8_s3
tall k<=128 size<=32768 = sgemm_rm_128x128x8_8x8_s3
tall k<=128 size>32768 = sgemm_rm_128x128x8_8x8_s3
tall k<=256 size<=2048 = sgemm_rm_64x128x8_8x8_s3
tall k<=256 size<=4096 = sgemm_rm_64x128x8_8x8_s3
tall k<=256 size<=8192 = sgemm_rm_128x128x8_8x8_s3
tall k<=256 size<=16384 = sgemm_rm_128x128x8_8x8_s3
tall k<=256 size<=32768 = sgemm_rm_128x128x8_8x8_s3
tall k<=256 size>32768 = sgemm_rm_128x128x8_8x8_s3
tall k<=384 size<=2048 = sgemm_rm_64x128x8_8x8_s3
tall k<=384 size<=4096 = sgemm_rm_64x128x8_8x8_s3
tall k<=384 size<=8192 = sgemm_rm_128x128x8_8x8_s3
tall k<=384 size<=16384 = sgemm_rm_128x128x8_8x8_s3
tall k<=384 size<=32768 = sgemm_rm_128x128x8_8x8_s3
tall k<=384 size>32768 = sgemm_rm_128x128x8_8x8_s3
tall k<=512 size<=2048 = sgemm_rm_64x128x8_8x8_s3
tall k<=512 size<=4096 = sgemm_rm_64x128x8_8x8_s3
tall k<=512 size<=8192 = sgemm_rm_128x128x8_8x8_s3
tall k<=512 size<=16384 = sgemm_rm_128x128x8_8x8_s3
tall k<=512 size<=32768 = sgemm_rm_128x128x8_8x8_s3
tall k<=512 size>32768 = sgemm_rm_128x128x8_8x8_s3
tall k<=768 size<=2048 = sgemm_rm_64x128x8_8x8_s3
tall k<=768 size<=4096 = sgemm_rm_64x128x8_8x8_s3
tall k<=768 size<=8192 = sgemm_rm_128x128x8_8x8_s3
tall k<=768 size<=16384 = sgemm_rm_128x128x8_8x8_s3
tall k<=768 size<=32768 = sgemm_rm_128x128x8_8x8_s3
tall k<=768 size>32768 = sgemm_rm_128x128x8_8x8_s3
tall k<=1024 size<=2048 = sgemm_rm_64x128x8_8x8_s3
tall k<=1024 size<=4096 = sgemm_rm_64x128x8_8x8_s3
tall k<=1024 size<=8192 = sgemm_rm_128x128x8_8x8_s3
tall k<=1024 size<=16384 = sgemm_rm_128x128x8_8x8_s3
tall k<=1024 size<=32768 = sgemm_rm_128x128x8_8x8_s3
tall k<=1024 size>32768 = sgemm_rm_128x128x8_8x8_s3
tall k>1024 size<=2048 = sgemm_rm_64x128x8_8x8_s3
tall k>1024 size<=4096 = sgemm_rm_64x128x8_8x8_s3
tall k>1024 size<=8192 = sgemm_rm_128x128x8_8x8_s3
tall k>1024 size<=16384 = sgemm_rm_128x128x8_8x8_s3
tall k>1024 size<=32768 = sgemm_rm_128x128x8_8x8_s3
tall k>1024 size>32768 = sgemm_rm_128x128x8_8x8_s3
wide k<=64 size<=2048 = sgemm_rm_64x128x8_8x8_s3
wide k<=64 size<=4096 = sgemm_rm_64x128x8_8x8_s3
wide k<=64 size<=8192 = sgemm_rm_64x128x8_8x8_s3
wide k<=64 size<=16384 = sgemm_rm_64x128x8_8x8_s3
wide k<=64 size<=32768 = sgemm_rm_64x128x8_8x8_s3
wide k<=64 size>32768 = sgemm_rm_64x128x8_8x8_s3
wide k<=128 size<=2048 = sgemm_rm_64x128x8_8x8_s3
wide k<=128 size<=4096 = sgemm_rm_64x128x8_8x8_s3
wide k<=128 size<=8192 = sgemm_rm_64x128x8_8x8_s3
wide k<=128 size<=16384 = sgemm_rm_64x128x8_8x8_s3
wide k<=128 size<=32768 = sgemm_rm_64x128x8_8x8_s3
wide k<=128 size>32768 = sgemm_rm_64x128x8_8x8_s3
wide k<=256 size<=2048 = sgemm_rm_128x128x8_8x8_s3
wide k<=256 size<=4096 = sgemm_rm_128x128x8_8x8_s3
wide k<=256 size<=8192 = sgemm_rm_128x128x8_8x8_s3
wide k<=256 size<=16384 = sgemm_rm_128x128x8_8x8_s3
wide k<=256 size<=32768 = sgemm_rm_128x128x8_8x8_s3
wide k<=256 size>32768 = sgemm_rm_128x128x8_8x8_s3
wide k<=384 size<=2048 = sgemm_rm_128x128x8_8x8_s3
wide k<=384 size<=4096 = sgemm_rm_128x128x8_8x8_s3
wide k<=384 size<=8192 = sgemm_rm_128x128x8_8x8_s3
wide k<=384 size<=16384 = sgemm_rm_128x128x8_8x8_s3
wide k<=384 size<=32768 = sgemm_rm_128x128x8_8x8_s3
wide k<=384 size>32768 = sgemm_rm_128x128x8_8x8_s3
wide k<=512 size<=2048 = sgemm_rm_128x128x8_8x8_s3
wide k<=512 size<=4096 = sgemm_rm_128x128x8_8x8_s3
wide k<=512 size<=8192 = sgemm_rm_128x128x8_8x8_s3
wide k<=512 size<=16384 = sgemm_rm_128x128x8_8x8_s3
wide k<=512 size<=32768 = sgemm_rm_128x128x8_8x8_s3
wide k<=512 size>32768 = sgemm_rm_128x128x8_8x8_s3
wide k<=768 size<=2048 = sgemm_rm_128x128x8_8x8_s3
wide k<=768 size<=4096 = sgemm_rm_128x128x8_8x8_s3
wide k<=768 size<=8192 = sgemm_rm_128x128x8_8x8_s3
wide k<=768 size<=16384 = sgemm_rm_128x128x8_8x8_s3
wide k<=768 size<=32768 = sgemm_rm_128x128x8_8x8_s3
wide k<=768 size>32768 = sgemm_rm_128x128x8_8x8_s3
wide k<=1024 size<=2048 = sgemm_rm_128x128x8_8x8_s3
wide k<=1024 size<=4096 = sgemm_rm_128x128x8_8x8_s3
wide k<=1024 size<=8192 = sgemm_rm_128x128x8_8x8_s3
wide k<=1024 size<=16384 = sgemm_rm_128x128x8_8x8_s3
wide k<=1024 size<=32768 = sgemm_rm_128x128x8_8x8_s3
wide k<=1024 size>32768 = sgemm_rm_128x128x8_8x8_s3
wide k>1024 size<=2048 = sgemm_rm_128x128x8_8x8_s3
wide k>1024 size<=4096 = sgemm_rm_128x128x8_8x8_s3
wide k>1024 size<=8192 = sgemm_rm_128x128x8_8x8_s3
wide k>1024 size<=16384 = sgemm_rm_128x128x8_8x8_s3
wide k>1024 size<=32768 = sgemm_rm_128x128x8_8x8_s3
wide k>1024 size>32768 = sgemm_rm_128x128x8_8x8_s3
)";

}  // namespace

const SgemmTuningTable& SgemmTuningTable::sm90_defaults() {
    static const SgemmTuningTable table = [] {
        SgemmTuningTable parsed;
        std::string error;
        if (!parsed.apply_text(kSm90Table, error))
            throw Error(TANDEM_ERROR_INTERNAL, "the built-in sm_90 SGEMM table is malformed: " + error);
        return parsed;
    }();
    return table;
}

}  // namespace tandem::gpu
