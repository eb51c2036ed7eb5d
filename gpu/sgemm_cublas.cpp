#include "gpu/sgemm_cublas.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <climits>

#include "gpu/cuda_check.hpp"
#include "tandem/tandem.hpp"

namespace tandem::gpu {
namespace {

bool can_run_cublas(const SgemmArgs& args, const SgemmStream& where) {
    return where.cublas_handle != nullptr && args.lda <= INT_MAX && args.ldb <= INT_MAX &&
           args.ldc <= INT_MAX;
}

// cuBLAS is column-major, and a row-major matrix read as column-major is its
// transpose: C = A B (row-major) is C^T = B^T A^T (column-major), the same
// memory with the operands swapped and no transposition flags.
void run_cublas(const SgemmArgs& args, const SgemmStream& where) {
    const auto handle = static_cast<cublasHandle_t>(where.cublas_handle);
    TANDEM_CUBLAS_CHECK(cublasSetStream(handle, static_cast<cudaStream_t>(where.stream)));
    TANDEM_CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, int(args.n), int(args.m),
                                    int(args.k), &args.alpha, args.b, int(args.ldb), args.a,
                                    int(args.lda), &args.beta, args.c, int(args.ldc)));
}

}  // namespace

SgemmVariant make_cublas_variant() {
    SgemmVariant variant;
    variant.name = kCublasVariant;
    variant.can_run = &can_run_cublas;
    variant.run = &run_cublas;
    return variant;
}

}  // namespace tandem::gpu
