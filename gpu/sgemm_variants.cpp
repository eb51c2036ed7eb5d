#include "gpu/sgemm_variants.hpp"

#include "gpu/gemm.hpp"
#include "gpu/sgemm_cublaslt.hpp"
#include "gpu/tall_skinny.hpp"

namespace tandem::gpu {

// Defined by the sgemm_rm_*.cu files, one configuration each.
SgemmVariant make_sgemm_rm_128x128x8_8x8_s3();
SgemmVariant make_sgemm_rm_128x128x16_8x8_s3();
SgemmVariant make_sgemm_rm_64x128x8_8x8_s3();
SgemmVariant make_sgemm_rm_64x128x16_8x8_s3();
SgemmVariant make_sgemm_rm_256x128x8_16x8_s3();
SgemmVariant make_sgemm_rm_128x256x8_8x16_s3();
SgemmVariant make_sgemm_rm_128x128x8_8x8_s3_scalar();

std::string sgemm_rm_variant_name(const SgemmTileShape& s) {
    std::string name = "sgemm_rm_" + std::to_string(s.block_m) + "x" + std::to_string(s.block_n) +
                       "x" + std::to_string(s.block_k) + "_" + std::to_string(s.thread_m) + "x" +
                       std::to_string(s.thread_n) + "_s" + std::to_string(s.stages);
    return s.vector_loads ? name : name + "_scalar";
}

const std::vector<SgemmVariant>& sgemm_variants() {
    static const std::vector<SgemmVariant> variants = {
        make_sgemm_rm_128x128x8_8x8_s3(),   make_sgemm_rm_128x128x16_8x8_s3(),
        make_sgemm_rm_64x128x8_8x8_s3(),    make_sgemm_rm_64x128x16_8x8_s3(),
        make_sgemm_rm_256x128x8_16x8_s3(),
        make_sgemm_rm_128x256x8_8x16_s3(),  make_sgemm_rm_128x128x8_8x8_s3_scalar(),
        make_tall_skinny_variant(),         make_cublaslt_variant(),
        make_cublas_variant(),
    };
    return variants;
}

const SgemmVariant* find_sgemm_variant(const std::string& name) {
    for (const SgemmVariant& variant : sgemm_variants())
        if (variant.name == name) return &variant;
    return nullptr;
}

}  // namespace tandem::gpu
