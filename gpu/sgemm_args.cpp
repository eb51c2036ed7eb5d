#include "gpu/sgemm_args.hpp"

#include <algorithm>
#include <climits>
#include <string>

#include "tandem/tandem.hpp"

namespace tandem::gpu {
namespace {

[[noreturn]] void bad_argument(const std::string& what) {
    throw Error(TANDEM_ERROR_INTERNAL, "sgemm_rm: " + what);
}

void check_dimension(const char* name, int64_t value) {
    // Kernels index rows and columns with int and launch one block per tile.
    if (value < 0 || value > INT_MAX)
        bad_argument(std::string(name) + " = " + std::to_string(value) + " is outside [0, INT_MAX]");
}

void check_leading(const char* name, int64_t ld, int64_t width) {
    if (ld < std::max<int64_t>(1, width))
        bad_argument(std::string(name) + " = " + std::to_string(ld) + " is below max(1, " +
                     std::to_string(width) + ")");
}

bool aligned16(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer) % 16 == 0; }

}  // namespace

void check_sgemm_args(const SgemmArgs& args) {
    check_dimension("m", args.m);
    check_dimension("n", args.n);
    check_dimension("k", args.k);
    check_leading("lda", args.lda, args.k);
    check_leading("ldb", args.ldb, args.n);
    check_leading("ldc", args.ldc, args.n);
    if (args.m == 0 || args.n == 0) return;
    if (!args.c) bad_argument("C is null");
    const bool reads_ab = args.k > 0 && args.alpha != 0.0f;
    if (reads_ab && (!args.a || !args.b)) bad_argument("A or B is null");
}

bool sgemm_vector_aligned(const SgemmArgs& args) {
    return aligned16(args.b) && args.ldb % 4 == 0 && aligned16(args.c) && args.ldc % 4 == 0;
}

bool sgemm_all_vector_aligned(const SgemmArgs& args) {
    return sgemm_vector_aligned(args) && aligned16(args.a) && args.lda % 4 == 0;
}

double sgemm_flops(const SgemmArgs& args) {
    return 2.0 * static_cast<double>(args.m) * static_cast<double>(args.n) *
           static_cast<double>(args.k);
}

}  // namespace tandem::gpu
