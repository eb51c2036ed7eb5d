// OpenBLAS's thread count, held at one while code of ours runs its own
// OpenMP team that calls BLAS. Why: OpenBLAS's worker threads spin for about
// 0.1 s after each multithreaded call, and an OpenMP team started in that
// window competes with them for the cores (measured on the 16-core GPU
// machine: panels 5-20x slower).
#ifndef TANDEM_SCHEDULER_BLAS_THREADS_HPP
#define TANDEM_SCHEDULER_BLAS_THREADS_HPP

namespace tandem {

// OpenBLAS single-threaded while teams call it, restored when the last panel
// in flight ends (its thread count is global to the process, and panels may run
// concurrently, e.g. from threads of an enclosing parallel region).
// The scheduler holds it around a hybrid factorization; cpu/blas_threads.cpp
// implements it.
class SingleThreadedBlas {
public:
    SingleThreadedBlas();
    ~SingleThreadedBlas();
    SingleThreadedBlas(const SingleThreadedBlas&) = delete;
    SingleThreadedBlas& operator=(const SingleThreadedBlas&) = delete;
};

}  // namespace tandem

#endif
