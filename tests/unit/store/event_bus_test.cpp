// The event bus against the interface (store/event_bus.hpp), for every store kind: delivery by topic,
// payloads as published, unsubscribing, and a handler that publishes in turn.
#include "store_kinds.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace duet::store::checks {
namespace {

template<class Kind>
class EventBus : public ::testing::Test {
protected:
    void SetUp() override {
        if (auto why = Kind::unavailable(); !why.empty())
            GTEST_SKIP() << why;
    }
};
TYPED_TEST_SUITE(EventBus, bus_kinds);

TYPED_TEST(EventBus, DeliversEachPublishToEverySubscriberOfItsTopicOnly) {
    auto const bus = TypeParam::make_bus();
    std::vector<std::string> first, second, other;
    auto const a = bus->subscribe("t", [&](std::string_view p) { first.emplace_back(p); });
    auto const b = bus->subscribe("t", [&](std::string_view p) { second.emplace_back(p); });
    auto const c = bus->subscribe("u", [&](std::string_view p) { other.emplace_back(p); });
    bus->publish("t", "notifications/resources/updated\nfile:///a b");
    bus->publish("t", "");
    TypeParam::settle(*bus);
    std::vector<std::string> const want{"notifications/resources/updated\nfile:///a b", ""};
    EXPECT_EQ(first, want);
    EXPECT_EQ(second, want);
    EXPECT_TRUE(other.empty());
    for (auto token : {a, b, c})
        bus->unsubscribe(token);
}

TYPED_TEST(EventBus, AnUnsubscribedHandlerHearsNoLaterPublish) {
    auto const bus = TypeParam::make_bus();
    int heard = 0;
    auto const token = bus->subscribe("t", [&](std::string_view) { ++heard; });
    bus->publish("t", "one");
    TypeParam::settle(*bus);
    bus->unsubscribe(token);
    bus->publish("t", "two");
    TypeParam::settle(*bus);
    EXPECT_EQ(heard, 1);
}

TYPED_TEST(EventBus, AHandlerMayPublishInTurn) {
    auto const bus = TypeParam::make_bus();
    std::vector<std::string> heard;
    auto const relay =
        bus->subscribe("in", [&](std::string_view p) { bus->publish("out", std::string(p) + "!"); });
    auto const sink = bus->subscribe("out", [&](std::string_view p) { heard.emplace_back(p); });
    bus->publish("in", "x");
    TypeParam::settle(*bus);
    TypeParam::settle(*bus);
    EXPECT_EQ(heard, std::vector<std::string>{"x!"});
    bus->unsubscribe(relay);
    bus->unsubscribe(sink);
}

TYPED_TEST(EventBus, ARoundTripComesBackAndLeavesNoSubscriptionBehind) {
    auto const bus = TypeParam::make_bus();
    int heard = 0;
    auto const token = bus->subscribe("t", [&](std::string_view) { ++heard; });
    EXPECT_TRUE(await_round_trip(*bus, std::chrono::seconds(20)));
    bus->publish("t", "after");
    TypeParam::settle(*bus);
    EXPECT_EQ(heard, 1); // the marker went on a topic of its own
    bus->unsubscribe(token);
}

} // namespace
} // namespace duet::store::checks
