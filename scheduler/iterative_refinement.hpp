// Iterative refinement of A X = B around an LU factorization of A computed in
// a lower precision (tensor-core updates): LAPACK's DSGESV one level down
// (factors of about 1e-3 relative accuracy, residuals accumulated in double,
// X in FP32), with Carson & Higham's GMRES-IR (SIAM J. Sci. Comput. 40(2),
// 2018) taking over the corrections when the classical ones stop halving the
// residual. The algorithm only talks to a RefinementSystem, which holds A
// and the factors where they are (a GPU, or host memory for the emulated
// devices), and does the small vector work on the host in double.
#ifndef TANDEM_SCHEDULER_ITERATIVE_REFINEMENT_HPP
#define TANDEM_SCHEDULER_ITERATIVE_REFINEMENT_HPP

#include <cstdint>
#include <string>

namespace tandem {

// A (n x n) and the LU factors of P A in a lower precision.
class RefinementSystem {
public:
    virtual ~RefinementSystem() = default;
    virtual int64_t order() const = 0;
    // V := inv(P L U) V in FP32, for V n x k column-major in host memory (ld n).
    virtual void solve_with_factors(int64_t k, float* v) = 0;
    // Y = A Z with the products and sums in double, for Z, Y n x k column-major
    // in host memory (ld n).
    virtual void multiply(int64_t k, const double* z, double* y) = 0;
};

struct RefinementSettings {
    // X_j passes when ||B_j - A X_j||_inf <= tolerance ||A||_inf ||X_j||_inf,
    // the residual computed in double from the FP32 X_j returned. 2^-23 (one
    // unit in FP32's last place) is below what an FP32 LU solve attains on
    // random matrices from n of about 100 on (its normwise backward error
    // grows like sqrt(n) 2^-24; measured 23-130 x 2^-24 at n = 8192-32768).
    double tolerance = 0x1p-23;
    int max_corrections = 30;  // LAPACK's ITERMAX
    // GMRES-IR: the inner solve of A D = R, preconditioned by the factors,
    // stops when its preconditioned residual has fallen by this much, or after
    // max_gmres_steps iterations (each one solve and one product with A).
    double gmres_tolerance = 1e-6;
    int max_gmres_steps = 40;
};

struct RefinementResult {
    bool converged = false;
    int corrections = 0;   // corrections applied to X (DSGESV's ITER when it converged)
    int gmres_steps = 0;   // GMRES iterations in the corrections that used GMRES
    // max_j ||B_j - A X_j||_inf / (||A||_inf ||X_j||_inf) at the last check
    double backward_error = 0.0;
    std::string why;  // why it did not converge
    // When it did not converge, why (negative, in the style of DSGESV's ITER;
    // -(max_corrections + 1) is DSGESV's own, the others are tandem's):
    //   -2 X or the residual became Inf or NaN;
    //   -4 a correction did not halve the residual, classical and then GMRES;
    //   -(max_corrections + 1) the test still failed after max_corrections.
    int failure = 0;
};

// X := inv(P L U) B, then corrected until every column passes the test (or it
// gives up, which the result says). B and X are n x nrhs column-major in host
// memory. a_norm is ||A||_inf, finite.
RefinementResult refine_solution(RefinementSystem& system, double a_norm, int64_t nrhs,
                                 const float* b, int64_t ldb, float* x, int64_t ldx,
                                 const RefinementSettings& settings = {});

}  // namespace tandem

#endif  // TANDEM_SCHEDULER_ITERATIVE_REFINEMENT_HPP
