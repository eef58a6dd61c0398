// The event bus over a real Redis, for what only a shared bus shows: several processes (each a bus of its own
// here) hearing every publish once, prefixes keeping deployments apart, and Redis going away and coming back.
#include <duet/store/redis.hpp>

#include "common/store_runtime.hpp"
#include "support/redis_server.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace duet::store {
namespace {

using namespace std::chrono_literals;

// Returns once `bus` has heard a marker of its own: its earlier subscriptions are confirmed by then (Redis
// confirms one connection's subscriptions in order).
void wait_subscribed(event_bus& bus) {
    auto arrived = std::make_shared<std::atomic<bool>>(false);
    auto const token = bus.subscribe("marker", [arrived](std::string_view) { *arrived = true; });
    bus.publish("marker", "");
    EXPECT_TRUE(test::wait_until([&] { return arrived->load(); }, 20s)) << "the marker never came back";
    bus.unsubscribe(token);
}

// What a handler heard, read from the test's thread.
struct heard {
    std::mutex mutex;
    std::vector<std::string> payloads;
    auto handler() {
        return [this](std::string_view p) {
            std::lock_guard lock(mutex);
            payloads.emplace_back(p);
        };
    }
    std::vector<std::string> copy() {
        std::lock_guard lock(mutex);
        return payloads;
    }
    std::size_t count() { return copy().size(); }
};

class RedisBus : public ::testing::Test {
protected:
    void SetUp() override {
        if (auto why = test::redis_server::missing(); !why.empty())
            GTEST_SKIP() << why;
        redis_ = std::make_unique<test::redis_server>();
    }
    std::shared_ptr<event_bus> bus(std::string prefix = "p:") {
        return make_redis_event_bus(runtime_.start(), redis_->options(std::move(prefix)));
    }

    apps::store_runtime runtime_; // first: it outlives the buses' Redis connections
    std::unique_ptr<test::redis_server> redis_;
};

TEST_F(RedisBus, EveryProcessHearsEachPublishOncePublisherIncluded) {
    auto const a = bus(), b = bus(), c = bus();
    heard on_a, on_b, on_c;
    a->subscribe("events", on_a.handler());
    b->subscribe("events", on_b.handler());
    c->subscribe("events", on_c.handler());
    for (auto const& each : {b, c})
        wait_subscribed(*each);
    a->publish("events", "notifications/tools/list_changed");
    ASSERT_TRUE(test::wait_until([&] { return on_a.count() && on_b.count() && on_c.count(); }, 20s));
    std::this_thread::sleep_for(100ms); // would a duplicate come?
    for (auto* h : {&on_a, &on_b, &on_c})
        EXPECT_EQ(h->copy(), std::vector<std::string>{"notifications/tools/list_changed"});
}

TEST_F(RedisBus, APublishRightAfterSubscribeReachesTheSameProcess) {
    auto const a = bus();
    heard h;
    a->subscribe("t", h.handler());
    a->publish("t", "first"); // no wait: held until Redis confirmed the subscription
    ASSERT_TRUE(test::wait_until([&] { return h.count() == 1; }, 20s));
    EXPECT_EQ(h.copy(), std::vector<std::string>{"first"});
}

TEST_F(RedisBus, PrefixesKeepDeploymentsApart) {
    auto const one = bus("one:"), other = bus("other:");
    heard mine, theirs;
    one->subscribe("t", mine.handler());
    other->subscribe("t", theirs.handler());
    one->publish("t", "for one");
    ASSERT_TRUE(test::wait_until([&] { return mine.count() == 1; }, 20s));
    other->publish("t", "for other");
    ASSERT_TRUE(test::wait_until([&] { return theirs.count() == 1; }, 20s));
    std::this_thread::sleep_for(100ms);
    EXPECT_EQ(mine.copy(), std::vector<std::string>{"for one"});
    EXPECT_EQ(theirs.copy(), std::vector<std::string>{"for other"});
}

TEST_F(RedisBus, AfterRedisRestartsSubscriptionsAreRenewedAndPublishesFlowAgain) {
    auto const a = bus(), b = bus();
    heard on_b;
    b->subscribe("t", on_b.handler());
    a->publish("t", "before");
    // b's subscription may not be confirmed before a's publish: retry until it is heard.
    ASSERT_TRUE(test::wait_until(
        [&] {
            if (on_b.count())
                return true;
            a->publish("t", "before");
            return false;
        },
        20s, 50ms));
    redis_->kill();
    a->publish("t", "during"); // dropped: nobody can carry it, and nothing crashes
    redis_->start();
    auto const seen = on_b.count();
    ASSERT_TRUE(test::wait_until(
        [&] {
            if (on_b.count() > seen)
                return true;
            a->publish("t", "after");
            return false;
        },
        20s, 50ms))
        << "no publish got through after Redis came back";
    auto const all = on_b.copy();
    EXPECT_EQ(all.back(), "after");
    EXPECT_EQ(std::count(all.begin(), all.end(), "during"), 0);
}

TEST_F(RedisBus, AnUnsubscribedHandlerOfAnotherProcessHearsNothingMore) {
    auto const a = bus(), b = bus();
    heard on_b;
    auto const token = b->subscribe("t", on_b.handler());
    ASSERT_TRUE(test::wait_until(
        [&] {
            if (on_b.count())
                return true;
            a->publish("t", "x");
            return false;
        },
        20s, 50ms));
    b->unsubscribe(token);
    auto const seen = on_b.count();
    a->publish("t", "y");
    std::this_thread::sleep_for(200ms);
    EXPECT_EQ(on_b.count(), seen);
}

TEST_F(RedisBus, NoRoundTripWhileRedisIsAway) {
    auto const a = bus();
    ASSERT_TRUE(await_round_trip(*a, 20s));
    redis_->kill();
    EXPECT_FALSE(await_round_trip(*a, 300ms));
}

TEST(RedisReachable, AClosedPortIsUnreachableInWords) {
    redis_options where;
    where.port = test::free_loopback_port();
    auto const why = redis_unreachable(where, 500ms);
    EXPECT_NE(why.find("cannot be reached"), std::string::npos) << why;
    EXPECT_NE(why.find(std::to_string(where.port)), std::string::npos) << why;
}

TEST(RedisReachable, ARunningRedisIsReachableAndAMissingDatabaseIsNot) {
    if (auto why = test::redis_server::missing(); !why.empty())
        GTEST_SKIP() << why;
    test::redis_server redis;
    EXPECT_EQ(redis_unreachable(redis.options(""), 2s), "");
    auto where = redis.options("");
    where.database = 999; // redis-server has 16 by default
    auto const why = redis_unreachable(where, 2s);
    EXPECT_NE(why.find("refused SELECT 999"), std::string::npos) << why;
}

} // namespace
} // namespace duet::store
