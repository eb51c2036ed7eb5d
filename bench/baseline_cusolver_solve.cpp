// cuSOLVER's solves of A X = B for `tandem-bench solve`: getrf + getrs, and the
// iterative-refinement solvers cusolverDnS<t>gesv. Both time the library's
// calls with CUDA events on device-resident arrays; getrf + getrs also from
// the host's view with the copies, as tandem::sgesv is timed.
#include "bench/baselines.hpp"

#include <stdexcept>
#include <string>

#ifdef TANDEM_HAVE_CUDA
#include <algorithm>
#include <cstddef>

#include "bench/cuda_resources.hpp"
#include "bench/timing.hpp"
#endif

namespace tandem_bench {

const char* irs_function_name(IrsPrecision precision) {
    switch (precision) {
        case IrsPrecision::single: return "cusolverDnSSgesv";
        case IrsPrecision::tf32: return "cusolverDnSXgesv";
        case IrsPrecision::bfloat16: return "cusolverDnSBgesv";
        case IrsPrecision::half: return "cusolverDnSHgesv";
    }
    return "cusolverDnS?gesv";
}

#ifndef TANDEM_HAVE_CUDA

CusolverSolveTimes time_cusolver_sgesv(int, int, const float*, const float*, float*, int) {
    throw std::runtime_error("cuSOLVER: no GPU backend in this build");
}

IrsTimes time_cusolver_irs_sgesv(IrsPrecision, int, int, const float*, const float*, float*, int) {
    throw std::runtime_error("cuSOLVER: no GPU backend in this build");
}

#else

namespace {

// A, B, the pivots and an info word of one solve of order n with nrhs
// right-hand sides on CUDA device 0, with a stream and a cuSOLVER handle bound
// to it. Every copy and call goes to that stream, in order.
struct DeviceSolve {
    const std::size_t a_bytes;
    const std::size_t b_bytes;
    Stream stream;
    SolverHandle solver;
    DeviceMemory d_a;
    DeviceMemory d_b;
    DeviceMemory d_ipiv;
    DeviceMemory d_info;

    DeviceSolve(int order, int rhs)
        : a_bytes(static_cast<std::size_t>(order) * order * sizeof(float)),
          b_bytes(static_cast<std::size_t>(order) * rhs * sizeof(float)),
          d_a(a_bytes),
          d_b(b_bytes),
          d_ipiv(static_cast<std::size_t>(order) * sizeof(int)),
          d_info(sizeof(int)) {
        CHECK_CUSOLVER(cusolverDnSetStream(solver.handle, stream.handle));
    }

    // An asynchronous copy on the stream.
    void copy(void* to, const void* from, std::size_t bytes, cudaMemcpyKind kind) {
        CHECK_CUDA(cudaMemcpyAsync(to, from, bytes, kind, stream.handle));
    }

    void record(const Event& event) { CHECK_CUDA(cudaEventRecord(event.handle, stream.handle)); }

    void synchronize() { CHECK_CUDA(cudaStreamSynchronize(stream.handle)); }

    // Waits for the stream, then throws if `call` left a non-zero info in `d_info_word`.
    void check_info(const DeviceMemory& d_info_word, const char* call) {
        int info = -1;
        copy(&info, d_info_word.pointer(), sizeof(int), cudaMemcpyDeviceToHost);
        synchronize();
        if (info != 0) throw std::runtime_error(std::string(call) + " returned info = " + std::to_string(info));
    }
};

double elapsed_seconds(const Event& start, const Event& stop) {
    float ms = 0.0f;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start.handle, stop.handle));
    return 1e-3 * ms;
}

// The four IRS solvers share one signature, and so do their workspace queries.
struct IrsFunctions {
    decltype(&cusolverDnSSgesv_bufferSize) buffer_size;
    const char* buffer_size_name;
    decltype(&cusolverDnSSgesv) solve;
};

IrsFunctions irs_functions(IrsPrecision precision) {
    switch (precision) {
        case IrsPrecision::single:
            return {cusolverDnSSgesv_bufferSize, "cusolverDnSSgesv_bufferSize", cusolverDnSSgesv};
        case IrsPrecision::tf32:
            return {cusolverDnSXgesv_bufferSize, "cusolverDnSXgesv_bufferSize", cusolverDnSXgesv};
        case IrsPrecision::bfloat16:
            return {cusolverDnSBgesv_bufferSize, "cusolverDnSBgesv_bufferSize", cusolverDnSBgesv};
        case IrsPrecision::half:
            return {cusolverDnSHgesv_bufferSize, "cusolverDnSHgesv_bufferSize", cusolverDnSHgesv};
    }
    throw std::invalid_argument("irs_functions: unknown IrsPrecision");
}

}  // namespace

