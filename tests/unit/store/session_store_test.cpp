// The legacy session store against the interface (store/session_store.hpp), for every store kind: ids, the
// bound on sessions, removal, expiry, the live half kept beside the record, and a session's streams.
#include "store_kinds.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <thread>

namespace duet::store::checks {
namespace {

template<class Kind>
class SessionStore : public ::testing::Test {};
TYPED_TEST_SUITE(SessionStore, store_kinds);

struct marker final : session_local {
    int value = 0;
};

TYPED_TEST(SessionStore, CreateMintsDistinctHexIdsThatFindFinds) {
    auto const store = TypeParam::make({});
    std::set<std::string> ids;
    for (int i = 0; i < 4; ++i) {
        auto const s = store->create(nullptr);
        ASSERT_TRUE(s);
        EXPECT_EQ(s->id().size(), 32u);
        EXPECT_TRUE(std::all_of(s->id().begin(), s->id().end(), [](char c) {
            return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
        })) << s->id();
        EXPECT_EQ(store->find(s->id()), s);
        ids.insert(s->id());
    }
    EXPECT_EQ(ids.size(), 4u);
    EXPECT_EQ(store->size(), 4u);
    EXPECT_FALSE(store->find("0123456789abcdef0123456789abcdef"));
}

TYPED_TEST(SessionStore, FindTakesAViewOfTheHeaderItself) {
    auto const store = TypeParam::make({});
    auto const s = store->create(nullptr);
    std::string const header_block = s->id() + "\r\nHost: x";
    EXPECT_EQ(store->find(std::string_view(header_block).substr(0, s->id().size())), s);
    EXPECT_FALSE(store->find(std::string_view(header_block).substr(0, s->id().size() - 1)));
}

TYPED_TEST(SessionStore, CreateRefusesBeyondTheBound) {
    auto const store = TypeParam::make({.max_sessions = 2});
    auto const a = store->create(nullptr);
    ASSERT_TRUE(a);
    ASSERT_TRUE(store->create(nullptr));
    EXPECT_FALSE(store->create(nullptr));
    store->remove(a->id());
    EXPECT_TRUE(store->create(nullptr)) << "a removed session frees its place";
}

TYPED_TEST(SessionStore, RemoveTakesTheSessionOutOnce) {
    auto const store = TypeParam::make({});
    auto const s = store->create(nullptr);
    EXPECT_EQ(store->remove(s->id()), s);
    EXPECT_FALSE(store->remove(s->id()));
    EXPECT_FALSE(store->find(s->id()));
    EXPECT_EQ(store->size(), 0u);
    EXPECT_FALSE(s->ended()) << "removing does not end: the caller does";
}

TYPED_TEST(SessionStore, AnEndedSessionIsNotFoundButStaysListed) {
    auto const store = TypeParam::make({});
    auto const s = store->create(nullptr);
    s->end();
    EXPECT_TRUE(s->ended());
    EXPECT_FALSE(store->find(s->id()));
    EXPECT_EQ(store->all().size(), 1u);
}

TYPED_TEST(SessionStore, EndingWakesTheStandaloneStreamsReader) {
    auto const store = TypeParam::make({});
    auto const s = store->create(nullptr);
    int woken = 0;
    ASSERT_NE(s->standalone()->attach([&] { ++woken; }, false), 0u);
    s->end();
    EXPECT_EQ(woken, 1);
}

TYPED_TEST(SessionStore, ExpireRemovesOnlySessionsIdleLongerThanTheLimit) {
    auto const store = TypeParam::make({});
    auto const s = store->create(nullptr);
    EXPECT_TRUE(store->expire(std::chrono::hours(1)).empty());
    EXPECT_EQ(store->size(), 1u);
    std::this_thread::sleep_for(std::chrono::milliseconds(5)); // a slower machine only idles it longer
    auto const expired = store->expire(std::chrono::milliseconds(1));
    ASSERT_EQ(expired.size(), 1u);
    EXPECT_EQ(expired.front(), s);
    EXPECT_EQ(store->size(), 0u);
}

TYPED_TEST(SessionStore, AllListsEverySession) {
    auto const store = TypeParam::make({});
    auto const a = store->create(nullptr);
    auto const b = store->create(nullptr);
    auto const all = store->all();
    ASSERT_EQ(all.size(), 2u);
    EXPECT_TRUE(std::find(all.begin(), all.end(), a) != all.end());
    EXPECT_TRUE(std::find(all.begin(), all.end(), b) != all.end());
}

TYPED_TEST(SessionStore, TheLiveHalfGivenAtCreateComesBackWithTheSession) {
    auto const store = TypeParam::make({});
    auto local = std::make_shared<marker>();
    local->value = 7;
    auto const s = store->create(local);
    auto const found = store->find(s->id());
    ASSERT_TRUE(found);
    ASSERT_EQ(found->local(), local.get());
    EXPECT_EQ(static_cast<marker*>(found->local())->value, 7);
    EXPECT_EQ(store->create(nullptr)->local(), nullptr);
}

TYPED_TEST(SessionStore, StreamsAreNumberedFromOneAndFoundUntilForgotten) {
    auto const store = TypeParam::make({});
    auto const s = store->create(nullptr);
    EXPECT_EQ(s->standalone()->number(), 0u);
    EXPECT_EQ(s->find_stream(0), s->standalone());
    auto const first = s->open_stream();
    auto const second = s->open_stream();
    EXPECT_EQ(first->number(), 1u);
    EXPECT_EQ(second->number(), 2u);
    EXPECT_EQ(s->find_stream(1), first);
    s->forget_stream(1);
    EXPECT_FALSE(s->find_stream(1));
    EXPECT_EQ(s->find_stream(2), second);
    EXPECT_FALSE(s->find_stream(3));
}

TYPED_TEST(SessionStore, BeyondTheBoundTheOldestUnreadStreamIsForgotten) {
    auto const store = TypeParam::make({.resumable_streams = 2});
    auto const s = store->create(nullptr);
    auto const read = s->open_stream();
    ASSERT_NE(read->attach([] {}, false), 0u);
    auto const unread = s->open_stream();
    auto const third = s->open_stream();
    EXPECT_EQ(s->find_stream(read->number()), read) << "a stream with a reader is kept";
    EXPECT_FALSE(s->find_stream(unread->number()));
    EXPECT_EQ(s->find_stream(third->number()), third);
}

TYPED_TEST(SessionStore, EachStreamKeepsItsOwnEvents) {
    auto const store = TypeParam::make({});
    auto const s = store->create(nullptr);
    auto const post = s->open_stream();
    s->standalone()->publish("to the session");
    post->publish("to the request");
    ASSERT_EQ(s->standalone()->events_after(0).size(), 1u);
    EXPECT_EQ(s->standalone()->events_after(0).front().data, "to the session");
    ASSERT_EQ(post->events_after(0).size(), 1u);
    EXPECT_EQ(post->events_after(0).front().data, "to the request");
}

} // namespace
} // namespace duet::store::checks
