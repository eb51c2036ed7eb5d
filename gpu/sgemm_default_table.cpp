// The SGEMM tuning table shipped for sm_90 (H100 / H200), so that the first
// call needs no tuning. Its text is exactly what `tandem-bench --tune` prints
// and stores in the cache file: paste a new measurement over it.
//
// Provenance: the winners of `tandem-bench gemm` on an NVIDIA H200 (2026-11-22,
// docs/PERFORMANCE.md). k <= 256: ours (1.05-1.57x cuBLAS at m, n = 16K and
// 32K, applied to every size of the same k). From k = 384 on: cuBLASLt's
// swizzled kernel where the larger side is above 4096 (1.02-1.08x cublasSgemm
// from 7168 to 32768, squares up to 16384^3 included), cublasSgemm at 4096 and
// below (the swizzled kernel 0.82-0.99x there).
// Not (yet) the 64 x 128 tile at BK = 16, although it is faster still at
// k <= 256 (1.07-1.34x cuBLAS): with it the planner chose many narrow steps whose
// cost its model underestimates, and the LU at n = 16384 ran 0.98x cuSOLVER
// instead of 1.12-1.14x (tools/probes/table-ab.sh runs that comparison).
// `tandem-bench --tune` measures every bucket.
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
square k<=384 size<=8192 = cublaslt_256x128_swizzled
square k<=384 size<=16384 = cublaslt_256x128_swizzled
square k<=384 size<=32768 = cublaslt_256x128_swizzled
square k<=384 size>32768 = cublaslt_256x128_swizzled
square k<=512 size<=2048 = cublas
square k<=512 size<=4096 = cublas
square k<=512 size<=8192 = cublaslt_256x128_swizzled
square k<=512 size<=16384 = cublaslt_256x128_swizzled
square k<=512 size<=32768 = cublaslt_256x128_swizzled
square k<=512 size>32768 = cublaslt_256x128_swizzled
square k<=768 size<=2048 = cublas
square k<=768 size<=4096 = cublas
square k<=768 size<=8192 = cublaslt_256x128_swizzled
square k<=768 size<=16384 = cublaslt_256x128_swizzled
square k<=768 size<=32768 = cublaslt_256x128_swizzled
square k<=768 size>32768 = cublaslt_256x128_swizzled
square k<=1024 size<=2048 = cublas
square k<=1024 size<=4096 = cublas
square k<=1024 size<=8192 = cublaslt_256x128_swizzled
square k<=1024 size<=16384 = cublaslt_256x128_swizzled
square k<=1024 size<=32768 = cublaslt_256x128_swizzled
square k<=1024 size>32768 = cublaslt_256x128_swizzled
square k>1024 size<=2048 = cublas
square k>1024 size<=4096 = cublas
square k>1024 size<=8192 = cublaslt_256x128_swizzled
square k>1024 size<=16384 = cublaslt_256x128_swizzled
square k>1024 size<=32768 = cublaslt_256x128_swizzled
square k>1024 size>32768 = cublaslt_256x128_swizzled
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
tall k<=384 size<=8192 = cublaslt_256x128_swizzled
tall k<=384 size<=16384 = cublaslt_256x128_swizzled
tall k<=384 size<=32768 = cublaslt_256x128_swizzled
tall k<=384 size>32768 = cublaslt_256x128_swizzled
tall k<=512 size<=2048 = cublas
tall k<=512 size<=4096 = cublas
tall k<=512 size<=8192 = cublaslt_256x128_swizzled
tall k<=512 size<=16384 = cublaslt_256x128_swizzled
tall k<=512 size<=32768 = cublaslt_256x128_swizzled
tall k<=512 size>32768 = cublaslt_256x128_swizzled
tall k<=768 size<=2048 = cublas
tall k<=768 size<=4096 = cublas
tall k<=768 size<=8192 = cublaslt_256x128_swizzled
tall k<=768 size<=16384 = cublaslt_256x128_swizzled
tall k<=768 size<=32768 = cublaslt_256x128_swizzled
tall k<=768 size>32768 = cublaslt_256x128_swizzled
tall k<=1024 size<=2048 = cublas
tall k<=1024 size<=4096 = cublas
tall k<=1024 size<=8192 = cublaslt_256x128_swizzled
tall k<=1024 size<=16384 = cublaslt_256x128_swizzled
tall k<=1024 size<=32768 = cublaslt_256x128_swizzled
tall k<=1024 size>32768 = cublaslt_256x128_swizzled
tall k>1024 size<=2048 = cublas
tall k>1024 size<=4096 = cublas
tall k>1024 size<=8192 = cublaslt_256x128_swizzled
tall k>1024 size<=16384 = cublaslt_256x128_swizzled
tall k>1024 size<=32768 = cublaslt_256x128_swizzled
tall k>1024 size>32768 = cublaslt_256x128_swizzled
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
wide k<=384 size<=8192 = cublaslt_256x128_swizzled
wide k<=384 size<=16384 = cublaslt_256x128_swizzled
wide k<=384 size<=32768 = cublaslt_256x128_swizzled
wide k<=384 size>32768 = cublaslt_256x128_swizzled
wide k<=512 size<=2048 = cublas
wide k<=512 size<=4096 = cublas
wide k<=512 size<=8192 = cublaslt_256x128_swizzled
wide k<=512 size<=16384 = cublaslt_256x128_swizzled
wide k<=512 size<=32768 = cublaslt_256x128_swizzled
wide k<=512 size>32768 = cublaslt_256x128_swizzled
wide k<=768 size<=2048 = cublas
wide k<=768 size<=4096 = cublas
wide k<=768 size<=8192 = cublaslt_256x128_swizzled
wide k<=768 size<=16384 = cublaslt_256x128_swizzled
wide k<=768 size<=32768 = cublaslt_256x128_swizzled
wide k<=768 size>32768 = cublaslt_256x128_swizzled
wide k<=1024 size<=2048 = cublas
wide k<=1024 size<=4096 = cublas
wide k<=1024 size<=8192 = cublaslt_256x128_swizzled
wide k<=1024 size<=16384 = cublaslt_256x128_swizzled
wide k<=1024 size<=32768 = cublaslt_256x128_swizzled
wide k<=1024 size>32768 = cublaslt_256x128_swizzled
wide k>1024 size<=2048 = cublas
wide k>1024 size<=4096 = cublas
wide k>1024 size<=8192 = cublaslt_256x128_swizzled
wide k>1024 size<=16384 = cublaslt_256x128_swizzled
wide k>1024 size<=32768 = cublaslt_256x128_swizzled
wide k>1024 size>32768 = cublaslt_256x128_swizzled
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
