// Shared helpers of the test suites: test matrices of known character, the
// LAPACK-style residual checks that serve as oracles, layout conversions and
// the seed every randomized test prints when it fails.
//
// Storage conventions: column-major arrays hold an m x n matrix in ld * n
// floats (element (i, j) at a[i + j * ld]); row-major ones hold it in m * ld
// floats (element (i, j) at a[i * ld + j]). Padding (the entries beyond the
// matrix in each column, or row) holds kPadding so that a test can check that
// a call left it untouched.
#ifndef TANDEM_TESTS_TEST_SUPPORT_HPP
#define TANDEM_TESTS_TEST_SUPPORT_HPP

#include <cstdint>
#include <string>
#include <vector>

namespace tandem::test {

enum class MatrixKind { random, diagonally_dominant, badly_scaled, ill_conditioned };

const char* kind_name(MatrixKind kind);

// LAPACK's threshold for the residual ratios below (xGET01/xGET02 in its tests).
constexpr double kResidualBound = 30.0;

// The value written into padding by make_matrix and the layout conversions.
constexpr float kPadding = 12345.0f;

// A seed for one test's random inputs: TANDEM_TEST_SEED from the environment if
// set (to reproduce a failure), else a fresh one from std::random_device.
uint64_t test_seed();

// A column-major m x n matrix with leading dimension ld >= max(1, m), in a vector
// of ld * n floats whose padding rows hold kPadding.
//   random:              entries uniform in [-1, 1].
//   diagonally_dominant: random, with |a(j,j)| larger than the sum of the other
//                        entries of column j, so partial pivoting never swaps.
//   badly_scaled:        D_r * random * D_c with D_r, D_c powers of two spread over
//                        about 1e-8 .. 1e8 (exactly representable, no overflow).
//   ill_conditioned:     H_1 H_2 H_3 * diag(s) * H_4 H_5 H_6 with Householder
//                        reflectors H_k and singular values s spread
//                        geometrically over 1e-6 .. 1 in random order: condition
//                        number about 1e6, still clearly nonsingular in float.
std::vector<float> make_matrix(int64_t m, int64_t n, int64_t ld, MatrixKind kind, uint64_t seed);

// ||P * A - L * U||_1 / (max(m, n) * ||A||_1 * eps), computed in double, where
// eps = 2^-24 is LAPACK's slamch('E'). a is the original m x n matrix (column-
// major, lda), lu the factors from sgetrf (column-major, ldlu), ipiv the
// min(m, n) 1-based pivots. Invalid pivots give +infinity, as does a nonzero
// difference when A = 0.
double factorization_residual(int64_t m, int64_t n, const float* a, int64_t lda, const float* lu,
                              int64_t ldlu, const int* ipiv);

// max over the right-hand sides j of ||A x_j - b_j||_1 / (||A||_1 ||x_j||_1 n eps),
// in double, all column-major (A n x n, X and B n x nrhs). A zero x_j with a
// nonzero residual gives +infinity.
double solve_residual(int64_t n, int64_t nrhs, const float* a, int64_t lda, const float* x,
                      int64_t ldx, const float* b, int64_t ldb);

// sgesv_refined's own test quantity: max_j ||b_j - A x_j||_inf /
// (||A||_inf ||x_j||_inf) in double, column-major (0 for a zero residual,
// +infinity when an entry of X or of a residual is not finite).
double inf_backward_error(int64_t n, int64_t nrhs, const float* a, int64_t lda, const float* x,
                          int64_t ldx, const float* b, int64_t ldb);

// The same for A^T x_j = b_j (trans 'T' / 'C'), with ||A^T||_1 in the denominator.
double solve_residual_trans(int64_t n, int64_t nrhs, const float* a, int64_t lda, const float* x,
                            int64_t ldx, const float* b, int64_t ldb);

// The column-major m x n matrix a (lda) stored row-major with leading dimension
// ld_out >= n, in m * ld_out floats (padding kPadding).
std::vector<float> to_row_major(int64_t m, int64_t n, const float* a_colmajor, int64_t lda,
                                int64_t ld_out);

// The row-major m x n matrix a (lda) stored column-major with leading dimension
// ld_out >= m, in ld_out * n floats (padding kPadding).
std::vector<float> to_col_major(int64_t m, int64_t n, const float* a_rowmajor, int64_t lda,
                                int64_t ld_out);

// Padding entries that no longer hold kPadding: entries inner .. ld-1 of each of
// the `outer` runs of length ld (columns of a column-major m x n array: inner =
// m, outer = n; rows of a row-major one: inner = n, outer = m).
int64_t padding_changes(int64_t inner, int64_t outer, int64_t ld, const float* a);

// Index of the first float whose bit pattern differs between x and y (which
// must have the same size), or -1 when they are identical bit for bit.
int64_t first_bit_difference(const std::vector<float>& x, const std::vector<float>& y);

// Sets (value) or unsets (nullptr) an environment variable for one scope and
// restores what was there.
class ScopedEnvironmentVariable {
public:
    ScopedEnvironmentVariable(const char* name, const char* value);
    ~ScopedEnvironmentVariable();
    ScopedEnvironmentVariable(const ScopedEnvironmentVariable&) = delete;
    ScopedEnvironmentVariable& operator=(const ScopedEnvironmentVariable&) = delete;

private:
    std::string name_, saved_;
    bool had_ = false;
};

}  // namespace tandem::test

#endif  // TANDEM_TESTS_TEST_SUPPORT_HPP
