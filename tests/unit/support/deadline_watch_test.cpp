// Tests for src/support/deadline_watch.hpp: the HTTP client's bound on writing a request and
// reading its answer's head, and the HTTP server's on each request's read and each write, one lazily re-armed
// timer for many deadlines instead of Beast's timer per operation. An item whose deadline passes is expired
// (its socket closed), as Beast's expiry closed it; one stopped in time, or started again before its
// deadline, is not; a deadline longer than the watch's shortest limit holds until it passes, and a shorter
// one set after it is not missed. Short real limits: the watch reads the steady clock itself.
#include "support/deadline_watch.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <memory>

namespace {

using duet::support::deadline_watch;
using duet::support::watched_deadline;
using namespace std::chrono_literals;

struct item {
    watched_deadline deadline;
    int expiries = 0;
    void expire() { ++expiries; }
};

// Runs the io_context for `d` (the watch's timer fires inside).
void run_for(boost::asio::io_context& io, std::chrono::milliseconds d) {
    io.restart();
    io.run_for(d);
}

TEST(DeadlineWatch, ExpiresAnItemWhoseDeadlinePasses) {
    boost::asio::io_context io;
    deadline_watch<item> watch(io.get_executor(), 20ms);
    auto x = std::make_shared<item>();
    watch.start(x);
    run_for(io, 250ms);
    EXPECT_EQ(x->expiries, 1);
    EXPECT_TRUE(x->deadline.expired);
    EXPECT_EQ(x->deadline.at, watched_deadline::none);
}

TEST(DeadlineWatch, LeavesAnItemStoppedBeforeItsDeadline) {
    boost::asio::io_context io;
    deadline_watch<item> watch(io.get_executor(), 20ms);
    auto x = std::make_shared<item>();
    watch.start(x);
    deadline_watch<item>::stop(*x);
    run_for(io, 250ms);
    EXPECT_EQ(x->expiries, 0);
    EXPECT_FALSE(x->deadline.expired);
}

TEST(DeadlineWatch, AnItemStartedAgainGetsItsNewDeadline) {
    boost::asio::io_context io;
    deadline_watch<item> watch(io.get_executor(), 300ms);
    auto x = std::make_shared<item>();
    watch.start(x);
    run_for(io, 150ms);
    watch.start(x); // the timer still waits for the first deadline, which no longer holds
    run_for(io, 200ms);
    EXPECT_EQ(x->expiries, 0) << "expired at the first deadline after being started again";
    run_for(io, 400ms);
    EXPECT_EQ(x->expiries, 1);
}

TEST(DeadlineWatch, ExpiresOnlyTheItemsStillRunning) {
    boost::asio::io_context io;
    deadline_watch<item> watch(io.get_executor(), 20ms);
    auto running = std::make_shared<item>();
    auto done = std::make_shared<item>();
    auto gone = std::make_shared<item>();
    watch.start(running);
    watch.start(done);
    watch.start(gone);
    deadline_watch<item>::stop(*done);
    gone.reset(); // held weakly: an exchange that ended is simply dropped
    run_for(io, 250ms);
    EXPECT_EQ(running->expiries, 1);
    EXPECT_EQ(done->expiries, 0);
}

TEST(DeadlineWatch, WatchesAgainAfterAnExpiry) {
    boost::asio::io_context io;
    deadline_watch<item> watch(io.get_executor(), 20ms);
    auto x = std::make_shared<item>();
    watch.start(x);
    run_for(io, 250ms);
    ASSERT_EQ(x->expiries, 1);
    watch.start(x); // a kept-alive connection's next request
    EXPECT_FALSE(x->deadline.expired);
    run_for(io, 250ms);
    EXPECT_EQ(x->expiries, 2);
}

TEST(DeadlineWatch, ALongerLimitHoldsUntilItsOwnDeadline) {
    boost::asio::io_context io;
    deadline_watch<item> watch(io.get_executor(), 20ms);
    auto x = std::make_shared<item>();
    watch.start(x, 400ms); // the timer wakes every 20 ms meanwhile and finds the deadline ahead
    run_for(io, 200ms);
    EXPECT_EQ(x->expiries, 0) << "expired at the shortest limit, not its own";
    run_for(io, 600ms);
    EXPECT_EQ(x->expiries, 1);
}

// The server's pattern: a long wait for a request, then a short bound on writing the answer.
TEST(DeadlineWatch, AShortDeadlineAfterALongOneIsNotMissed) {
    boost::asio::io_context io;
    deadline_watch<item> watch(io.get_executor(), 20ms);
    auto x = std::make_shared<item>();
    watch.start(x, 10s);
    run_for(io, 5ms);
    deadline_watch<item>::stop(*x);
    watch.start(x);
    run_for(io, 250ms);
    EXPECT_EQ(x->expiries, 1) << "the short deadline waited for the long one";
}

// An item without a deadline when the timer looks is dropped, and the timer sleeps until the next start.
TEST(DeadlineWatch, AnItemStoppedLongAgoIsWatchedAgainWhenStarted) {
    boost::asio::io_context io;
    deadline_watch<item> watch(io.get_executor(), 20ms);
    auto x = std::make_shared<item>();
    watch.start(x);
    deadline_watch<item>::stop(*x);
    run_for(io, 100ms);
    EXPECT_FALSE(x->deadline.watched);
    watch.start(x);
    run_for(io, 250ms);
    EXPECT_EQ(x->expiries, 1);
}

TEST(DeadlineWatch, ADestroyedWatchExpiresNothing) {
    boost::asio::io_context io;
    auto x = std::make_shared<item>();
    {
        deadline_watch<item> watch(io.get_executor(), 20ms);
        watch.start(x);
    }
    run_for(io, 250ms);
    EXPECT_EQ(x->expiries, 0);
}

} // namespace
