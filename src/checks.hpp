// Argument checks of the public entry points, in LAPACK's style: the first bad
// argument (in signature order, counting from 1) is reported as -position.
// Nothing here writes the caller's arrays; only sgetrs's ipiv is read. An
// array in GPU memory passed to a host routine (or an ipiv in GPU memory) is
// a bad argument, found by asking the CUDA runtime about the pointer.
#ifndef TANDEM_SRC_CHECKS_HPP
#define TANDEM_SRC_CHECKS_HPP

#include <string>

#include "tandem/tandem.hpp"

namespace tandem::detail {

struct CheckResult {
    int info = 0;         // 0 or -(position of the first bad argument)
    std::string message;  // what is wrong, naming the argument
};

// Options are valid when every field is in range (see Options).
bool options_valid(const Options& options, std::string* why);

CheckResult check_getrf(int m, int n, const float* a, int lda, const int* ipiv,
                        const Options& options);
// As check_getrf, and the options sgetrf_gpu needs (column-major, one device).
// Where `a` lives is checked by the Solver, which knows the backend.
CheckResult check_getrf_gpu(int m, int n, const float* a, int lda, const int* ipiv,
                            const Options& options);
// sgetrs_gpu / sgesv_gpu: as sgetrs / sgesv, column-major, one device.
CheckResult check_getrs_gpu(char trans, int n, int nrhs, const float* a, int lda, const int* ipiv,
                            const float* b, int ldb, const Options& options);
CheckResult check_gesv_gpu(int n, int nrhs, const float* a, int lda, const int* ipiv,
                           const float* b, int ldb, const Options& options);
CheckResult check_getrs(char trans, int n, int nrhs, const float* a, int lda, const int* ipiv,
                        const float* b, int ldb, const Options& options);
CheckResult check_gesv(int n, int nrhs, const float* a, int lda, const int* ipiv,
                       const float* b, int ldb, const Options& options);

// sgesv_refined(_gpu): sgesv's arguments, then x (8), ldx (9), iter (10) and
// the options (11); X must not be B.
CheckResult check_gesv_refined(int n, int nrhs, const float* a, int lda, const int* ipiv,
                               const float* b, int ldb, const float* x, int ldx, const int* iter,
                               const Options& options);
CheckResult check_gesv_refined_gpu(int n, int nrhs, const float* a, int lda, const int* ipiv,
                                   const float* b, int ldb, const float* x, int ldx,
                                   const int* iter, const Options& options);

// 'N', 'T' or 'C' in either case; 'C' means 'T' for real matrices.
bool trans_valid(char trans);
bool is_transposed(char trans);

}  // namespace tandem::detail

#endif
