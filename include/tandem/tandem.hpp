// tandem: dense LU factorization with partial pivoting in single precision,
// with the CPU and NVIDIA GPUs working together (Volkov & Demmel's hybrid LU).
//
// The calls follow LAPACK's SGETRF / SGETRS / SGESV:
//   * matrices are column-major unless Options::layout says row-major;
//   * ipiv is 1-based: row i was interchanged with row ipiv[i-1];
//   * the return value is LAPACK's INFO:
//       0       success,
//      -i       argument i (counting from 1 in the C++ signature; the Options
//               argument counts too) is invalid; the caller's arrays are untouched,
//       i > 0   U(i,i) is exactly zero; the factorization was completed, as LAPACK
//               does, and sgesv leaves B untouched.
// Run-time failures (a GPU asked for but absent, a CUDA or LAPACK call failing,
// memory exhausted) throw tandem::Error, whose code() is one of the
// TANDEM_ERROR_* values of tandem.h and whose what() names the failing call.
// The caller's arrays are then untouched, with two exceptions named in the
// error's text: on GPUs the factors are copied into A while the steps run
// (Options::stream_matrix), so a failure during the factorization may leave A
// partially overwritten; and when sgesv's factorization succeeded and its solve
// then fails on a device, A and ipiv hold the LU factors and B may be
// partially overwritten.
#ifndef TANDEM_TANDEM_HPP
#define TANDEM_TANDEM_HPP

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "tandem/tandem.h"