CusolverSolveTimes time_cusolver_sgesv(int n, int nrhs, const float* a, const float* b, float* x,
                                       int repeats) {
    // tandem's multi-GPU code may have left another device current on this thread.
    CHECK_CUDA(cudaSetDevice(0));
    DeviceSolve s(n, nrhs);
    // getrs's own info word, so that its failure is told apart from getrf's.
    DeviceMemory d_solve_info(sizeof(int));
    int work_floats = 0;
    CHECK_CUSOLVER(cusolverDnSgetrf_bufferSize(s.solver.handle, n, n, s.d_a.as<float>(), n, &work_floats));
    DeviceMemory d_work(static_cast<std::size_t>(std::max(work_floats, 1)) * sizeof(float));
    Event solve_start, solve_stop;

    CusolverSolveTimes times;
    warm_up_then_time(repeats, [&](bool timed) {
        const double start = wall_seconds();
        // Uploading the originals is also the restore between repeats; the
        // resident time starts after it.
        s.copy(s.d_a.pointer(), a, s.a_bytes, cudaMemcpyHostToDevice);
        s.copy(s.d_b.pointer(), b, s.b_bytes, cudaMemcpyHostToDevice);
        s.record(solve_start);
        CHECK_CUSOLVER(cusolverDnSgetrf(s.solver.handle, n, n, s.d_a.as<float>(), n, d_work.as<float>(),
                                        s.d_ipiv.as<int>(), s.d_info.as<int>()));
        CHECK_CUSOLVER(cusolverDnSgetrs(s.solver.handle, CUBLAS_OP_N, n, nrhs, s.d_a.as<float>(), n,
                                        s.d_ipiv.as<int>(), s.d_b.as<float>(), n, d_solve_info.as<int>()));
        s.record(solve_stop);
        s.copy(x, s.d_b.pointer(), s.b_bytes, cudaMemcpyDeviceToHost);
        s.synchronize();
        const double stop = wall_seconds();
        s.check_info(s.d_info, "cusolverDnSgetrf");
        s.check_info(d_solve_info, "cusolverDnSgetrs");
        if (timed) {
            times.solve_seconds.push_back(elapsed_seconds(solve_start, solve_stop));
            times.with_transfer_seconds.push_back(stop - start);
        }
    });
    return times;
}

IrsTimes time_cusolver_irs_sgesv(IrsPrecision precision, int n, int nrhs, const float* a,
                                 const float* b, float* x, int repeats) {
    CHECK_CUDA(cudaSetDevice(0));  // as in time_cusolver_sgesv
    DeviceSolve s(n, nrhs);
    // The originals stay on the device, so that restoring A and B before each
    // run is a device copy; X is an output of its own.
    DeviceMemory d_a_original(s.a_bytes), d_b_original(s.b_bytes), d_x(s.b_bytes);
    s.copy(d_a_original.pointer(), a, s.a_bytes, cudaMemcpyHostToDevice);
    s.copy(d_b_original.pointer(), b, s.b_bytes, cudaMemcpyHostToDevice);

    const IrsFunctions irs = irs_functions(precision);
    const char* const name = irs_function_name(precision);
    std::size_t work_bytes = 0;
    // The workspace query does not touch the workspace: none is passed.
    check_cusolver(irs.buffer_size(s.solver.handle, n, nrhs, s.d_a.as<float>(), n, s.d_ipiv.as<int>(),
                                   s.d_b.as<float>(), n, d_x.as<float>(), n, nullptr, &work_bytes),
                   irs.buffer_size_name);
    DeviceMemory d_work(std::max<std::size_t>(work_bytes, 1));
    Event solve_start, solve_stop;

    IrsTimes times;
    warm_up_then_time(repeats, [&](bool timed) {
        s.copy(s.d_a.pointer(), d_a_original.pointer(), s.a_bytes, cudaMemcpyDeviceToDevice);
        s.copy(s.d_b.pointer(), d_b_original.pointer(), s.b_bytes, cudaMemcpyDeviceToDevice);
        // iter is a host output; it is read only after the stream has finished.
        int iter = 0;
        s.record(solve_start);
        check_cusolver(irs.solve(s.solver.handle, n, nrhs, s.d_a.as<float>(), n, s.d_ipiv.as<int>(),
                                 s.d_b.as<float>(), n, d_x.as<float>(), n, d_work.pointer(), work_bytes,
                                 &iter, s.d_info.as<int>()),
                       name);
        s.record(solve_stop);
        s.check_info(s.d_info, name);
        if (timed) {
            times.seconds.push_back(elapsed_seconds(solve_start, solve_stop));
            times.iter = iter;
        }
    });
    s.copy(x, d_x.pointer(), s.b_bytes, cudaMemcpyDeviceToHost);
    s.synchronize();
    return times;
}

#endif  // TANDEM_HAVE_CUDA

}  // namespace tandem_bench
