// The menu of SGEMM implementations the dispatcher and the tuner choose from:
// our compiled kernel configurations, the tall-skinny kernel, and cuBLAS. Each
// has one procedural name (e.g. sgemm_rm_128x128x8_8x8_s3) used in logs, the
// benchmark's CSV, the tests and the tuning table.
#ifndef TANDEM_GPU_SGEMM_VARIANTS_HPP
#define TANDEM_GPU_SGEMM_VARIANTS_HPP

#include <string>
#include <vector>

#include "gpu/sgemm_args.hpp"

namespace tandem::gpu {

// The tiling of one configuration of the sgemm_rm kernel (zero for the
// variants that are not that kernel).
struct SgemmTileShape {
    int block_m = 0, block_n = 0, block_k = 0;  // block tile BM x BN, k step BK
    int thread_m = 0, thread_n = 0;             // thread tile TM x TN (accumulators)
    int stages = 0;                             // cp.async pipeline depth
    bool vector_loads = false;                  // 16-byte B loads and C accesses
    int threads = 0;                            // per block
    int shared_bytes = 0;                       // dynamic shared memory per block
    int min_blocks_per_sm = 0;                  // the __launch_bounds__ occupancy target
};

// "sgemm_rm_{BM}x{BN}x{BK}_{TM}x{TN}_s{stages}", with "_scalar" appended when
// the configuration does without vector loads.
std::string sgemm_rm_variant_name(const SgemmTileShape& shape);

struct SgemmVariant {
    std::string name;
    SgemmTileShape shape;
    // Whether this variant can compute `args` (alignment, size limits, a cuBLAS
    // handle); the arguments themselves are assumed valid (check_sgemm_args).
    bool (*can_run)(const SgemmArgs& args, const SgemmStream& where) = nullptr;
    // Issues the product on where.stream; throws tandem::Error on failure.
    // Called by the dispatcher only (gpu/sgemm_dispatch.cpp), once the
    // arguments are checked, can_run is true, and the product is not empty
    // nor a mere scaling of C (m, n, k > 0, alpha != 0): the dispatcher does those.
    void (*run)(const SgemmArgs& args, const SgemmStream& where) = nullptr;
};

// Names of the variants with a special role.
inline constexpr const char* kCublasVariant = "cublas";
// cuBLASLt's swizzled SIMT kernel, cublasSgemm where it cannot run (sgemm_cublaslt.hpp).
inline constexpr const char* kCublasLtVariant = "cublaslt_256x128_swizzled";
inline constexpr const char* kTallSkinnyVariant = "tall_skinny";
// Runs any shape with 16-byte aligned B and C: the fallback of the dispatcher,
// and `Options::gemm = tandem`'s kernel where cuBLAS(Lt) won (about cuBLAS's
// speed at k = 512; sgemm_rm_64x128x16_8x8_s3 is as fast or a little faster at
// large k but has not been measured in the LU there).
inline constexpr const char* kDefaultVariant = "sgemm_rm_128x128x16_8x8_s3";
// Runs any shape at all (4-byte accesses only): the last resort.
inline constexpr const char* kAnyAlignmentVariant = "sgemm_rm_128x128x8_8x8_s3_scalar";

// Every variant: the sgemm_rm kernel configurations first, then tall_skinny,
// then cublaslt_256x128_swizzled and cublas.
const std::vector<SgemmVariant>& sgemm_variants();

// The variant called `name`, or nullptr.
const SgemmVariant* find_sgemm_variant(const std::string& name);

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_SGEMM_VARIANTS_HPP