namespace tandem {

enum class Layout : int { row_major = TANDEM_ROW_MAJOR, col_major = TANDEM_COL_MAJOR };

// Where the factorization runs.
//   automatic: the GPU when one is present and the backend was compiled, except for
//              matrices below the size where LAPACK's and the GPU's calls measured as
//              fast on this machine (Report::message says); else the CPU. The
//              environment variable TANDEM_BACKEND (auto, cpu, gpu, host, host:N; any
//              case) overrides it.
//   cpu:       LAPACK (OpenBLAS) on the host, exactly LAPACK's results.
//   gpu:       the hybrid CPU + GPU algorithm; an error if no GPU can be used.
//   host:      the hybrid algorithm with emulated devices in host memory: the
//              scheduler's own code path without a GPU (for tests and debugging).
enum class Backend { automatic, cpu, gpu, host };

// How the CPU factors a panel of the hybrid algorithm.
//   automatic: recursive.
//   lapack:    LAPACK's sgetrf (OpenBLAS), Volkov & Demmel's CPU panel.
//   recursive: tandem's recursive LU with a cache-resident OpenMP base case
//              (same pivots as LAPACK on matrices without ties, 2-5x faster
//              on tall panels; see docs/PERFORMANCE.md).
enum class PanelMethod { automatic, lapack, recursive };

// Which SGEMM the GPU's trailing updates use.
//   automatic: per shape bucket, whichever the tuning table says is faster
//              (tandem's kernels, cuBLASLt or cuBLAS).
//   tandem:    tandem's own kernels everywhere.
//   cublas:    cuBLAS everywhere.
enum class GemmKernel { automatic, tandem, cublas };

// Where the hybrid algorithm factors each panel.
//   automatic: per step, from the performance model measured on this machine
//              (calibrated at first use and cached under cache_dir; see
//              docs/ALGORITHM.md): tall panels on the GPU when the CPU would
//              make it wait, short ones on the CPU.
//   cpu:       every panel on the CPU (Volkov & Demmel's design).
//   device:    every panel on the device owning its columns (with the
//              DevicePanelMethod on a GPU; LAPACK on an emulated host device).
// While a plan with CPU panels runs (and during the first call's
// calibration), OpenBLAS's thread count, which is process-wide, is held at 1:
// the panels' own OpenMP team would otherwise compete with OpenBLAS's spinning
// threads. BLAS calls that other threads of the application make meanwhile
// run single-threaded; the count is given back when the last such call ends.
// A plan of device panels alone leaves it as it is.
enum class PanelPlacement { automatic, cpu, device };

// How a GPU factors the panels the plan gives it (and sgetrf_gpu a matrix it
// factors in one piece).
//   automatic: the same as recursive (on the H200 it measured faster than
//              cuSOLVER's getrf on every panel shape tried, 1.04-1.36x),
//              except for a panel factored beside a tensor-core update
//              (update_precision other than fp32, lookahead 1, a GPU of more
//              than 96 SMs), which leaves it SMs of its own: 48 for a panel
//              of up to 16384 rows, whose leaves then take clusters of at
//              most 8 blocks, 32 for a taller one, whose leaves would take
//              at most 4 and do not reach it: cuSOLVER's getrf factors it.
//   recursive: tandem's recursive panel (TRSM and GEMM between leaves of up
//              to 32 columns, each factored in registers by one thread block,
//              or by a thread block cluster beyond 2048 rows) up to 65536
//              rows; cuSOLVER's getrf beyond. Panels of tandem's row-major
//              copy wider than 128 columns are transposed and back.
//   cusolver:  cuSOLVER's getrf everywhere (on tandem's row-major storage the
//              panel is transposed and back).
enum class DevicePanelMethod { automatic, recursive, cusolver };

// The arithmetic of a GPU's trailing updates (A22 -= L21 U12, the O(n^3) part).
//   fp32:   SGEMM (the default).
//   tf32x3: each operand split into a TF32 high part and a TF32 low part
//           (a = hi + lo) and the product taken as hi*hi + hi*lo + lo*hi on
//           the tensor cores, accumulated in FP32: about 22 of FP32's 24
//           significant bits per product, at a higher rate. The accuracy and the
//           speed measured against fp32 are in docs/PERFORMANCE.md. Panels,
//           U12 and solves stay FP32, and so does a plan that factors the whole
//           matrix as one device panel (the automatic plan up to n of about
//           4096, from host memory up to about 8192: docs/ALGORITHM.md). An entry whose TF32 rounding would overflow is truncated
//           instead; low parts below FP32's normal range (|a| < about 2^-115)
//           count as zero, as the tensor cores take them.
//   tf32:   one TF32 tensor-core product (operands rounded to 10 fraction
//           bits, FP32 accumulation): factors accurate to about 1e-3
//           relative, for sgesv_refined, whose refinement restores FP32
//           quality. The panels stay FP32, as with tf32x3.
//   bf16:   the same with operands rounded to BF16 (7 fraction bits).
// Emulated host devices round the operands to TF32 or BF16 and multiply in
// FP32, so that the tests see the same precision; tf32x3 computes in FP32 there.
enum class UpdatePrecision { fp32, tf32x3, tf32, bf16 };

struct Options {
    // --- what most calls set -------------------------------------------------
    Layout layout = Layout::col_major;
    // automatic: the GPU when one is usable (LAPACK on the CPU below the
    // measured crossover size), else the CPU; TANDEM_BACKEND overrides it.
    Backend backend = Backend::automatic;
    // GPUs (backend gpu) or emulated devices (backend host); 0 = all visible GPUs, or 1 host device.
    int num_devices = 0;
    // Panel width nb of the hybrid algorithm; 0 = chosen automatically.
    int block_size = 0;
    // When the matrix does not fit in GPU memory under backend automatic, fall
    // back to the CPU path (true) or report TANDEM_ERROR_OUT_OF_MEMORY (false).
    bool allow_cpu_fallback = true;
    // Directory of the per-machine tuning cache; empty = $XDG_CACHE_HOME/tandem
    // or ~/.cache/tandem, or $TMPDIR/tandem-cache-<uid> when that cannot be written.
    std::string cache_dir;

