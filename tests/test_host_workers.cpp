// HostWorker: a job on a lasting host thread (the feeders' and the
// collector's): join waits for it, a joined thread takes the next job, an idle
// one ends, jobs at once run on threads of their own, and a forked child makes
// threads of its own.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "scheduler/host_workers.hpp"

namespace tandem::test {
namespace {

TEST(HostWorker, JoinWaitsForTheJob) {
    std::atomic<bool> done{false};
    HostWorker worker([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        done = true;
    });
    EXPECT_TRUE(worker.joinable());
    worker.join();
    EXPECT_TRUE(done);
    EXPECT_FALSE(worker.joinable());
    worker.join();  // a second join does nothing
}

TEST(HostWorker, DestructorJoins) {
    std::atomic<int> runs{0};
    {
        HostWorker worker([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            ++runs;
        });
    }
    EXPECT_EQ(runs, 1);
}

// Set by a job, on its thread: a thread made anew (even one given the id of
// a thread that has ended) starts without it.
thread_local int marked_by_job = 0;

TEST(HostWorker, AJoinedThreadTakesTheNextJob) {
    std::thread::id first;
    int mark_seen = -1;
    HostWorker([&] {
        first = std::this_thread::get_id();
        marked_by_job = 42;
    }).join();
    HostWorker([&] { mark_seen = marked_by_job; }).join();
    EXPECT_NE(first, std::this_thread::get_id());
    EXPECT_EQ(mark_seen, 42);
}

TEST(HostWorker, AnIdleThreadEndsAfterItsIdleLife) {
    HostWorker::set_idle_life(std::chrono::milliseconds(20));
    HostWorker([] { marked_by_job = 7; }).join();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    int mark_seen = -1;
    HostWorker([&] { mark_seen = marked_by_job; }).join();
    // Threads taken and leaving at once: every job still runs.
    std::atomic<int> runs{0};
    for (int i = 0; i < 200; ++i) {
        HostWorker([&] { ++runs; }).join();
        if (i % 10 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    HostWorker::set_idle_life(HostWorker::kIdleLife);
    EXPECT_EQ(mark_seen, 0);
    EXPECT_EQ(runs, 200);
}

TEST(HostWorker, JobsAtOnceRunOnThreadsOfTheirOwn) {
    // Each job waits until all have started: on a shared thread they could not.
    constexpr int kJobs = 6;
    std::atomic<int> started{0};
    std::vector<std::atomic<bool>> met(kJobs);
    std::vector<HostWorker> workers;
    for (int i = 0; i < kJobs; ++i)
        workers.emplace_back([&, i] {
            ++started;
            const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            while (started < kJobs && std::chrono::steady_clock::now() < give_up)
                std::this_thread::yield();
            met[i] = started == kJobs;
        });
    for (HostWorker& w : workers) w.join();
    for (int i = 0; i < kJobs; ++i) EXPECT_TRUE(met[i]) << "job " << i;
}

TEST(HostWorker, MovedWorkerJoinsItsJob) {
    std::atomic<bool> done{false};
    HostWorker a([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        done = true;
    });
    HostWorker b(std::move(a));
    EXPECT_FALSE(a.joinable());
    EXPECT_TRUE(b.joinable());
    HostWorker c;
    c = std::move(b);
    c.join();
    EXPECT_TRUE(done);
}

TEST(HostWorker, AForkedChildRunsJobs) {
    HostWorker([] {}).join();  // an idle thread in the parent's pool
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        alarm(20);  // a child waiting on the parent's threads would hang: end it instead
        std::atomic<bool> done{false};
        HostWorker([&] { done = true; }).join();
        _exit(done ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status)) << "the child ended by signal " << WTERMSIG(status);
    EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace tandem::test
