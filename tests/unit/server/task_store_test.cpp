// Tests for src/server/task_store.hpp: the bookkeeping of one process's tasks, driven with a clock the test
// holds (every call is told what time it is).
//
// Requirements: SEP-2663 §Security (task ids are unguessable: 128 random bits, and a task is found only by
// its owner), §Task Status (the status machine of protocol::may_move; terminal statuses never change, so a
// cancellation is sticky), the TTL (an expired task is gone, as if never made; `ttl` null: unlimited), and
// 2025-11-25 tasks/list (an owner's tasks, paged by cursor, in a stable order). The store's own bound: one
// owner holds at most `max_per_owner` tasks at once, and the refusal is -32603.
#include <duet/protocol/errors.hpp>
#include <duet/protocol/tasks.hpp>
#include <duet/protocol/version.hpp>

#include "server/task_store.hpp"

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace duet::server::detail::task_store_checks {

using protocol::era;
using protocol::task_status;
using protocol::version;
using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::seconds;
using clock_type = task_store::clock;

// A fixed instant, so no test depends on the wall clock.
clock_type::time_point const t0 = clock_type::time_point{} + std::chrono::duration_cast<clock_type::duration>(
                                                                 milliseconds{1'700'000'000'000});

task_entry make(task_store& store, std::string owner, std::optional<milliseconds> ttl = hours{1},
                clock_type::time_point now = t0) {
    auto r = store.create(std::move(owner), era::modern, version::v2026_07_28, ttl, milliseconds{500}, now);
    if (!r)
        ADD_FAILURE() << "create refused: " << r.error().code << ' ' << r.error().message;
    return r ? *r : task_entry{};
}

bool lowercase_hex(std::string_view s) {
    return std::all_of(s.begin(), s.end(),
                       [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::vector<std::string> ids_of(std::vector<task_entry> const& entries) {
    std::vector<std::string> out;
    for (auto const& e : entries)
        out.push_back(e.view.id);
    return out;
}

// ---- create and find --------------------------------------------------------------------------------------

TEST(TaskStore, CreateGivesA32DigitLowercaseHexIdAndAWorkingTask) {
    task_store store({});
    auto const r =
        store.create("alice", era::legacy, version::v2025_11_25, milliseconds{60'000}, milliseconds{250}, t0);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->view.id.size(), 32u);
    EXPECT_TRUE(lowercase_hex(r->view.id)) << r->view.id;
    EXPECT_EQ(r->view.status, task_status::working);
    EXPECT_TRUE(r->view.status_message.empty());
    EXPECT_EQ(r->view.created, t0);
    EXPECT_EQ(r->view.updated, t0);
    EXPECT_EQ(r->view.ttl_ms, 60'000);
    EXPECT_EQ(r->view.poll_interval_ms, 250);
    EXPECT_EQ(r->owner, "alice");
    EXPECT_EQ(r->era, era::legacy);
    EXPECT_EQ(r->version, version::v2025_11_25);
    EXPECT_FALSE(r->result);
    EXPECT_FALSE(r->error);
    EXPECT_TRUE(r->input_requests.empty());
    EXPECT_EQ(r->expires, t0 + milliseconds{60'000});
    EXPECT_EQ(store.size(), 1u);
}

TEST(TaskStore, IdsAreUniqueOverManyTasks) {
    task_store store({.max_per_owner = 5000});
    std::set<std::string> ids;
    for (int i = 0; i < 2000; ++i) {
        auto const e = make(store, i % 2 ? "alice" : "bob");
        EXPECT_EQ(e.view.id.size(), 32u);
        EXPECT_TRUE(lowercase_hex(e.view.id)) << e.view.id;
        ids.insert(e.view.id);
    }
    EXPECT_EQ(ids.size(), 2000u);
    EXPECT_EQ(store.size(), 2000u);
}

TEST(TaskStore, NewTaskIdIsLowercaseHexAndFresh) {
    auto const a = new_task_id();
    auto const b = new_task_id();
    EXPECT_EQ(a.size(), 32u);
    EXPECT_TRUE(lowercase_hex(a)) << a;
    EXPECT_NE(a, b);
}

TEST(TaskStore, FindFindsOnlyTheOwnersTask) {
    task_store store({});
    auto const e = make(store, "alice");
    auto const found = store.find(e.view.id, "alice", t0);
    ASSERT_TRUE(found);
    EXPECT_EQ(found->view.id, e.view.id);
    EXPECT_EQ(found->owner, "alice");
    EXPECT_FALSE(store.find(e.view.id, "bob", t0)) << "another owner must not see it";
    EXPECT_FALSE(store.find(e.view.id, "", t0)) << "an anonymous caller is another owner";
    EXPECT_FALSE(store.find(e.view.id, "Alice", t0)) << "owners compare exactly";
}

TEST(TaskStore, AnonymousOwnerFindsItsOwnButNotOthers) {
    task_store store({});
    auto const anon = make(store, "");
    EXPECT_TRUE(store.find(anon.view.id, "", t0));
    EXPECT_FALSE(store.find(anon.view.id, "alice", t0));
}

TEST(TaskStore, FindOfAnUnknownIdIsEmpty) {
    task_store store({});
    auto const e = make(store, "alice");
    EXPECT_FALSE(store.find("0123456789abcdef0123456789abcdef", "alice", t0));
    EXPECT_FALSE(store.find("", "alice", t0));
    EXPECT_FALSE(store.find(e.view.id.substr(0, 31), "alice", t0));
    EXPECT_FALSE(store.find(e.view.id + "0", "alice", t0));
}

// ---- expiry -----------------------------------------------------------------------------------------------

TEST(TaskStore, ATaskExpiresExactlyAtCreatedPlusTtl) {
    task_store store({});
    auto const e = make(store, "alice", milliseconds{5000});
    EXPECT_TRUE(store.find(e.view.id, "alice", t0 + milliseconds{4999}));
    EXPECT_TRUE(store.find(e.view.id, "alice", t0 + milliseconds{5000} - clock_type::duration{1}));
    EXPECT_FALSE(store.find(e.view.id, "alice", t0 + milliseconds{5000}));
    EXPECT_FALSE(store.find(e.view.id, "alice", t0 + hours{1}));
}

TEST(TaskStore, ZeroTtlIsGoneAtOnce) {
    task_store store({});
    auto const e = make(store, "alice", milliseconds{0});
    EXPECT_FALSE(store.find(e.view.id, "alice", t0));
}

TEST(TaskStore, EmptyTtlNeverExpires) {
    task_store store({});
    auto const e = make(store, "alice", std::nullopt);
    EXPECT_FALSE(e.view.ttl_ms) << "unlimited: null on the wire";
    auto const far = t0 + hours{24 * 365 * 100};
    EXPECT_TRUE(store.find(e.view.id, "alice", far));
    EXPECT_TRUE(store.sweep(far).empty());
    EXPECT_EQ(store.size(), 1u);
    EXPECT_TRUE(store.move(e.view.id, task_status::completed, far));
}

TEST(TaskStore, SweepRemovesExactlyTheExpired) {
    task_store store({});
    auto const short_lived = make(store, "alice", milliseconds{1000});
    auto const long_lived = make(store, "alice", milliseconds{10'000});
    auto const forever = make(store, "bob", std::nullopt);
    EXPECT_TRUE(store.sweep(t0 + milliseconds{999}).empty());
    EXPECT_EQ(store.size(), 3u);
    EXPECT_EQ(store.sweep(t0 + milliseconds{1000}), std::vector<std::string>{short_lived.view.id});
    EXPECT_EQ(store.size(), 2u);
    EXPECT_TRUE(store.sweep(t0 + milliseconds{1000}).empty()) << "a task is swept once";
    EXPECT_EQ(store.sweep(t0 + hours{1}), std::vector<std::string>{long_lived.view.id});
    EXPECT_EQ(store.size(), 1u);
    EXPECT_TRUE(store.find(forever.view.id, "bob", t0 + hours{1}));
}

TEST(TaskStore, ExpiredTasksCannotBeUpdatedOrMoved) {
    task_store store({});
    auto const e = make(store, "alice", milliseconds{1000});
    bool called = false;
    EXPECT_FALSE(store.update(e.view.id, t0 + milliseconds{1000}, [&](task_entry&) {
        called = true;
        return true;
    }));
    EXPECT_FALSE(called) << "an expired task is gone: no change runs on it";
    EXPECT_FALSE(store.move(e.view.id, task_status::cancelled, t0 + milliseconds{1000}));
}

// ---- the per-owner bound ----------------------------------------------------------------------------------

TEST(TaskStore, AnOwnerAtItsMaximumIsRefusedWithInternalError) {
    task_store store({.max_per_owner = 2});
    make(store, "alice");
    make(store, "alice");
    auto const third =
        store.create("alice", era::modern, version::v2026_07_28, hours{1}, milliseconds{500}, t0);
    ASSERT_FALSE(third);
    EXPECT_EQ(third.error().code, static_cast<int>(protocol::errc::internal_error));
    EXPECT_EQ(store.size(), 2u) << "a refused create stores nothing";
    EXPECT_TRUE(store.create("bob", era::modern, version::v2026_07_28, hours{1}, milliseconds{500}, t0))
        << "the bound is per owner";
}

TEST(TaskStore, SweepFreesTheOwnersPlaces) {
    task_store store({.max_per_owner = 2});
    make(store, "alice", milliseconds{1000});
    make(store, "alice", milliseconds{2000});
    EXPECT_FALSE(store.create("alice", era::modern, version::v2026_07_28, hours{1}, milliseconds{500}, t0));
    EXPECT_EQ(store.sweep(t0 + milliseconds{1000}).size(), 1u);
    auto const now = t0 + milliseconds{1000};
    EXPECT_TRUE(store.create("alice", era::modern, version::v2026_07_28, hours{1}, milliseconds{500}, now))
        << "one place freed";
    EXPECT_FALSE(store.create("alice", era::modern, version::v2026_07_28, hours{1}, milliseconds{500}, now))
        << "and only one";
    EXPECT_EQ(store.sweep(t0 + milliseconds{2000}).size(), 1u);
    EXPECT_TRUE(store.create("alice", era::modern, version::v2026_07_28, hours{1}, milliseconds{500},
                             t0 + milliseconds{2000}));
}

TEST(TaskStore, TerminalTasksStillCountUntilTheyExpire) {
    task_store store({.max_per_owner = 1});
    auto const e = make(store, "alice", milliseconds{1000});
    ASSERT_TRUE(store.move(e.view.id, task_status::completed, t0));
    EXPECT_FALSE(store.create("alice", era::modern, version::v2026_07_28, hours{1}, milliseconds{500}, t0));
    store.sweep(t0 + milliseconds{1000});
    EXPECT_TRUE(store.create("alice", era::modern, version::v2026_07_28, hours{1}, milliseconds{500},
                             t0 + milliseconds{1000}));
}

// ---- update and move --------------------------------------------------------------------------------------

TEST(TaskStore, UpdateAppliesTheChangeAndStampsLastUpdatedAt) {
    task_store store({});
    auto const e = make(store, "alice");
    auto const later = t0 + seconds{3};
    auto const after = store.update(e.view.id, later, [](task_entry& t) {
        t.view.status_message = "halfway";
        return true;
    });
    ASSERT_TRUE(after);
    EXPECT_EQ(after->view.status_message, "halfway");
    EXPECT_EQ(after->view.updated, later);
    EXPECT_EQ(after->view.created, t0);
    auto const found = store.find(e.view.id, "alice", later);
    ASSERT_TRUE(found);
    EXPECT_EQ(found->view.status_message, "halfway");
    EXPECT_EQ(found->view.updated, later);
}

TEST(TaskStore, UpdateThatDeclinesChangesNothing) {
    task_store store({});
    auto const e = make(store, "alice");
    EXPECT_FALSE(store.update(e.view.id, t0 + seconds{3}, [](task_entry& t) {
        t.view.status_message = "half-made change";
        return false;
    }));
    auto const found = store.find(e.view.id, "alice", t0 + seconds{3});
    ASSERT_TRUE(found);
    EXPECT_TRUE(found->view.status_message.empty()) << "a declined change must not stand";
    EXPECT_EQ(found->view.updated, t0) << "nor move lastUpdatedAt";
}

TEST(TaskStore, UpdateOfAnUnknownTaskIsEmpty) {
    task_store store({});
    bool called = false;
    EXPECT_FALSE(store.update("0123456789abcdef0123456789abcdef", t0, [&](task_entry&) {
        called = true;
        return true;
    }));
    EXPECT_FALSE(called);
}

TEST(TaskStore, TerminalTasksNeverChange) {
    for (auto terminal : {task_status::completed, task_status::failed, task_status::cancelled}) {
        task_store store({});
        auto const e = make(store, "alice");
        ASSERT_TRUE(store.move(e.view.id, terminal, t0 + seconds{1})) << protocol::to_string(terminal);
        bool called = false;
        EXPECT_FALSE(store.update(e.view.id, t0 + seconds{2}, [&](task_entry& t) {
            called = true;
            t.view.status = task_status::working;
            t.view.status_message = "revived";
            return true;
        })) << protocol::to_string(terminal);
        EXPECT_FALSE(called) << protocol::to_string(terminal);
        for (auto to : {task_status::working, task_status::input_required, task_status::completed,
                        task_status::failed, task_status::cancelled})
            EXPECT_FALSE(store.move(e.view.id, to, t0 + seconds{2}))
                << protocol::to_string(terminal) << " -> " << protocol::to_string(to);
        auto const found = store.find(e.view.id, "alice", t0 + seconds{2});
        ASSERT_TRUE(found);
        EXPECT_EQ(found->view.status, terminal);
        EXPECT_TRUE(found->view.status_message.empty());
        EXPECT_EQ(found->view.updated, t0 + seconds{1});
    }
}

TEST(TaskStore, MoveFollowsTheStatusMachine) {
    task_store store({});
    auto const e = make(store, "alice");
    EXPECT_FALSE(store.move(e.view.id, task_status::working, t0 + seconds{1})) << "no move to itself";
    EXPECT_EQ(store.find(e.view.id, "alice", t0 + seconds{1})->view.updated, t0)
        << "a refused move stamps nothing";
    auto const waiting = store.move(e.view.id, task_status::input_required, t0 + seconds{2});
    ASSERT_TRUE(waiting);
    EXPECT_EQ(waiting->view.status, task_status::input_required);
    EXPECT_EQ(waiting->view.updated, t0 + seconds{2});
    EXPECT_FALSE(store.move(e.view.id, task_status::input_required, t0 + seconds{3}));
    auto const back = store.move(e.view.id, task_status::working, t0 + seconds{4});
    ASSERT_TRUE(back);
    EXPECT_EQ(back->view.status, task_status::working);
    auto const done = store.move(e.view.id, task_status::cancelled, t0 + seconds{5});
    ASSERT_TRUE(done);
    EXPECT_EQ(done->view.status, task_status::cancelled);
    EXPECT_FALSE(store.move(e.view.id, task_status::completed, t0 + seconds{6})) << "cancellation is sticky";
    EXPECT_EQ(store.find(e.view.id, "alice", t0 + seconds{6})->view.status, task_status::cancelled);
}

TEST(TaskStore, LeavingInputRequiredForgetsTheOutstandingRequests) {
    task_store store({});
    auto const e = make(store, "alice");
    ASSERT_TRUE(store.update(e.view.id, t0 + seconds{1}, [](task_entry& t) {
        t.view.status = task_status::input_required;
        t.input_requests =
            boost::json::parse(R"({"ask-1":{"method":"elicitation/create","params":{}}})").as_object();
        return true;
    }));
    auto const back = store.move(e.view.id, task_status::working, t0 + seconds{2});
    ASSERT_TRUE(back);
    EXPECT_TRUE(back->input_requests.empty());
    EXPECT_TRUE(store.find(e.view.id, "alice", t0 + seconds{2})->input_requests.empty());
}

TEST(TaskStore, LastUpdatedAtNeverGoesBackwards) {
    task_store store({});
    auto const e = make(store, "alice");
    ASSERT_TRUE(store.move(e.view.id, task_status::input_required, t0 + seconds{10}));
    auto const earlier = store.move(e.view.id, task_status::working, t0 + seconds{5});
    ASSERT_TRUE(earlier) << "a late-arriving clock reading still changes the task";
    EXPECT_EQ(earlier->view.status, task_status::working);
    EXPECT_EQ(earlier->view.updated, t0 + seconds{10});
    auto const before_creation = store.update(e.view.id, t0 - seconds{1}, [](task_entry& t) {
        t.view.status_message = "x";
        return true;
    });
    ASSERT_TRUE(before_creation);
    EXPECT_EQ(before_creation->view.updated, t0 + seconds{10});
    EXPECT_GE(before_creation->view.updated, before_creation->view.created);
}

TEST(TaskStore, FindReturnsACopy) {
    task_store store({});
    auto const e = make(store, "alice");
    auto copy = store.find(e.view.id, "alice", t0);
    ASSERT_TRUE(copy);
    copy->view.status = task_status::completed;
    EXPECT_EQ(store.find(e.view.id, "alice", t0)->view.status, task_status::working);
}

// ---- list -------------------------------------------------------------------------------------------------

TEST(TaskStore, ListPagesAnOwnersTasksInIdOrder) {
    task_store store({});
    std::vector<std::string> mine;
    for (int i = 0; i < 7; ++i) {
        mine.push_back(make(store, "alice").view.id);
        make(store, "bob");
    }
    std::sort(mine.begin(), mine.end());

    auto const [first, more1] = store.list("alice", "", 3, t0);
    EXPECT_EQ(ids_of(first), (std::vector<std::string>{mine[0], mine[1], mine[2]}));
    EXPECT_TRUE(more1);
    auto const [second, more2] = store.list("alice", first.back().view.id, 3, t0);
    EXPECT_EQ(ids_of(second), (std::vector<std::string>{mine[3], mine[4], mine[5]}));
    EXPECT_TRUE(more2);
    auto const [third, more3] = store.list("alice", second.back().view.id, 3, t0);
    EXPECT_EQ(ids_of(third), (std::vector<std::string>{mine[6]}));
    EXPECT_FALSE(more3);
    for (auto const* page : {&first, &second, &third})
        for (auto const& e : *page)
            EXPECT_EQ(e.owner, "alice");
}

TEST(TaskStore, ListOfAnExactPageSaysNoMore) {
    task_store store({});
    std::vector<std::string> mine;
    for (int i = 0; i < 4; ++i)
        mine.push_back(make(store, "alice").view.id);
    std::sort(mine.begin(), mine.end());
    auto const [page, more] = store.list("alice", "", 4, t0);
    EXPECT_EQ(ids_of(page), mine);
    EXPECT_FALSE(more);
    auto const [all, more_all] = store.list("alice", "", 100, t0);
    EXPECT_EQ(ids_of(all), mine);
    EXPECT_FALSE(more_all);
}

TEST(TaskStore, ListSkipsOtherOwnersAndExpiredTasks) {
    task_store store({});
    auto const live = make(store, "alice", hours{1});
    auto const dying = make(store, "alice", milliseconds{1000});
    for (int i = 0; i < 5; ++i)
        make(store, "bob");
    auto const [page, more] = store.list("alice", "", 10, t0 + milliseconds{1000});
    EXPECT_EQ(ids_of(page), std::vector<std::string>{live.view.id});
    EXPECT_FALSE(more);
    // The one live task fills a page of one, and the expired and foreign ones after it are not "more".
    auto const [one, more_one] = store.list("alice", "", 1, t0 + milliseconds{1000});
    EXPECT_EQ(ids_of(one), std::vector<std::string>{live.view.id});
    EXPECT_FALSE(more_one);
    (void)dying;
}

TEST(TaskStore, ListOfAnOwnerWithoutTasksIsEmpty) {
    task_store store({});
    make(store, "bob");
    auto const [page, more] = store.list("alice", "", 10, t0);
    EXPECT_TRUE(page.empty());
    EXPECT_FALSE(more);
}

TEST(TaskStore, ListAfterTheLastIdIsEmpty) {
    task_store store({});
    auto const e = make(store, "alice");
    auto const [page, more] = store.list("alice", e.view.id, 10, t0);
    EXPECT_TRUE(page.empty());
    EXPECT_FALSE(more);
    auto const [from_unknown, more_unknown] = store.list("alice", "ffffffffffffffffffffffffffffffff", 10, t0);
    EXPECT_TRUE(from_unknown.empty());
    EXPECT_FALSE(more_unknown);
}

TEST(TaskStore, ListShowsTheCurrentStateOfEachTask) {
    task_store store({});
    auto const e = make(store, "alice");
    ASSERT_TRUE(store.move(e.view.id, task_status::failed, t0 + seconds{1}));
    auto const [page, more] = store.list("alice", "", 10, t0 + seconds{1});
    ASSERT_EQ(page.size(), 1u);
    EXPECT_EQ(page[0].view.status, task_status::failed);
    EXPECT_EQ(page[0].view.updated, t0 + seconds{1});
    EXPECT_FALSE(more);
}

} // namespace duet::server::detail::task_store_checks
