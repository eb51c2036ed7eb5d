// Where the first tandem::sgesv of a process spends the time it takes beyond
// a warm call: one process per run, the CUDA context created first, then
// some of the first call's fixed costs paid alone and timed, in the order
// given, then the first and a second sgesv (automatic backend, 1 right-hand
// side, a random n x n matrix from host memory). What the first call loses
// when a cost is paid before it is that cost's share of it. Run it in a
// fresh process each time, with the model already cached
// (tandem-bench lu --sizes 1024 --repeats 1 before):
//   tandem-first-call-parts N [STEP,STEP,...]
// none: nothing before the call; cublas: a cuBLAS handle created and
// destroyed; pinned: 32 MiB of pinned host memory allocated and freed; gemm,
// trsm: cuBLAS's SGEMM (256^3) and left lower unit STRSM (256 x 256) once
// each, as the recursive panel calls them; lu256: a first sgetrf_gpu at
// n = 256 (tandem's own kernels, and cuBLAS's first ones where not loaded
// yet); owngemm: the sgesv calls with Options::gemm = tandem (cuBLAS's SGEMM
// never loaded by them); bgcublas: cuBLAS's SGEMM and STRSM loaded on a thread
// of its own while the first call runs. A third sgesv with the default
// options follows. `cusolver` alone instead times cuSOLVER's first and second
// getrf + getrs from host memory (handle, arrays and copies included): the
// baseline. Prints one line of milliseconds. Built as
// build/bench/tandem-first-call-parts (bench/CMakeLists.txt, CUDA only).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tandem/tandem.hpp"
#include "tools/probes/probe_check.hpp"

namespace {

double now_ms() {
    using clock = std::chrono::steady_clock;
    return std::chrono::duration<double, std::milli>(clock::now().time_since_epoch()).count();
}

double time_sgesv(int n, const std::vector<float>& a, const tandem::Options& options) {
    std::vector<float> lu = a, b(static_cast<size_t>(n), 1.0f);
    std::vector<int> ipiv(static_cast<size_t>(n));
    const double start = now_ms();
    const int info = tandem::sgesv(n, 1, lu.data(), n, ipiv.data(), b.data(), n, options);
    const double ms = now_ms() - start;
    if (info != 0) {
        std::fprintf(stderr, "sgesv returned info %d\n", info);
        std::exit(1);
    }
    return ms;
}

double load_cublas() {
    const double start = now_ms();
    cublasHandle_t handle = nullptr;
    CHECK(cublasCreate(&handle));
    CHECK(cublasDestroy(handle));
    return now_ms() - start;
}

double pin_host_memory() {
    const double start = now_ms();
    void* p = nullptr;
    CHECK(cudaHostAlloc(&p, size_t(32) << 20, cudaHostAllocPortable));
    CHECK(cudaFreeHost(p));
    return now_ms() - start;
}

// Uniform in [-1, 1); plus n on the diagonal when `dominant` (the small
// warm-up calls, which need no interchanges to load their kernels).
std::vector<float> random_matrix(int n, bool dominant) {
    std::vector<float> a(static_cast<size_t>(n) * n);
    std::mt19937 gen(7);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (float& x : a) x = u(gen);
    if (dominant)
        for (int i = 0; i < n; ++i) a[static_cast<size_t>(i) * n + i] += float(n);
    return a;
}

// cuBLAS's SGEMM (256^3) and/or left lower unit STRSM (256 x 256), each once,
// as the recursive panel calls them, on `stream` (0: the default stream):
// the milliseconds from the handle's creation to the calls' end.
double first_blas_calls(bool gemm, bool trsm, cudaStream_t stream) {
    const int n = 256;
    const std::vector<float> a = random_matrix(n, true);
    float *d_a = nullptr, *d_c = nullptr;
    const size_t bytes = a.size() * sizeof(float);
    CHECK(cudaMalloc(&d_a, bytes));
    CHECK(cudaMalloc(&d_c, bytes));
    CHECK(cudaMemcpy(d_a, a.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_c, a.data(), bytes, cudaMemcpyHostToDevice));
    const double start = now_ms();
    cublasHandle_t handle = nullptr;
    CHECK(cublasCreate(&handle));
    CHECK(cublasSetStream(handle, stream));
    const float minus_one = -1.0f, one = 1.0f;
    if (gemm)
        CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &minus_one, d_a, n, d_a, n,
                          &one, d_c, n));
    if (trsm)
        CHECK(cublasStrsm(handle, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                          CUBLAS_DIAG_UNIT, n, n, &one, d_a, n, d_c, n));
    CHECK(cudaStreamSynchronize(stream));
    const double ms = now_ms() - start;
    CHECK(cublasDestroy(handle));
    CHECK(cudaFree(d_a));
    CHECK(cudaFree(d_c));
    return ms;
}

