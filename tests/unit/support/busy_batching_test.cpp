// src/support/busy_batching.hpp: the thread that serves a gateway's requests turns to Linux's batch class
// while many are in flight and back once few are, and a child it forks meanwhile starts in the normal class.
// Each test runs on a thread of its own, so the class it changes is never the test runner's.
#include "support/batch_class.hpp"
#include "support/busy_batching.hpp"

#include <gtest/gtest.h>

#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <optional>
#include <thread>
#include <vector>

namespace {

using duet::support::busy_batching_hold;
using duet::support::busy_enter_at;
using duet::support::busy_leave_at;
using duet::support::hold_busy_thread;
using duet::support::thread_batched_for_load;

void on_own_thread(std::function<void()> const& body) {
    std::thread t(body);
    t.join();
}

int own_class() {
    return ::sched_getscheduler(0);
}

TEST(BusyBatching, ThreadTurnsBatchAtEightInFlightAndBackAtTwo) {
    DUET_SKIP_WITHOUT_BATCH_CLASS();
    on_own_thread([] {
        std::vector<busy_batching_hold> holds;
        for (std::size_t i = 1; i < busy_enter_at; ++i) {
            holds.push_back(hold_busy_thread());
            EXPECT_EQ(own_class(), SCHED_OTHER) << i << " in flight";
        }
        holds.push_back(hold_busy_thread());
        EXPECT_EQ(own_class(), SCHED_BATCH);
        EXPECT_TRUE(thread_batched_for_load());

        for (std::size_t i = 0; i < 20; ++i) // more in flight: no change
            holds.push_back(hold_busy_thread());
        EXPECT_EQ(own_class(), SCHED_BATCH);

        while (holds.size() > busy_leave_at + 1)
            holds.pop_back();
        EXPECT_EQ(own_class(), SCHED_BATCH) << "still " << holds.size() << " in flight";
        holds.pop_back();
        EXPECT_EQ(own_class(), SCHED_OTHER);
        EXPECT_FALSE(thread_batched_for_load());

        // Busy again: batch again.
        while (holds.size() < busy_enter_at)
            holds.push_back(hold_busy_thread());
        EXPECT_EQ(own_class(), SCHED_BATCH);
        holds.clear();
        EXPECT_EQ(own_class(), SCHED_OTHER);
    });
}

TEST(BusyBatching, FewRequestsInFlightNeverChangeTheClass) {
    DUET_SKIP_WITHOUT_BATCH_CLASS();
    on_own_thread([] {
        for (int round = 0; round < 100; ++round) {
            std::vector<busy_batching_hold> holds;
            for (std::size_t i = 1; i < busy_enter_at; ++i)
                holds.push_back(hold_busy_thread());
            EXPECT_EQ(own_class(), SCHED_OTHER);
        }
        EXPECT_FALSE(thread_batched_for_load());
    });
}

TEST(BusyBatching, HoldEndedOnAnotherThreadCountsForTheThreadItBeganOn) {
    DUET_SKIP_WITHOUT_BATCH_CLASS();
    std::vector<busy_batching_hold> holds;
    pid_t tid = 0;
    on_own_thread([&] {
        tid = static_cast<pid_t>(::syscall(SYS_gettid));
        for (std::size_t i = 0; i < busy_enter_at; ++i)
            holds.push_back(hold_busy_thread());
        EXPECT_EQ(own_class(), SCHED_BATCH);
        // Ended elsewhere while this thread still runs: its class goes back.
        std::thread([&] { holds.clear(); }).join();
        EXPECT_EQ(own_class(), SCHED_OTHER);
        EXPECT_FALSE(thread_batched_for_load());
        // And this thread's own count is back at zero: seven more are not enough.
        for (std::size_t i = 1; i < busy_enter_at; ++i)
            holds.push_back(hold_busy_thread());
        EXPECT_EQ(own_class(), SCHED_OTHER);
        holds.clear();
    });
    EXPECT_NE(tid, 0);
}

TEST(BusyBatching, ThreadOfAnotherClassIsLeftAlone) {
    DUET_SKIP_WITHOUT_BATCH_CLASS();
    on_own_thread([] {
        sched_param p{};
        ASSERT_EQ(::sched_setscheduler(0, SCHED_IDLE, &p), 0);
        std::vector<busy_batching_hold> holds;
        for (std::size_t i = 0; i < 2 * busy_enter_at; ++i)
            holds.push_back(hold_busy_thread());
        EXPECT_EQ(own_class(), SCHED_IDLE);
        EXPECT_FALSE(thread_batched_for_load());
        holds.clear();
        EXPECT_EQ(own_class(), SCHED_IDLE); // the user's choice, kept
    });
}

// The class a child forked now runs in, with or without restore_scheduling_in_child().
int child_class(bool restore) {
    pid_t const pid = ::fork();
    if (pid == 0) {
        if (restore)
            duet::support::restore_scheduling_in_child();
        ::_exit(::sched_getscheduler(0));
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(BusyBatching, ChildForkedWhileBusyStartsInTheNormalClass) {
    DUET_SKIP_WITHOUT_BATCH_CLASS();
    on_own_thread([] {
        std::vector<busy_batching_hold> holds;
        for (std::size_t i = 0; i < busy_enter_at; ++i)
            holds.push_back(hold_busy_thread());
        ASSERT_EQ(own_class(), SCHED_BATCH);
        EXPECT_EQ(child_class(false), SCHED_BATCH) << "fork inherits the class: the reset is needed";
        EXPECT_EQ(child_class(true), SCHED_OTHER);
    });
}

TEST(BusyBatching, ChildOfAThreadTheUserBatchedKeepsTheUsersClass) {
    DUET_SKIP_WITHOUT_BATCH_CLASS();
    on_own_thread([] {
        sched_param p{};
        ASSERT_EQ(::sched_setscheduler(0, SCHED_BATCH, &p), 0);
        std::vector<busy_batching_hold> holds;
        for (std::size_t i = 0; i < busy_enter_at; ++i)
            holds.push_back(hold_busy_thread());
        EXPECT_EQ(child_class(true), SCHED_BATCH);
    });
}

} // namespace
