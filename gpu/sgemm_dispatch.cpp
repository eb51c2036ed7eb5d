#include "gpu/sgemm_dispatch.hpp"

#include <initializer_list>

#include "gpu/scale_matrix.hpp"
#include "gpu/sgemm_variants.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {
namespace {

// The one place a variant runs (arguments checked, can_run true): empty
// products and those that only scale C never reach a kernel or cuBLAS.
void run_variant(const SgemmVariant& variant, const SgemmArgs& args, const SgemmStream& where) {
    if (args.m == 0 || args.n == 0) return;
    if (args.k == 0 || args.alpha == 0.0f) {
        scale_matrix_rm(args.m, args.n, args.beta, args.c, args.ldc,
                        static_cast<cudaStream_t>(where.stream));
        return;
    }
    variant.run(args, where);
}

}  // namespace

const std::string& sgemm_rm(const SgemmTuningTable& table, const SgemmArgs& args,
                            const SgemmStream& where) {
    check_sgemm_args(args);
    static const std::string default_name = kDefaultVariant, any_alignment_name = kAnyAlignmentVariant;
    for (const std::string* name :
         {&table.variant_for(args.m, args.n, args.k), &default_name, &any_alignment_name}) {
        const SgemmVariant* variant = find_sgemm_variant(*name);
        if (variant && variant->can_run(args, where)) {
            run_variant(*variant, args, where);
            return variant->name;
        }
    }
    throw Error(TANDEM_ERROR_INTERNAL, std::string("sgemm_rm: even ") + kAnyAlignmentVariant +
                                           " cannot run this product");
}

const std::string& sgemm_rm(const SgemmTuningTable& table, int64_t m, int64_t n, int64_t k,
                            float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
                            float beta, float* c, int64_t ldc, const SgemmStream& where) {
    SgemmArgs args;
    args.m = m, args.n = n, args.k = k;
    args.alpha = alpha, args.a = a, args.lda = lda, args.b = b, args.ldb = ldb;
    args.beta = beta, args.c = c, args.ldc = ldc;
    return sgemm_rm(table, args, where);
}

std::vector<std::string> sgemm_variant_names() {
    std::vector<std::string> names;
    for (const SgemmVariant& variant : sgemm_variants()) names.push_back(variant.name);
    return names;
}

bool sgemm_variant_can_run(const std::string& name, const SgemmArgs& args, const SgemmStream& where) {
    const SgemmVariant* variant = find_sgemm_variant(name);
    return variant && variant->can_run(args, where);
}

void run_sgemm_variant(const std::string& name, const SgemmArgs& args, const SgemmStream& where) {
    const SgemmVariant* variant = find_sgemm_variant(name);
    if (!variant) throw Error(TANDEM_ERROR_INTERNAL, "no SGEMM variant named '" + name + "'");
    check_sgemm_args(args);
    if (!variant->can_run(args, where))
        throw Error(TANDEM_ERROR_INTERNAL, name + " cannot run this product (alignment, shape or "
                                                  "missing cuBLAS handle)");
    run_variant(*variant, args, where);
}

}  // namespace tandem::gpu
