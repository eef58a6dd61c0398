// A session stream's event log against the interface (store/event_log.hpp), for every store kind: the bounded
// replay window, the final event, one reader at a time with take-over by a resumption, the handler's close
// request.
#include "store_kinds.hpp"

#include <gtest/gtest.h>

#include <string>

namespace duet::store::checks {
namespace {

template<class Kind>
class EventLog : public ::testing::Test {
protected:
    // A POST stream of a fresh session whose streams keep `replay` events.
    std::shared_ptr<event_log> make_log(std::size_t replay = 8) {
        store_ = Kind::make({.replay_events = replay});
        session_ = store_->create(nullptr);
        return session_->open_stream();
    }

private:
    std::shared_ptr<session_store> store_;
    std::shared_ptr<session> session_;
};
TYPED_TEST_SUITE(EventLog, store_kinds);

TYPED_TEST(EventLog, KeepsTheNewestEventsWithinItsWindow) {
    auto const log = this->make_log(2);
    log->publish("a");
    log->publish("b");
    log->publish("c");
    EXPECT_EQ(log->last_seq(), 3u);
    EXPECT_EQ(seqs(log->events_after(0)), (std::vector<std::uint64_t>{2, 3}));
    EXPECT_EQ(seqs(log->events_after(2)), (std::vector<std::uint64_t>{3}));
    EXPECT_TRUE(log->events_after(3).empty());
}

TYPED_TEST(EventLog, NothingIsPublishedAfterTheLastEvent) {
    auto const log = this->make_log();
    log->publish("progress");
    log->complete(std::string("response"));
    log->publish("late");
    log->complete(std::string("again"));
    EXPECT_TRUE(log->is_complete());
    auto const events = log->events_after(0);
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events.front().data, "progress");
    EXPECT_EQ(events.back().data, "response");
}

TYPED_TEST(EventLog, CompletingWithoutAnAnswerAddsNoEvent) {
    auto const log = this->make_log();
    log->publish("progress");
    log->complete(std::nullopt);
    EXPECT_TRUE(log->is_complete());
    EXPECT_EQ(log->last_seq(), 1u);
}

TYPED_TEST(EventLog, TakenEventsAreNotReplayedButTheSequenceStays) {
    auto const log = this->make_log();
    log->complete(std::string("response"));
    auto const taken = log->take_events();
    ASSERT_EQ(taken.size(), 1u);
    EXPECT_EQ(taken.front().data, "response");
    EXPECT_TRUE(log->events_after(0).empty());
    EXPECT_EQ(log->last_seq(), 1u);
}

TYPED_TEST(EventLog, OneReaderAtATimeUnlessAResumptionTakesOver) {
    auto const log = this->make_log();
    int first_woken = 0;
    auto const first = log->attach([&] { ++first_woken; }, false);
    ASSERT_NE(first, 0u);
    EXPECT_EQ(log->attach([] {}, false), 0u);
    log->publish("x");
    EXPECT_EQ(first_woken, 1);
    auto const second = log->attach([] {}, true);
    EXPECT_NE(second, 0u);
    EXPECT_EQ(first_woken, 2) << "the superseded reader is woken to find itself detached";
    EXPECT_FALSE(log->attached(first));
    EXPECT_TRUE(log->attached(second));
    log->detach(first); // a stale token changes nothing
    EXPECT_TRUE(log->has_reader());
    log->detach(second);
    EXPECT_FALSE(log->has_reader());
}

TYPED_TEST(EventLog, ACloseRequestWakesTheReaderAndIsTakenOnce) {
    auto const log = this->make_log();
    int woken = 0;
    auto const token = log->attach([&] { ++woken; }, false);
    ASSERT_NE(token, 0u);
    EXPECT_FALSE(log->take_close_request());
    log->request_close();
    EXPECT_EQ(woken, 1);
    EXPECT_TRUE(log->take_close_request());
    EXPECT_FALSE(log->take_close_request());
}

} // namespace
} // namespace duet::store::checks
