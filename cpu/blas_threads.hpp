// OpenBLAS's thread count, held at one while code of ours runs its own
// OpenMP team that calls BLAS. Why: OpenBLAS's worker threads spin for about
// 0.1 s after each multithreaded call, and an OpenMP team started in that
// window competes with them for the cores (measured on the 16-core GPU
// machine: panels 5-20x slower).
#ifndef TANDEM_CPU_BLAS_THREADS_HPP
#define TANDEM_CPU_BLAS_THREADS_HPP

#include <mutex>

extern "C" {
int openblas_get_num_threads(void);
void openblas_set_num_threads(int);
}

namespace tandem {

// OpenBLAS single-threaded while teams call it, restored when the last panel
// in flight ends (its thread count is global to the process, and panels may run
// concurrently, e.g. from threads of an enclosing parallel region).
class SingleThreadedBlas {
public:
    SingleThreadedBlas() {
        const std::lock_guard<std::mutex> lock(mutex_);
        if (active_++ == 0) {
            saved_threads_ = openblas_get_num_threads();
            openblas_set_num_threads(1);
        }
    }
    ~SingleThreadedBlas() {
        const std::lock_guard<std::mutex> lock(mutex_);
        if (--active_ == 0) openblas_set_num_threads(saved_threads_);
    }
    SingleThreadedBlas(const SingleThreadedBlas&) = delete;
    SingleThreadedBlas& operator=(const SingleThreadedBlas&) = delete;

private:
    static inline std::mutex mutex_;
    static inline int active_ = 0;
    static inline int saved_threads_ = 1;
};

}  // namespace tandem

#endif
