// The test matrices of `tandem-bench accuracy`: n x n, column-major, float,
// each a pure function of (kind, n, seed), built in double where the
// construction needs it and rounded to float once.
//
//   uniform   entries uniform in [-1, 1): the lu mode's matrix at the same seed.
//   gaussian  standard normal entries: the solve mode's gaussian matrix.
//   randsvd3, randsvd5, randsvd7
//             singular values spaced geometrically from 1 to 1/kappa, kappa =
//             1e3, 1e5, 1e7 (in double; FP32's rounding of the entries moves
//             them by up to about n 2^-24 each).
//   scaled    uniform, with row i multiplied by 2^r_i and column j by 2^c_j, r
//             and c integers uniform in [-20, 20]: entries from about 2^-64 to
//             2^40, every one exact in float.
//   growth    Wilkinson's matrix of order m = min(n, 60) on m rows and columns
//             spread evenly over the matrix, the identity elsewhere, and noise
//             of 1e-6: partial pivoting factors it with growth max|U| / max|A|
//             = 2^(m-1) (2^59 = 5.8e17 from n = 60 on: large, and finite in
//             FP32), the doubling done by the trailing updates (see
//             growth_matrix in matrix_kinds.cpp).
#ifndef TANDEM_BENCH_MATRIX_KINDS_HPP
#define TANDEM_BENCH_MATRIX_KINDS_HPP

#include <cstdint>
#include <string>
#include <vector>

namespace tandem_bench {

enum class TestMatrixKind { uniform, gaussian, randsvd3, randsvd5, randsvd7, scaled, growth };

struct TestMatrixKindInfo {
    TestMatrixKind kind;
    const char* name;  // as --kinds, the tables and the CSV spell it
};

// Every kind, in the order of the accuracy mode's default --kinds.
const std::vector<TestMatrixKindInfo>& test_matrix_kinds();
const char* test_matrix_kind_name(TestMatrixKind kind);
// false when `name` is no kind's name.
bool test_matrix_kind_from_name(const std::string& name, TestMatrixKind& kind);

// The counter stream of the matrix of (kind, n, seed). uniform and gaussian
// use the sweep modes' matrix_stream(seed, n), so that they are the lu and
// solve modes' matrices; every other kind has a stream of its own.
std::uint64_t test_matrix_stream(TestMatrixKind kind, int n, std::uint64_t seed);

// The n x n column-major matrix of (kind, n, seed); n >= 1. Costs O(n^2)
// (parallel with OpenMP) and, for n up to 65536, no more memory than the
// result.
std::vector<float> make_test_matrix(TestMatrixKind kind, int n, std::uint64_t seed);

// --- the pieces of the kinds, for their tests --------------------------------

// The condition number kappa of a randsvd kind (1e3, 1e5, 1e7); 0 for the others.
double randsvd_condition(TestMatrixKind kind);

// The singular values of randsvd at order n: kappa^(-i / (n - 1)), i = 0..n-1,
// from 1 down to 1/kappa (1 alone at n = 1).
std::vector<double> randsvd_singular_values(int n, double kappa);

// The randsvd matrix of `stream` in double, before its rounding to float: what
// make_test_matrix(randsvdK, n, seed) rounds, with stream =
// test_matrix_stream(randsvdK, n, seed).
std::vector<double> randsvd_matrix(int n, double kappa, std::uint64_t stream);

// The scaled kind's powers of two: row i is multiplied by 2^row[i] and column
// j by 2^column[j], each in [-scaled_max_exponent, scaled_max_exponent].
constexpr int scaled_max_exponent = 20;
struct ScalingExponents {
    std::vector<int> row;
    std::vector<int> column;
};
ScalingExponents scaling_exponents(int n, std::uint64_t stream);

// The order of the growth kind's Wilkinson matrix (min(n, growth_block_order))
// and the size of its noise.
constexpr int growth_block_order = 60;
constexpr double growth_noise = 1e-6;

}  // namespace tandem_bench

#endif
