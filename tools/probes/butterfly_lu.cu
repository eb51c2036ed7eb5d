// A refined solve around an LU without pivoting of a randomized matrix
// (random butterfly transforms, Parker 1995; Baboulin, Dongarra et al. 2013,
// MAGMA's sgesv_rbt): A_r = U^T A V with U, V recursive butterflies of depth
// 2, A_r = L U with no row interchanges, blocked right-looking on the device
// (cuSOLVER's getrf without pivots on the diagonal blocks, cuBLAS's TRSMs,
// the updates in fp32, tf32 or tf32x3), then tandem's refinement
// (scheduler/iterative_refinement.hpp) with corrections V inv(L U) U^T R.
// For each n (--sizes), uniform [-1, 1] A and b in GPU memory, ms (medians of
// 3) of: the transform, the factorization, the whole refined solve, and
// tandem's sgesv_gpu and sgesv_refined_gpu on the same arrays, with the
// corrections and backward errors. Built with the CUDA backend as
// build/bench/tandem-butterfly-lu.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpu/refinement_kernels.hpp"
#include "gpu/split_product.hpp"
#include "scheduler/iterative_refinement.hpp"
#include "tandem/tandem.hpp"

#define CHECK(call)                                                                 \
    do {                                                                            \
        const auto status_ = (call);                                                \
        if (static_cast<int>(status_) != 0) {                                       \
            std::fprintf(stderr, "%s:%d: %s failed (%d)\n", __FILE__, __LINE__, #call, \
                         static_cast<int>(status_));                                \
            std::exit(1);                                                           \
        }                                                                           \
    } while (0)

