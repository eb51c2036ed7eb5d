// What the rest of tandem asks of the CPU, besides a panel (scheduler/cpu_panel.hpp):
// the CPU path, where LAPACK (OpenBLAS) answers a call on the host, column-major,
// with exactly LAPACK's results; and the host device, the device interface on
// host memory. cpu/ implements both (lapack_path.cpp, host_device.cpp).
#ifndef TANDEM_SCHEDULER_CPU_BACKEND_HPP
#define TANDEM_SCHEDULER_CPU_BACKEND_HPP

#include <cstdint>
#include <memory>

#include "scheduler/device.hpp"
#include "tandem/tandem.hpp"

namespace tandem {

// How many of OpenBLAS's threads a LAPACK solve gets: as the process has it
// configured (Backend::cpu: the caller's own LAPACK), or one for the small
// solves whose threads would be left spinning against the next call's (where
// tandem chose the CPU itself; cpu/lapack_path.cpp says which). The count is
// OpenBLAS's, for the whole process: a BLAS call of another thread during
// such a solve runs on one thread too.
enum class LapackThreads { as_configured, by_size };

// LAPACK sgetrf; returns info (>= 0: arguments are checked before).
int lapack_getrf(int m, int n, float* a, int lda, int* ipiv);

// LAPACK sgetrs with trans 'N' or 'T'.
void lapack_getrs(char trans, int n, int nrhs, const float* a, int lda, const int* ipiv,
                  float* b, int ldb, LapackThreads threads = LapackThreads::as_configured);

// LAPACK slaswp on the n x nrhs column-major B (ldb): the interchanges
// ipiv[0 .. n) in order (forward: P B) or in reverse (P^T B).
void lapack_laswp(int n, int nrhs, float* b, int ldb, const int* ipiv, bool forward);

// Name of the BLAS/LAPACK in use, e.g. "OpenBLAS 0.3.21 (16 threads)".
const char* lapack_name();

// The host device: the device interface on host memory with BLAS. It is the
// oracle for the CUDA device and lets the whole scheduler (look-ahead,
// transposed transfers, row swaps, inv(L11), several devices) run without a
// GPU. Every call runs to completion before it returns, so the queues are
// trivially ordered; events only record host timestamps. Updates of precision
// tf32 or bf16 round their operands to it and multiply in FP32 (the tensor
// cores' arithmetic); the others are FP32.
std::unique_ptr<Device> make_host_device(int index,
                                         UpdatePrecision update = UpdatePrecision::fp32);

}  // namespace tandem

#endif  // TANDEM_SCHEDULER_CPU_BACKEND_HPP
