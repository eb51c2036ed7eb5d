// Row-major SGEMM on the device with the variant that a tuning table names for
// the shape's bucket: the entry point the LU's updates call. No CUDA types: the
// stream and cuBLAS handle travel as void* in SgemmStream.
#ifndef TANDEM_GPU_SGEMM_DISPATCH_HPP
#define TANDEM_GPU_SGEMM_DISPATCH_HPP

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/sgemm_args.hpp"
#include "gpu/sgemm_tuning_table.hpp"

namespace tandem::gpu {

// C = alpha * A * B + beta * C (see SgemmArgs for layouts and aliasing), issued
// on where.stream. Runs table.variant_for(m, n, k); where that variant cannot
// run these arguments (alignment, n too large for tall_skinny, no cuBLAS
// handle) it runs kDefaultVariant, and where that cannot either,
// kAnyAlignmentVariant, which runs anything. Returns the name of the variant
// that ran. Throws tandem::Error on bad arguments or a failed launch.
const std::string& sgemm_rm(const SgemmTuningTable& table, const SgemmArgs& args,
                            const SgemmStream& where);

// The same with BLAS-style positional arguments.
const std::string& sgemm_rm(const SgemmTuningTable& table, int64_t m, int64_t n, int64_t k,
                            float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
                            float beta, float* c, int64_t ldc, const SgemmStream& where);

// The names of every variant (the menu, tall_skinny, cublas), in menu order.
std::vector<std::string> sgemm_variant_names();

// Whether variant `name` exists and can run `args` on `where`.
bool sgemm_variant_can_run(const std::string& name, const SgemmArgs& args, const SgemmStream& where);

// Runs variant `name` (for tests, the benchmark and the tuner); throws
// tandem::Error (TANDEM_ERROR_INTERNAL) when it does not exist or cannot run `args`.
void run_sgemm_variant(const std::string& name, const SgemmArgs& args, const SgemmStream& where);

}  // namespace tandem::gpu

#endif  // TANDEM_GPU_SGEMM_DISPATCH_HPP