namespace {

// One level of butterflies of size s on both sides: A := B_u^T A B_v, where
// each s x s diagonal block pair of B is 1/sqrt(2) [R0 R1; R0 -R1] with R0 =
// diag(d[p..p+h)), R1 = diag(d[p+h..p+s)), h = s / 2, p the block's start.
__global__ void butterfly_both_sides(int64_t n, int64_t s, float* a, int64_t lda, const float* u,
                                     const float* v) {
    const int64_t h = s / 2;
    const int64_t half = n / 2;  // (i, j) over the n/2 x n/2 top-left corners of the quads
    // Consecutive threads on consecutive rows: column-major, coalesced.
    const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
    const int64_t j = blockIdx.y * int64_t(blockDim.y) + threadIdx.y;
    if (i >= half || j >= half) return;
    const int64_t r0 = (i / h) * s + i % h, r1 = r0 + h;
    const int64_t c0 = (j / h) * s + j % h, c1 = c0 + h;
    const float a00 = a[r0 + c0 * lda], a01 = a[r0 + c1 * lda];
    const float a10 = a[r1 + c0 * lda], a11 = a[r1 + c1 * lda];
    const float u0 = u[r0], u1 = u[r1], v0 = v[c0], v1 = v[c1];
    const float t00 = u0 * (a00 + a10), t01 = u0 * (a01 + a11);
    const float t10 = u1 * (a00 - a10), t11 = u1 * (a01 - a11);
    a[r0 + c0 * lda] = 0.5f * (t00 + t01) * v0;
    a[r0 + c1 * lda] = 0.5f * (t00 - t01) * v1;
    a[r1 + c0 * lda] = 0.5f * (t10 + t11) * v0;
    a[r1 + c1 * lda] = 0.5f * (t10 - t11) * v1;
}

// The rows this thread pairs in a butterfly of span s (r1 = r0 + s / 2) and
// its column, or false where it has none (n / 2 pairs, k columns).
__device__ bool butterfly_pair(int64_t n, int64_t k, int64_t s, int64_t& r0, int64_t& r1,
                               int64_t& c) {
    const int64_t h = s / 2;
    const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
    c = blockIdx.y;
    if (i >= n / 2 || c >= k) return false;
    r0 = (i / h) * s + i % h;
    r1 = r0 + h;
    return true;
}

// X := B_u^T X (left) for X n x k column-major.
__global__ void butterfly_left(int64_t n, int64_t k, int64_t s, float* x, int64_t ldx,
                               const float* u) {
    int64_t r0, r1, c;
    if (!butterfly_pair(n, k, s, r0, r1, c)) return;
    const float x0 = x[r0 + c * ldx], x1 = x[r1 + c * ldx];
    x[r0 + c * ldx] = float(M_SQRT1_2) * u[r0] * (x0 + x1);
    x[r1 + c * ldx] = float(M_SQRT1_2) * u[r1] * (x0 - x1);
}

// Y := B_v Y for Y n x k column-major.
__global__ void butterfly_apply(int64_t n, int64_t k, int64_t s, float* y, int64_t ldy,
                                const float* v) {
    int64_t r0, r1, c;
    if (!butterfly_pair(n, k, s, r0, r1, c)) return;
    const float y0 = v[r0] * y[r0 + c * ldy], y1 = v[r1] * y[r1 + c * ldy];
    y[r0 + c * ldy] = float(M_SQRT1_2) * (y0 + y1);
    y[r1 + c * ldy] = float(M_SQRT1_2) * (y0 - y1);
}

double now_ms() {
    const auto since = std::chrono::steady_clock::now().time_since_epoch();
    return std::chrono::duration<double, std::milli>(since).count();
}

double median3(std::vector<double> t) {
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

enum class Update { fp32, tf32, tf32x3 };

struct Gpu {
    cudaStream_t stream;
    cublasHandle_t blas;
    cusolverDnHandle_t solver;
};

struct Factors {
    int64_t n;
    float* lu;          // column-major, ld n
    float* u[2];        // butterflies' diagonals, levels 1 and 2 (device, n each)
    float* v[2];
};

void transform(const Gpu& g, Factors& f) {
    const int64_t n = f.n;
    const dim3 block(32, 8), grid(unsigned((n / 2 + 31) / 32), unsigned((n / 2 + 7) / 8));
    butterfly_both_sides<<<grid, block, 0, g.stream>>>(n, n, f.lu, n, f.u[0], f.v[0]);
    butterfly_both_sides<<<grid, block, 0, g.stream>>>(n, n / 2, f.lu, n, f.u[1], f.v[1]);
    CHECK(cudaGetLastError());
}

void factor_without_pivots(const Gpu& g, Factors& f, int64_t nb, Update update, float* split,
                           float* work, int* info) {
    const int64_t n = f.n;
    float* a = f.lu;
    const float one = 1.0f, minus = -1.0f;
    for (int64_t k = 0; k < n; k += nb) {
        const int kb = int(std::min(nb, n - k));
        float* diag = a + k + k * n;
        // A11 = L11 U11. Its info is not read (a read would synchronize each
        // step): a zero pivot shows as Inf or NaN in the refinement's residual.
        CHECK(cusolverDnSgetrf(g.solver, kb, kb, diag, int(n), work, nullptr, info));
        const int m2 = int(n - k - kb);
        if (m2 == 0) break;
        float* a21 = diag + kb;
        float* a12 = diag + int64_t(kb) * n;
        float* a22 = a12 + kb;
        // L21 = A21 inv(U11), U12 = inv(L11) A12
        CHECK(cublasStrsm(g.blas, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                          CUBLAS_DIAG_NON_UNIT, m2, kb, &one, diag, int(n), a21, int(n)));
        CHECK(cublasStrsm(g.blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                          CUBLAS_DIAG_UNIT, kb, m2, &one, diag, int(n), a12, int(n)));
        // A22 -= L21 U12
        if (update == Update::fp32) {
            CHECK(cublasSgemm(g.blas, CUBLAS_OP_N, CUBLAS_OP_N, m2, m2, kb, &minus, a21, int(n), a12,
                              int(n), &one, a22, int(n)));
        } else if (update == Update::tf32) {
            CHECK(cublasGemmEx(g.blas, CUBLAS_OP_N, CUBLAS_OP_N, m2, m2, kb, &minus, a21, CUDA_R_32F,
                               int(n), a12, CUDA_R_32F, int(n), &one, a22, CUDA_R_32F, int(n),
                               CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
        } else {
            // Column-major A22 -= L21 U12 is row-major A22^T -= U12^T L21^T.
            float* left = split;
            float* right = split + int64_t(m2) * 3 * kb;
            tandem::gpu::split_left_tf32x3(g.stream, m2, kb, a12, n, left);
            tandem::gpu::split_right_tf32x3(g.stream, kb, m2, a21, n, right);
            tandem::gpu::product_tf32x3({g.stream, g.blas}, m2, m2, kb, -1.0f, left, right, 1.0f,
                                        a22, n);
        }
    }
}

class ButterflySystem final : public tandem::RefinementSystem {
public:
    ButterflySystem(const Gpu& g, const Factors& f, const float* a, float* vectors, double* wide)
        : g_(g), f_(f), a_(a), vectors_(vectors), wide_(wide) {}
    int64_t order() const override { return f_.n; }
    void solve_with_factors(int64_t k, float* v) override {
        const int64_t n = f_.n;
        CHECK(cudaMemcpyAsync(vectors_, v, sizeof(float) * n * k, cudaMemcpyHostToDevice,
                              g_.stream));
        const dim3 grid(unsigned((n / 2 + 255) / 256), unsigned(k));
        butterfly_left<<<grid, 256, 0, g_.stream>>>(n, k, n, vectors_, n, f_.u[0]);
        butterfly_left<<<grid, 256, 0, g_.stream>>>(n, k, n / 2, vectors_, n, f_.u[1]);
        const float one = 1.0f;
        CHECK(cublasStrsm(g_.blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                          CUBLAS_DIAG_UNIT, int(n), int(k), &one, f_.lu, int(n), vectors_, int(n)));
        CHECK(cublasStrsm(g_.blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                          CUBLAS_DIAG_NON_UNIT, int(n), int(k), &one, f_.lu, int(n), vectors_, int(n)));
        // x = V y = B_v1 (B_v2 y)
        butterfly_apply<<<grid, 256, 0, g_.stream>>>(n, k, n / 2, vectors_, n, f_.v[1]);
        butterfly_apply<<<grid, 256, 0, g_.stream>>>(n, k, n, vectors_, n, f_.v[0]);
        CHECK(cudaMemcpyAsync(v, vectors_, sizeof(float) * n * k, cudaMemcpyDeviceToHost,
                              g_.stream));
        CHECK(cudaStreamSynchronize(g_.stream));
    }
    void multiply(int64_t k, const double* z, double* y) override {
        const int64_t n = f_.n;
        CHECK(cudaMemcpyAsync(wide_, z, sizeof(double) * n * k, cudaMemcpyHostToDevice, g_.stream));
        tandem::gpu::multiply_in_double(g_.stream, n, k, a_, n, wide_, wide_ + n * k);
        CHECK(cudaMemcpyAsync(y, wide_ + n * k, sizeof(double) * n * k, cudaMemcpyDeviceToHost,
                              g_.stream));
        CHECK(cudaStreamSynchronize(g_.stream));
    }

private:
    const Gpu& g_;
    const Factors& f_;
    const float* a_;
    float* vectors_;
    double* wide_;
};

// ||b - A x||inf / (||A||inf ||x||inf n eps) in double on the host.
double backward_error(int64_t n, const std::vector<float>& a, const std::vector<float>& b,
                      const std::vector<float>& x) {
    std::vector<double> r(b.begin(), b.end());
    double anorm = 0;
    std::vector<double> rowsum(size_t(n), 0.0);
    for (int64_t j = 0; j < n; ++j) {
        const double xj = x[size_t(j)];
        const float* col = a.data() + j * n;
        for (int64_t i = 0; i < n; ++i) {
            r[size_t(i)] -= double(col[i]) * xj;
            rowsum[size_t(i)] += std::fabs(double(col[i]));
        }
    }
    double rn = 0, xn = 0;
    for (int64_t i = 0; i < n; ++i) {
        rn = std::max(rn, std::fabs(r[size_t(i)]));
        xn = std::max(xn, std::fabs(double(x[size_t(i)])));
        anorm = std::max(anorm, rowsum[size_t(i)]);
    }
    return rn / (anorm * xn * double(n) * 0x1p-24);
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<int64_t> sizes = {4096, 8192, 16384, 32768};
    std::vector<int64_t> widths = {256, 512};
    for (int i = 1; i + 1 < argc; ++i) {
        auto list = [&](std::vector<int64_t>& out) {
            out.clear();
            std::stringstream s(argv[i + 1]);
            for (std::string item; std::getline(s, item, ',');) out.push_back(std::atoll(item.c_str()));
        };
        if (std::string(argv[i]) == "--sizes") list(sizes);
        if (std::string(argv[i]) == "--nb") list(widths);
    }
    if (!tandem::gpu_available()) {
        std::fprintf(stderr, "needs a GPU\n");
        return 2;
    }
    Gpu g{};
    CHECK(cudaStreamCreate(&g.stream));
    CHECK(cublasCreate(&g.blas));
    CHECK(cublasSetStream(g.blas, g.stream));
    CHECK(cusolverDnCreate(&g.solver));
    CHECK(cusolverDnSetStream(g.solver, g.stream));
    std::mt19937_64 rng(20261125);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f), exponent(-0.5f, 0.5f);
    for (const int64_t n : sizes) {
        if (n % 4 != 0) continue;
        std::vector<float> a(static_cast<size_t>(n * n)), b(static_cast<size_t>(n)), x(static_cast<size_t>(n));
        for (float& v : a) v = uniform(rng);
        for (float& v : b) v = uniform(rng);
        float *d_a, *d_lu, *d_b, *d_x, *d_work, *d_split, *d_vectors, *d_tandem;
        double* d_wide;
        int* d_info;
        CHECK(cudaMalloc(&d_a, sizeof(float) * n * n));
        CHECK(cudaMalloc(&d_lu, sizeof(float) * n * n));
        CHECK(cudaMalloc(&d_tandem, sizeof(float) * n * n));
        CHECK(cudaMalloc(&d_b, sizeof(float) * n));
        CHECK(cudaMalloc(&d_x, sizeof(float) * n));
        CHECK(cudaMalloc(&d_vectors, sizeof(float) * n));
        CHECK(cudaMalloc(&d_wide, sizeof(double) * 2 * n));
        CHECK(cudaMalloc(&d_info, sizeof(int)));
        CHECK(cudaMemcpy(d_a, a.data(), sizeof(float) * n * n, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(d_b, b.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
        int lwork = 0;
        // The workspace of the widest diagonal block's getrf.
        const int64_t widest = *std::max_element(widths.begin(), widths.end());
        const int widest_block = int(std::min(widest, n));
        CHECK(cusolverDnSgetrf_bufferSize(g.solver, widest_block, widest_block, d_lu, int(n), &lwork));
        CHECK(cudaMalloc(&d_work, sizeof(float) * std::max(lwork, 1)));
        CHECK(cudaMalloc(&d_split, sizeof(float) * 6 * n * widest));

        Factors f{n, d_lu, {nullptr, nullptr}, {nullptr, nullptr}};
        for (int level = 0; level < 2; ++level) {
            std::vector<float> du(static_cast<size_t>(n)), dv(static_cast<size_t>(n));
            for (float& v : du) v = std::exp(exponent(rng) / 10.0f);
            for (float& v : dv) v = std::exp(exponent(rng) / 10.0f);
            CHECK(cudaMalloc(&f.u[level], sizeof(float) * n));
            CHECK(cudaMalloc(&f.v[level], sizeof(float) * n));
            CHECK(cudaMemcpy(f.u[level], du.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
            CHECK(cudaMemcpy(f.v[level], dv.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
        }
        const double a_norm = [&] {
            std::vector<double> rows(size_t(n), 0.0);
            for (int64_t j = 0; j < n; ++j)
                for (int64_t i = 0; i < n; ++i) rows[size_t(i)] += std::fabs(double(a[size_t(i + j * n)]));
            return *std::max_element(rows.begin(), rows.end());
        }();

        // tandem's FP32 and refined solves on the same arrays, for reference.
        {
            std::vector<double> t_fp32, t_refined;
            int iter = 0;
            std::vector<int> ipiv(static_cast<size_t>(n));
            for (int r = 0; r < 4; ++r) {
                CHECK(cudaMemcpy(d_tandem, d_a, sizeof(float) * n * n, cudaMemcpyDeviceToDevice));
                CHECK(cudaMemcpy(d_x, d_b, sizeof(float) * n, cudaMemcpyDeviceToDevice));
                CHECK(cudaDeviceSynchronize());
                double t0 = now_ms();
                tandem::Report report;
                if (tandem::sgesv_gpu(int(n), 1, d_tandem, int(n), ipiv.data(), d_x, int(n), {}, &report) != 0) {
                    std::fprintf(stderr, "sgesv_gpu: %s\n", report.message.c_str());
                    return 1;
                }
                CHECK(cudaDeviceSynchronize());
                if (r > 0) t_fp32.push_back(now_ms() - t0);
                CHECK(cudaMemcpy(x.data(), d_x, sizeof(float) * n, cudaMemcpyDeviceToHost));
                const double fp32_error = backward_error(n, a, b, x);
                CHECK(cudaMemcpy(d_tandem, d_a, sizeof(float) * n * n, cudaMemcpyDeviceToDevice));
                CHECK(cudaDeviceSynchronize());
                t0 = now_ms();
                if (tandem::sgesv_refined_gpu(int(n), 1, d_tandem, int(n), ipiv.data(), d_b, int(n), d_x,
                                              int(n), &iter, {}, &report) != 0) {
                    std::fprintf(stderr, "sgesv_refined_gpu: %s\n", report.message.c_str());
                    return 1;
                }
                CHECK(cudaDeviceSynchronize());
                if (r > 0) t_refined.push_back(now_ms() - t0);
                CHECK(cudaMemcpy(x.data(), d_x, sizeof(float) * n, cudaMemcpyDeviceToHost));
                if (r == 3)
                    std::printf("n=%lld tandem: sgesv_gpu %.2f ms (%.2g) | sgesv_refined_gpu %.2f ms [%d] (%.2g)\n",
                                (long long)n, median3(t_fp32), fp32_error, median3(t_refined), iter,
                                backward_error(n, a, b, x));
            }
        }
        for (const int64_t nb : widths) {
            for (const Update update : {Update::fp32, Update::tf32, Update::tf32x3}) {
                const char* name = update == Update::fp32 ? "fp32" : update == Update::tf32 ? "tf32" : "tf32x3";
                std::vector<double> t_transform, t_factor, t_total;
                tandem::RefinementResult result;
                for (int r = 0; r < 4; ++r) {
                    CHECK(cudaMemcpy(d_lu, d_a, sizeof(float) * n * n, cudaMemcpyDeviceToDevice));
                    CHECK(cudaDeviceSynchronize());
                    const double t0 = now_ms();
                    transform(g, f);
                    CHECK(cudaStreamSynchronize(g.stream));
                    const double t1 = now_ms();
                    factor_without_pivots(g, f, nb, update, d_split, d_work, d_info);
                    CHECK(cudaStreamSynchronize(g.stream));
                    const double t2 = now_ms();
                    ButterflySystem system(g, f, d_a, d_vectors, d_wide);
                    std::vector<float> host_b(b);
                    std::vector<float> host_x(static_cast<size_t>(n));
                    // B comes from GPU memory, as in sgesv_refined_gpu.
                    CHECK(cudaMemcpy(host_b.data(), d_b, sizeof(float) * n, cudaMemcpyDeviceToHost));
                    result = tandem::refine_solution(system, a_norm, 1, host_b.data(), n, host_x.data(), n);
                    CHECK(cudaMemcpy(d_x, host_x.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
                    const double t3 = now_ms();
                    if (r > 0) {
                        t_transform.push_back(t1 - t0);
                        t_factor.push_back(t2 - t1);
                        t_total.push_back(t3 - t0);
                    }
                    x = host_x;
                }
                std::printf("n=%lld nb=%lld %s: transform %.2f ms, factor %.2f ms, refined solve %.2f ms "
                            "[%s, %d corrections, %d GMRES steps] (%.2g)\n",
                            (long long)n, (long long)nb, name, median3(t_transform), median3(t_factor),
                            median3(t_total), result.converged ? "converged" : result.why.c_str(),
                            result.corrections, result.gmres_steps, backward_error(n, a, b, x));
                std::fflush(stdout);
            }
        }
        for (int level = 0; level < 2; ++level) {
            CHECK(cudaFree(f.u[level]));
            CHECK(cudaFree(f.v[level]));
        }
        for (void* p : {(void*)d_a, (void*)d_lu, (void*)d_tandem, (void*)d_b, (void*)d_x, (void*)d_vectors,
                        (void*)d_wide, (void*)d_info, (void*)d_work, (void*)d_split})
            CHECK(cudaFree(p));
    }
    return 0;
}