    // --- expert knobs: the defaults are measured to be the fastest ------------
    // Where panels are factored, and how (see the enums above).
    PanelPlacement placement = PanelPlacement::automatic;
    PanelMethod panel = PanelMethod::automatic;
    DevicePanelMethod device_panel = DevicePanelMethod::automatic;
    // Which SGEMM the GPU's updates use (fp32 updates only: tf32x3's product is
    // cuBLAS's TF32 GEMM), and in what arithmetic.
    GemmKernel gemm = GemmKernel::automatic;
    UpdatePrecision update_precision = UpdatePrecision::fp32;
    // The widest step an automatic plan may choose (block_size 0); 0 = the
    // planner's own limit (1024). A plan of one device panel over the whole
    // matrix is not capped by it. Device workspaces grow with it.
    int max_block_size = 0;
    // Look-ahead depth: 0 = none, 1 = the next panel's columns are updated and
    // its factorization started before the rest of the trailing update.
    int lookahead = 1;
    // U12 = inv(L11) * A12 by GEMM when ||inv(L11)||_1 <= this, else by TRSM.
    // 0 forces TRSM on every step. Why 1000: see docs/ALGORITHM.md.
    float inverse_threshold = 1000.0f;
    // Several GPUs: a panel factored on one GPU goes straight to the others over
    // their peer link (NVLink or PCIe) where the GPUs allow it. false: through
    // host memory, as CPU-factored panels always do.
    bool peer_copies = true;
    // Move the matrix to the devices and the factors back while the steps run:
    // rows of the factors are copied out as soon as they are final, and with
    // one device whose plan has no CPU panels columns are uploaded as they are
    // needed (one device with CPU panels: all before the first step; several
    // devices: all from the start, each block joining the steps once it has
    // arrived). false: the whole matrix up front and back at the end. A
    // run-time failure may then leave A partially overwritten, which the
    // error's text says. A block that joins late is brought up to date in one
    // product, which rounds differently from the steps' updates, and when it
    // joins depends on the copies' speed: on a GPU the factors' last bits (and
    // rarely a pivot among near-equal candidates) may then differ from call to
    // call. false: no block joins late.
    bool stream_matrix = true;
};

// One interval of the factorization's timeline, in seconds from the call's start.
struct TimelineSpan {
    // "cpu" (CPU panels), "host" (the host's side of the matrix's copies and its
    // waits for the devices), and with several devices the host threads of their
    // own: "distribute" (the upload threads, one span from start to the last
    // block) and "gather" (the thread that copies the factors into A);
    // "<device> compute", "<device> transfer", "<device> copy"
    std::string lane;
    std::string phase;  // "panel", "upload", "swap", "u12", "lookahead", "update", "download",
                        // "distribute", "gather", "catch up", "wait", "setup" (the call
                        // before the devices' set-up), "allocate", "finish" (the last copies), ...
    int step = 0;       // panel index
    double start = 0.0;
    double end = 0.0;
    // A CPU panel's span ("cpu", "panel") with tandem's recursive panel: its
    // team's threads, the factorization's own seconds (inv(L11) left out), the
    // least CPU time one of the threads had in them, and the team's
    // involuntary context switches there. A thread that lost its core to
    // another shows less CPU time than the factorization's seconds. 0 elsewhere.
    int team_threads = 0;
    double team_seconds = 0.0;
    double least_thread_cpu_seconds = 0.0;
    long involuntary_switches = 0;
    // A CPU panel's span: the panel's rows and columns. 0 elsewhere.
    int64_t panel_rows = 0;
    int panel_columns = 0;
};

// What a call did; every field is filled by every call that gets this far.
struct Report {
    int info = 0;
    Backend backend = Backend::cpu;  // the backend that ran (never automatic)
    std::string device;              // e.g. "OpenBLAS (LAPACK)", "NVIDIA H200", "host x2"
    // One line: why this backend (the automatic choice, TANDEM_BACKEND), why a
    // fallback happened or the error text, and whether the call calibrated the
    // machine's performance model (seconds, at a machine's first GPU call).
    std::string message;
    double seconds = 0.0;            // wall-clock time of the call
    double gflops = 0.0;             // useful flops / seconds (2/3 n^3 convention for square)
    int block_size = 0;              // panel width used (hybrid)
    int steps = 0;                   // panels factored
    int inverse_steps = 0;           // steps whose U12 used inv(L11) * A12
    int trsm_steps = 0;              // steps whose U12 used TRSM
    int device_panel_steps = 0;      // panels factored on a device (the rest on the CPU)
    double panel_seconds = 0.0;      // CPU time spent factoring panels
    double panel_hidden_seconds = 0.0;  // part of it overlapped by device work
    std::vector<TimelineSpan> timeline;  // per-step phases (hybrid backends)
    std::string plan;                    // panel widths and sites (hybrid), the model's origin (gpu)
    // The measured model's time for the plan's steps (or its one device panel),
    // without the matrix's transfers to and from host memory and the call's
    // set-up: what `plan` says it predicts. 0 where no model planned the call
    // (backend cpu or host, a plan fixed by Options, the CPU below the crossover).
    double predicted_seconds = 0.0;
};

class Error : public std::runtime_error {
public:
    Error(int code, const std::string& what) : std::runtime_error(what), code_(code) {}
    int code() const noexcept { return code_; }

private:
    int code_;
};

// P * A = L * U of the m x n matrix A (lda >= max(1, rows of the layout's leading dimension)).
int sgetrf(int m, int n, float* a, int lda, int* ipiv, const Options& options = {},
           Report* report = nullptr);

// P * A = L * U of an m x n column-major matrix A that is already in GPU memory
// (device or managed memory, ldda >= max(1, m)), as MAGMA's magma_sgetrf_gpu:
// the factors overwrite A where it is, and ipiv is host memory. It runs on the
// GPU that holds A, with the CPU factoring the panels that the plan gives it;
// A itself never crosses to the host. tandem keeps its own row-major copy
// there, so the GPU needs room for a second m x n matrix. Options::layout must
// be col_major and Options::num_devices 0 or 1 (else info = -6); stream_matrix
// and allow_cpu_fallback do not apply. A pointer the GPU cannot address gives
// info = -3. With backend host (the emulated devices of the tests) "GPU
// memory" is host memory. backend cpu, or no usable GPU, throws
// TANDEM_ERROR_BACKEND_UNAVAILABLE. A run-time failure leaves A untouched
// unless the error's text says it was being overwritten.
int sgetrf_gpu(int m, int n, float* d_a, int ldda, int* ipiv, const Options& options = {},
               Report* report = nullptr);

// op(A) * X = B with the factors of sgetrf_gpu: d_a and d_b (n x nrhs,
// overwritten with X) column-major in the memory of one GPU, ipiv in host
// memory (the row interchanges and two cuBLAS triangular solves on that GPU).
// The same Options rules and memory checks as sgetrf_gpu (info -4 for d_a, -7
// for d_b, -9 for the options).
int sgetrs_gpu(char trans, int n, int nrhs, const float* d_a, int ldda, const int* ipiv,
               float* d_b, int lddb, const Options& options = {}, Report* report = nullptr);

// A * X = B in GPU memory: sgetrf_gpu, then (if info == 0) sgetrs_gpu.
int sgesv_gpu(int n, int nrhs, float* d_a, int ldda, int* ipiv, float* d_b, int lddb,
              const Options& options = {}, Report* report = nullptr);

// op(A) * X = B with the factors of sgetrf; trans is 'N', 'T' or 'C' (either case).
int sgetrs(char trans, int n, int nrhs, const float* a, int lda, const int* ipiv, float* b,
           int ldb, const Options& options = {}, Report* report = nullptr);

// A * X = B: sgetrf, then (if info == 0) sgetrs. On a GPU, A and B each cross the bus once each way.
int sgesv(int n, int nrhs, float* a, int lda, int* ipiv, float* b, int ldb,
          const Options& options = {}, Report* report = nullptr);

// A X = B by an LU factorization whose trailing updates run on the tensor
// cores, refined to FP32 quality: LAPACK's DSGESV one level down. The updates
// are tf32x3 by default; Options::update_precision tf32 or bf16 asks for a
// faster, rougher factorization (about 1e-3 relative), which refines in a
// few corrections on matrices such as randsvd but needs tens of GMRES steps,
// or falls back, on large random dense ones (docs/PERFORMANCE.md has both).
// The panels are FP32. X is then corrected with residuals B - A X
// accumulated in double until every column passes
// ||b_j - A x_j||_inf <= 2^-23 ||A||_inf ||x_j||_inf (stricter than an FP32
// LU solve's own backward error on random matrices from n of about 100 on:
// see docs/ALGORITHM.md), classically while each correction at least halves
// the residual and then by GMRES preconditioned with the factors (GMRES-IR).
// X (x, ldx) is separate from B, which is never written. iter:
//    >= 0  refinement succeeded after iter corrections: A is unchanged and ipiv
//          holds the lower-precision factorization's pivots;
//    < 0   tandem's FP32 sgesv answered instead: A and ipiv hold its LU
//          factors, info is its info, and iter says why:
//          -1 the automatic backend gives this matrix to the CPU's LAPACK, or
//             backend cpu, or the device has no memory for the refinement's
//             two n x n arrays;
//          -2 A holds Inf or NaN, or X or its residual became so (B did);
//          -3 the lower-precision factorization met an exactly zero pivot;
//          -4 refinement stalled: neither a classical nor a GMRES correction
//             halved the residual (A too ill-conditioned for the factors);
//          -31 the test still failed after 30 corrections.
// The device holds A and its lower-precision factors (two n x n arrays; one
// for sgesv_refined_gpu, whose A is there already) besides what sgetrf_gpu
// needs. The planner's model is measured per update
// precision: the first call on a machine calibrates the tf32x3 one and caches
// it, as the first sgetrf does its own (2.8 s on an H100). A run-time
// failure (tandem::Error) leaves X untouched; A too, unless the fallback's
// factorization was writing it, which the error's text then says. Arguments count as in the signature
// (x 8, ldx 9, iter 10, options 11); x must not be b.
int sgesv_refined(int n, int nrhs, float* a, int lda, int* ipiv, const float* b, int ldb,
                  float* x, int ldx, int* iter, const Options& options = {},
                  Report* report = nullptr);

// sgesv_refined with A, B and X in the memory of one GPU (column-major; as
// sgesv_gpu's rules); ipiv and iter in host memory. The refinement's vectors
// cross to the host (n x nrhs per correction); A never does.
int sgesv_refined_gpu(int n, int nrhs, float* d_a, int ldda, int* ipiv, const float* d_b,
                      int lddb, float* d_x, int lddx, int* iter, const Options& options = {},
                      Report* report = nullptr);

// What sgetrf(m, n, ..., options) would do, as text: the backend and devices
// and, for the hybrid backends, each step's panel width and where the panel is
// factored (on a GPU from this machine's performance model, which is measured
// now, within about 3 s, if none is cached yet). Throws tandem::Error like sgetrf.
std::string describe_plan(int m, int n, const Options& options = {});

// Whether the GPU backend was compiled in and at least one CUDA device is usable.
bool gpu_available();
// Number of usable CUDA devices (0 when the GPU backend is not compiled in).
int gpu_count();
// tandem keeps each GPU's streams, cuBLAS handles, pinned host buffers and
// device memory between calls (so that small solves pay no set-up). This frees
// them; the next GPU call sets them up again. Not to be called while another
// thread is inside a tandem call. An application that calls cudaDeviceReset()
// calls this right after it, before it allocates device memory again and
// before its next tandem call: tandem's streams, handles and buffers belonged
// to the context the reset destroyed, which tandem recognises by an address
// of its own that a new allocation could take.
void release_resources();
// The backend `automatic` resolves to right now (honours TANDEM_BACKEND).
Backend resolve_backend(const Options& options);
const char* backend_name(Backend backend);
// "fp32", "tf32x3", "tf32" or "bf16".
const char* update_precision_name(UpdatePrecision precision);

}  // namespace tandem

#endif  // TANDEM_TANDEM_HPP