double first_small_lu() {
    const int n = 256;
    const std::vector<float> a = random_matrix(n, true);
    float* d = nullptr;
    CHECK(cudaMalloc(&d, a.size() * sizeof(float)));
    CHECK(cudaMemcpy(d, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<int> ipiv(n);
    const double start = now_ms();
    const int info = tandem::sgetrf_gpu(n, n, d, n, ipiv.data());
    const double ms = now_ms() - start;
    CHECK(cudaFree(d));
    if (info != 0) std::exit(1);
    return ms;
}

// cuSOLVER's getrf + getrs from pageable host memory as a first call would
// make it: the handle, the device arrays, the copies both ways and the solve.
double cusolver_sgesv(int n, const std::vector<float>& a) {
    std::vector<float> lu = a, b(static_cast<size_t>(n), 1.0f);
    const double start = now_ms();
    cusolverDnHandle_t handle = nullptr;
    CHECK(cusolverDnCreate(&handle));
    float *d_a = nullptr, *d_b = nullptr, *d_work = nullptr;
    int *d_ipiv = nullptr, *d_info = nullptr;
    const size_t bytes = lu.size() * sizeof(float);
    CHECK(cudaMalloc(&d_a, bytes));
    CHECK(cudaMalloc(&d_b, static_cast<size_t>(n) * sizeof(float)));
    CHECK(cudaMalloc(&d_ipiv, static_cast<size_t>(n) * sizeof(int)));
    CHECK(cudaMalloc(&d_info, sizeof(int)));
    int work = 0;
    CHECK(cusolverDnSgetrf_bufferSize(handle, n, n, d_a, n, &work));
    CHECK(cudaMalloc(&d_work, static_cast<size_t>(work > 0 ? work : 1) * sizeof(float)));
    CHECK(cudaMemcpy(d_a, lu.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_b, b.data(), static_cast<size_t>(n) * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cusolverDnSgetrf(handle, n, n, d_a, n, d_work, d_ipiv, d_info));
    CHECK(cusolverDnSgetrs(handle, CUBLAS_OP_N, n, 1, d_a, n, d_ipiv, d_b, n, d_info));
    CHECK(cudaMemcpy(b.data(), d_b, static_cast<size_t>(n) * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(lu.data(), d_a, bytes, cudaMemcpyDeviceToHost));
    int info = -1;
    CHECK(cudaMemcpy(&info, d_info, sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d_a));
    CHECK(cudaFree(d_b));
    CHECK(cudaFree(d_ipiv));
    CHECK(cudaFree(d_info));
    CHECK(cudaFree(d_work));
    CHECK(cusolverDnDestroy(handle));
    const double ms = now_ms() - start;
    if (info != 0) {
        std::fprintf(stderr, "cuSOLVER returned info %d\n", info);
        std::exit(1);
    }
    return ms;
}

// cuBLAS's SGEMM and STRSM loaded on a thread of their own, on a stream of
// their own, while the calling thread goes on; the milliseconds it took.
void load_cublas_beside(double* ms) {
    const double start = now_ms();
    cudaStream_t stream = nullptr;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    (void)first_blas_calls(true, true, stream);
    CHECK(cudaStreamDestroy(stream));
    *ms = now_ms() - start;
}

}  // namespace

int main(int argc, char** argv) {
    const char* usage =
        "usage: %s N (1..16384) [none|cusolver|STEP,STEP,... of cublas pinned gemm trsm lu256 owngemm "
        "bgcublas]\n";
    if (argc < 2 || argc > 3) {
        std::fprintf(stderr, usage, argv[0]);
        return 2;
    }
    const int n = std::atoi(argv[1]);
    std::vector<std::string> steps;
    for (std::string rest = argc == 3 ? argv[2] : "none"; !rest.empty();) {
        const size_t comma = rest.find(',');
        steps.push_back(rest.substr(0, comma));
        rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
    }
    bool known = true;
    for (const std::string& step : steps)
        known = known && (step == "none" || step == "cublas" || step == "pinned" || step == "gemm" ||
                          step == "trsm" || step == "lu256" || step == "owngemm" ||
                          step == "bgcublas" || step == "cusolver");
    const bool cusolver = std::find(steps.begin(), steps.end(), "cusolver") != steps.end();
    if (!known || n < 1 || n > 16384 || (cusolver && steps.size() != 1)) {  // cusolver alone
        std::fprintf(stderr, usage, argv[0]);
        return 2;
    }
    const std::vector<float> a = random_matrix(n, false);

    const double start = now_ms();
    CHECK(cudaFree(nullptr));
    std::printf("n %d  context %.1f", n, now_ms() - start);
    for (const std::string& step : steps) {
        double ms = 0.0;
        if (step == "cublas") ms = load_cublas();
        else if (step == "pinned") ms = pin_host_memory();
        else if (step == "gemm") ms = first_blas_calls(true, false, nullptr);
        else if (step == "trsm") ms = first_blas_calls(false, true, nullptr);
        else if (step == "lu256") ms = first_small_lu();
        const bool timed_alone = step != "none" && step != "owngemm" && step != "bgcublas" &&
                                 step != "cusolver";
        if (timed_alone) std::printf("  %s %.1f", step.c_str(), ms);
    }
    if (cusolver) {
        const double first = cusolver_sgesv(n, a);
        const double second = cusolver_sgesv(n, a);
        std::printf("  cuSOLVER first getrf+getrs %.1f  second %.1f  (ms)\n", first, second);
        return 0;
    }
    tandem::Options options;
    bool beside = false;
    for (const std::string& step : steps) {
        if (step == "owngemm") options.gemm = tandem::GemmKernel::tandem;
        beside = beside || step == "bgcublas";
    }
    double beside_ms = 0.0;
    std::thread loader;
    if (beside) loader = std::thread(load_cublas_beside, &beside_ms);
    const double first = time_sgesv(n, a, options);
    const double second = time_sgesv(n, a, options);
    if (loader.joinable()) loader.join();
    const double third = time_sgesv(n, a, tandem::Options{});
    std::printf("  first sgesv %.1f  second %.1f  third (default options) %.1f", first, second, third);
    if (beside) std::printf("  cuBLAS loaded beside in %.1f", beside_ms);
    std::printf("  (ms)\n");
    return 0;
}
