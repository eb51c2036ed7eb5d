#include "scheduler/host_workers.hpp"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace tandem {

struct HostWorker::Thread {
    std::mutex mutex;
    std::condition_variable changed;
    std::function<void()> job;  // guarded by mutex: the next job, until the thread takes it
    bool busy = false;          // guarded by mutex: a job given and not finished
};

namespace {

// How long an idle thread waits for its next job before it ends, and its
// OpenMP team with it: long enough to span a benchmark's calls and what
// it does between them, short enough that a team spinning under
// OMP_WAIT_POLICY=active stops soon after the last call.
std::atomic<std::chrono::milliseconds::rep> idle_life_ms{HostWorker::kIdleLife.count()};

// Once the process has begun to exit, idle threads no longer end: their
// teardown (the OpenMP team's, the CUDA runtime's) would run beside those
// libraries' own.
std::atomic<bool> exiting{false};

// The idle threads. Never destroyed: a thread may still be waiting on it when
// the process ends. A forked child has none of the parent's threads: it
// starts a pool of its own (the parent's, and whatever state its mutex was
// in, are left behind).
struct Pool {
    std::mutex mutex;
    std::vector<HostWorker::Thread*> idle;
};

Pool* current_pool = nullptr;
std::once_flag pool_made;

Pool& pool() {
    std::call_once(pool_made, [] {
        current_pool = new Pool;
        if (pthread_atfork(nullptr, nullptr, [] { current_pool = new Pool; }) != 0 ||
            std::atexit([] { exiting = true; }) != 0)
            throw std::system_error(ENOMEM, std::generic_category(),
                                    "HostWorker: the pool's fork and exit handlers");
    });
    return *current_pool;
}

// Whether idle thread t left the pool, to end: false when a HostWorker has
// just taken it for a job.
bool leave_pool(Pool& p, HostWorker::Thread* t) {
    std::lock_guard<std::mutex> lock(p.mutex);
    if (exiting) return false;
    const auto it = std::find(p.idle.begin(), p.idle.end(), t);
    if (it == p.idle.end()) return false;
    p.idle.erase(it);
    return true;
}

void serve(Pool* p, HostWorker::Thread* t) {
    std::unique_lock<std::mutex> lock(t->mutex);
    for (;;) {
        const std::chrono::milliseconds idle_life(idle_life_ms.load());
        if (!t->changed.wait_for(lock, idle_life, [&] { return t->job != nullptr; })) {
            lock.unlock();
            if (leave_pool(*p, t)) {
                delete t;
                return;
            }
            // Taken meanwhile (its job is on the way), not yet back from its
            // last job (its owner has not joined), or the process is exiting.
            lock.lock();
            continue;
        }
        std::function<void()> job = std::move(t->job);
        t->job = nullptr;
        lock.unlock();
        job();
        job = nullptr;  // its captures go before join() returns
        lock.lock();
        t->busy = false;
        t->changed.notify_all();
    }
}

}  // namespace

HostWorker::HostWorker(std::function<void()> job) {
    Pool& p = pool();
    Thread* t = nullptr;
    {
        std::lock_guard<std::mutex> lock(p.mutex);
        if (!p.idle.empty()) {
            t = p.idle.back();  // the most recently used: its team is the likeliest awake
            p.idle.pop_back();
        }
    }
    if (t == nullptr) {
        t = new Thread;
        try {
            std::thread(serve, &p, t).detach();
        } catch (...) {
            delete t;
            throw;
        }
    }
    {
        std::lock_guard<std::mutex> lock(t->mutex);
        t->job = std::move(job);
        t->busy = true;
    }
    t->changed.notify_all();
    thread_ = t;
}

void HostWorker::set_idle_life(std::chrono::milliseconds life) {
    idle_life_ms = std::max<std::chrono::milliseconds::rep>(life.count(), 1);
}

HostWorker::HostWorker(HostWorker&& other) noexcept
    : thread_(std::exchange(other.thread_, nullptr)) {}

HostWorker& HostWorker::operator=(HostWorker&& other) noexcept {
    if (this != &other) {
        join();
        thread_ = std::exchange(other.thread_, nullptr);
    }
    return *this;
}

HostWorker::~HostWorker() { join(); }

void HostWorker::join() {
    Thread* t = std::exchange(thread_, nullptr);
    if (t == nullptr) return;
    {
        std::unique_lock<std::mutex> lock(t->mutex);
        t->changed.wait(lock, [&] { return !t->busy; });
    }
    Pool& p = pool();
    std::lock_guard<std::mutex> lock(p.mutex);
    p.idle.push_back(t);
}

}  // namespace tandem
