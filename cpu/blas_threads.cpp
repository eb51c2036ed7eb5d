#include "scheduler/blas_threads.hpp"

#include <mutex>

extern "C" {
int openblas_get_num_threads(void);
void openblas_set_num_threads(int);
}

namespace tandem {
namespace {

std::mutex mutex;
int active = 0;         // SingleThreadedBlas objects alive (mutex)
int saved_threads = 1;  // OpenBLAS's count before the first of them (mutex)

}  // namespace

SingleThreadedBlas::SingleThreadedBlas() {
    const std::lock_guard<std::mutex> lock(mutex);
    if (active++ == 0) {
        saved_threads = openblas_get_num_threads();
        openblas_set_num_threads(1);
    }
}

SingleThreadedBlas::~SingleThreadedBlas() {
    const std::lock_guard<std::mutex> lock(mutex);
    if (--active == 0) openblas_set_num_threads(saved_threads);
}

}  // namespace tandem
