// Waiting for another thread of this host without sleeping: a thread that
// sleeps and is woken again costs tens of microseconds on the GPU machines'
// hosts, as long as the work it waits for (a column of a CPU panel, a chunk of
// a copy through the pinned ring). Used by cpu/ and gpu/ alike.
#ifndef TANDEM_SCHEDULER_SPIN_WAIT_HPP
#define TANDEM_SCHEDULER_SPIN_WAIT_HPP

#include <thread>

namespace tandem {

// Pauses before yielding: usually the wait is shorter than a context switch.
constexpr int kSpinsBeforeYield = 4000;

// Returns once ready() holds: pauses first (they leave a hyperthread's core to
// its sibling), then yields the CPU, so that a team larger than the free cores
// still makes progress.
template <class Ready>
void spin_until(Ready&& ready) {
    for (int spins = 0; !ready(); ++spins) {
        if (spins < kSpinsBeforeYield) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        } else {
            std::this_thread::yield();
        }
    }
}

}  // namespace tandem

#endif  // TANDEM_SCHEDULER_SPIN_WAIT_HPP
