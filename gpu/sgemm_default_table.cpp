// The SGEMM tuning table shipped for sm_90 (H100 / H200), so that the first
// call needs no tuning. Its text is exactly what `tandem-bench --tune` prints
// and stores in the cache file: paste a new measurement over it.
//
// Provenance: the winners of `tandem-bench gemm --shapes lu --repeats 3` on an
// NVIDIA H200 (2026-11-22, docs/PERFORMANCE.md), measured at m, n = 16K and 32K
// and applied to every size of the same k: ours at k <= 256 (1.06-1.57x
// cuBLAS), cuBLAS from k = 384 on (ours 0.95x at k = 512). Sizes below 16K
// were not measured; `tandem-bench --tune` measures every bucket.
#include "gpu/sgemm_tuning_table.hpp"

#include "tandem/tandem.hpp"

namespace tandem::gpu {
namespace {

const char* const kSm90Table = R"(
square k<=64 size<=2048 = sgemm_rm_64x128x8_8x8_s3
square k<=64 size<=4096 = sgemm_rm_64x128x8_8x8_s3
square k<=64 size<=8192 = sgemm_rm_64x128x8_8x8_s3
square k<=64 size<=16384 = sgemm_rm_64x128x8_8x8_s3
square k<=64 size<=32768 = sgemm_rm_64x128x8_8x8_s3
square k<=64 size>32768 = sgemm_rm_64x128x8_8x8_s3
square k<=128 size<=2048 = sgemm_rm_128x128x16_8x8_s3
square k<=128 size<=4096 = sgemm_rm_128x128x16_8x8_s3
square k<=128 size<=8192 = sgemm_rm_128x128x16_8x8_s3
square k<=128 size<=16384 = sgemm_rm_128x128x16_8x8_s3
square k<=128 size<=32768 = sgemm_rm_128x128x16_8x8_s3
square k<=128 size>32768 = sgemm_rm_128x128x16_8x8_s3
square k<=256 size<=2048 = sgemm_rm_128x128x16_8x8_s3
square k<=256 size<=4096 = sgemm_rm_128x128x16_8x8_s3
square k<=256 size<=8192 = sgemm_rm_128x128x16_8x8_s3
square k<=256 size<=16384 = sgemm_rm_128x128x16_8x8_s3
square k<=256 size<=32768 = sgemm_rm_128x128x16_8x8_s3
square k<=256 size>32768 = sgemm_rm_128x128x16_8x8_s3
square k<=384 size<=2048 = cublas
square k<=384 size<=4096 = cublas
square k<=384 size<=8192 = cublas
square k<=384 size<=16384 = cublas
square k<=384 size<=32768 = cublas
square k<=384 size>32768 = cublas
square k<=512 size<=2048 = cublas
square k<=512 size<=4096 = cublas
square k<=512 size<=8192 = cublas
square k<=512 size<=16384 = cublas
square k<=512 size<=32768 = cublas
square k<=512 size>32768 = cublas
square k<=768 size<=2048 = cublas
square k<=768 size<=4096 = cublas
square k<=768 size<=8192 = cublas
square k<=768 size<=16384 = cublas
square k<=768 size<=32768 = cublas
square k<=768 size>32768 = cublas
square k<=1024 size<=2048 = cublas
square k<=1024 size<=4096 = cublas
square k<=1024 size<=8192 = cublas
square k<=1024 size<=16384 = cublas
square k<=1024 size<=32768 = cublas
square k<=1024 size>32768 = cublas
square k>1024 size<=2048 = cublas
square k>1024 size<=4096 = cublas
square k>1024 size<=8192 = cublas
square k>1024 size<=16384 = cublas
square k>1024 size<=32768 = cublas
square k>1024 size>32768 = cublas
tall k<=64 size<=2048 = tall_skinny
tall k<=64 size<=4096 = tall_skinny
tall k<=64 size<=8192 = tall_skinny
tall k<=64 size<=16384 = tall_skinny
tall k<=64 size<=32768 = tall_skinny
tall k<=64 size>32768 = tall_skinny
tall k<=128 size<=2048 = sgemm_rm_128x128x16_8x8_s3
tall k<=128 size<=4096 = sgemm_rm_128x128x16_8x8_s3
tall k<=128 size<=8192 = sgemm_rm_128x128x16_8x8_s3
tall k<=128 size<=16384 = sgemm_rm_128x128x16_8x8_s3
tall k<=128 size<=32768 = sgemm_rm_128x128x16_8x8_s3
tall k<=128 size>32768 = sgemm_rm_128x128x16_8x8_s3
tall k<=256 size<=2048 = sgemm_rm_128x128x16_8x8_s3
tall k<=256 size<=4096 = sgemm_rm_128x128x16_8x8_s3
tall k<=256 size<=8192 = sgemm_rm_128x128x16_8x8_s3
tall k<=256 size<=16384 = sgemm_rm_128x128x16_8x8_s3
tall k<=256 size<=32768 = sgemm_rm_128x128x16_8x8_s3
tall k<=256 size>32768 = sgemm_rm_128x128x16_8x8_s3
tall k<=384 size<=2048 = cublas
tall k<=384 size<=4096 = cublas
tall k<=384 size<=8192 = cublas
tall k<=384 size<=16384 = cublas
tall k<=384 size<=32768 = cublas
tall k<=384 size>32768 = cublas
tall k<=512 size<=2048 = cublas
tall k<=512 size<=4096 = cublas
tall k<=512 size<=8192 = cublas
tall k<=512 size<=16384 = cublas
tall k<=512 size<=32768 = cublas
tall k<=512 size>32768 = cublas
tall k<=768 size<=2048 = cublas
tall k<=768 size<=4096 = cublas
tall k<=768 size<=8192 = cublas
tall k<=768 size<=16384 = cublas
tall k<=768 size<=32768 = cublas
tall k<=768 size>32768 = cublas
tall k<=1024 size<=2048 = cublas
tall k<=1024 size<=4096 = cublas
tall k<=1024 size<=8192 = cublas
tall k<=1024 size<=16384 = cublas
tall k<=1024 size<=32768 = cublas
tall k<=1024 size>32768 = cublas
tall k>1024 size<=2048 = cublas
tall k>1024 size<=4096 = cublas
tall k>1024 size<=8192 = cublas
tall k>1024 size<=16384 = cublas
tall k>1024 size<=32768 = cublas
tall k>1024 size>32768 = cublas
wide k<=64 size<=2048 = sgemm_rm_64x128x8_8x8_s3
wide k<=64 size<=4096 = sgemm_rm_64x128x8_8x8_s3
wide k<=64 size<=8192 = sgemm_rm_64x128x8_8x8_s3
wide k<=64 size<=16384 = sgemm_rm_64x128x8_8x8_s3
wide k<=64 size<=32768 = sgemm_rm_64x128x8_8x8_s3
wide k<=64 size>32768 = sgemm_rm_64x128x8_8x8_s3
wide k<=128 size<=2048 = sgemm_rm_128x128x16_8x8_s3
wide k<=128 size<=4096 = sgemm_rm_128x128x16_8x8_s3
wide k<=128 size<=8192 = sgemm_rm_128x128x16_8x8_s3
wide k<=128 size<=16384 = sgemm_rm_128x128x16_8x8_s3
wide k<=128 size<=32768 = sgemm_rm_128x128x16_8x8_s3
wide k<=128 size>32768 = sgemm_rm_128x128x16_8x8_s3
wide k<=256 size<=2048 = sgemm_rm_128x128x16_8x8_s3
wide k<=256 size<=4096 = sgemm_rm_128x128x16_8x8_s3
wide k<=256 size<=8192 = sgemm_rm_128x128x16_8x8_s3
wide k<=256 size<=16384 = sgemm_rm_128x128x16_8x8_s3
wide k<=256 size<=32768 = sgemm_rm_128x128x16_8x8_s3
wide k<=256 size>32768 = sgemm_rm_128x128x16_8x8_s3
wide k<=384 size<=2048 = cublas
wide k<=384 size<=4096 = cublas
wide k<=384 size<=8192 = cublas
wide k<=384 size<=16384 = cublas
wide k<=384 size<=32768 = cublas
wide k<=384 size>32768 = cublas
wide k<=512 size<=2048 = cublas
wide k<=512 size<=4096 = cublas
wide k<=512 size<=8192 = cublas
wide k<=512 size<=16384 = cublas
wide k<=512 size<=32768 = cublas
wide k<=512 size>32768 = cublas
wide k<=768 size<=2048 = cublas
wide k<=768 size<=4096 = cublas
wide k<=768 size<=8192 = cublas
wide k<=768 size<=16384 = cublas
wide k<=768 size<=32768 = cublas
wide k<=768 size>32768 = cublas
wide k<=1024 size<=2048 = cublas
wide k<=1024 size<=4096 = cublas
wide k<=1024 size<=8192 = cublas
wide k<=1024 size<=16384 = cublas
wide k<=1024 size<=32768 = cublas
wide k<=1024 size>32768 = cublas
wide k>1024 size<=2048 = cublas
wide k>1024 size<=4096 = cublas
wide k>1024 size<=8192 = cublas
wide k>1024 size<=16384 = cublas
wide k>1024 size<=32768 = cublas
wide k>1024 size>32768 = cublas
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
