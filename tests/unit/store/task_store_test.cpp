// The task store against the interface (store/task_store.hpp), for every store kind: records kept exactly,
// expiry (by a clock moved by hand in memory, by waiting in Redis), the bound per owner, taken ids, updates
// and terminal records, lists by page, and no record orphaned while the store that made it runs. Then what
// only a shared store shows: two processes (two stores on one key prefix) seeing each other's records,
// concurrent updates from both losing none, the records of one that ended (or stopped renewing its runner
// key) orphaned, and Redis away.
#include "common/store_runtime.hpp"
#include "store_kinds.hpp"
#include "support/loopback_port.hpp"
#include "support/redis_server.hpp"
#include "support/wait.hpp"

#include <boost/asio/post.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

namespace duet::store::checks {
namespace {

using namespace std::chrono_literals;
using task_time = std::chrono::system_clock::time_point;

template<class T>
using task_answer = boost::system::result<T, task_store::failure>;

// How long any operation may take to answer before the test fails (only a hang waits that long).
constexpr auto task_answer_limit = 10s;

// Starts an operation with a callback and waits for its answer on the test's thread. No answer within the
// limit, or two answers to one call, fail the test.
template<class T, class Start>
task_answer<T> task_answer_of(Start&& start) {
    auto box = std::make_shared<std::promise<task_answer<T>>>();
    auto answered = std::make_shared<std::atomic<bool>>(false);
    auto future = box->get_future();
    start([box, answered](task_answer<T> a) {
        if (answered->exchange(true)) {
            ADD_FAILURE() << "the task store answered one call twice";
            return;
        }
        box->set_value(std::move(a));
    });
    if (future.wait_for(task_answer_limit) != std::future_status::ready) {
        ADD_FAILURE() << "the task store did not answer within " << task_answer_limit.count() << " s";
        return task_answer<T>(boost::system::in_place_error, "no answer (test timeout)");
    }
    return future.get();
}

// What an answer carries, or (failing the test with the failure in words) a default.
template<class T>
T task_ok(task_answer<T> a) {
    if (!a) {
        ADD_FAILURE() << "the task store failed: " << a.error();
        return T{};
    }
    return std::move(*a);
}

// The store's operations, waited for: try_* give the store's answer, failure included; the others what it
// carries (a failure fails the test).
struct task_calls {
    std::shared_ptr<task_store> store;

    task_answer<task_store::created> try_create(task_record r, std::size_t max_per_owner = 1000) const {
        return task_answer_of<task_store::created>(
            [&](auto done) { store->create(std::move(r), max_per_owner, std::move(done)); });
    }
    task_answer<std::optional<task_record>> try_find(std::string id) const {
        return task_answer_of<std::optional<task_record>>(
            [&](auto done) { store->find(std::move(id), std::move(done)); });
    }
    task_answer<std::optional<task_record>> try_update(std::string id, task_store::change c) const {
        return task_answer_of<std::optional<task_record>>(
            [&](auto done) { store->update(std::move(id), std::move(c), std::move(done)); });
    }
    task_answer<task_store::page> try_list(std::string owner, std::string after, std::size_t limit) const {
        return task_answer_of<task_store::page>(
            [&](auto done) { store->list(std::move(owner), std::move(after), limit, std::move(done)); });
    }

    task_store::created create(task_record r, std::size_t max_per_owner = 1000) const {
        return task_ok(try_create(std::move(r), max_per_owner));
    }
    std::optional<task_record> find(std::string id) const { return task_ok(try_find(std::move(id))); }
    std::optional<task_record> update(std::string id, task_store::change c) const {
        return task_ok(try_update(std::move(id), std::move(c)));
    }
    task_store::page list(std::string owner, std::string after, std::size_t limit) const {
        return task_ok(try_list(std::move(owner), std::move(after), limit));
    }
};

// A record's fields as a tuple GoogleTest compares and prints; the expiry in ms since the epoch (-1: never).
auto task_fields(task_record const& r) {
    auto const expires =
        r.expires == task_time::max()
            ? std::int64_t{-1}
            : std::chrono::duration_cast<std::chrono::milliseconds>(r.expires.time_since_epoch()).count();
    return std::tuple(r.id, r.owner, r.body, r.terminal, expires, r.orphaned);
}

std::vector<std::string> task_ids(task_store::page const& p) {
    std::vector<std::string> out;
    for (auto const& r : p.records)
        out.push_back(r.id);
    return out;
}

// The ids of a page's orphaned records.
std::vector<std::string> orphaned_ids(task_store::page const& p) {
    std::vector<std::string> out;
    for (auto const& r : p.records)
        if (r.orphaned)
            out.push_back(r.id);
    return out;
}

task_record task_of(std::string id, std::string owner, std::string body = "{}",
                    task_time expires = task_time::max()) {
    return task_record{.id = std::move(id),
                       .owner = std::move(owner),
                       .body = std::move(body),
                       .terminal = false,
                       .expires = expires};
}

// Time for one test: moved by hand for a store whose clock can be set, the real clock (waited for) otherwise.
template<class Kind>
class task_clock {
public:
    std::shared_ptr<task_store> make_store() {
        if constexpr (Kind::task_clock_settable)
            return Kind::make_task_store([offset = offset_, base = base_] { return base + offset->load(); });
        else
            return Kind::make_task_store();
    }
    [[nodiscard]] task_time now() const {
        if constexpr (Kind::task_clock_settable)
            return base_ + offset_->load();
        else
            return std::chrono::system_clock::now();
    }
    void pass(std::chrono::milliseconds d) {
        if constexpr (Kind::task_clock_settable)
            *offset_ = offset_->load() + d;
        else
            std::this_thread::sleep_for(d);
    }

private:
    task_time const base_ = std::chrono::floor<std::chrono::milliseconds>(std::chrono::system_clock::now());
    std::shared_ptr<std::atomic<std::chrono::milliseconds>> offset_ =
        std::make_shared<std::atomic<std::chrono::milliseconds>>(0ms);
};

template<class Kind>
class TaskStore : public ::testing::Test {
protected:
    void SetUp() override {
        if (auto why = Kind::unavailable(); !why.empty())
            GTEST_SKIP() << why;
        tasks_.store = clock_.make_store();
    }

    task_clock<Kind> clock_;
    task_calls tasks_;
};
TYPED_TEST_SUITE(TaskStore, task_kinds);

TYPED_TEST(TaskStore, CreateThenFindReturnsTheRecordExactly) {
    auto const& tasks = this->tasks_;
    auto const in_an_hour = std::chrono::floor<std::chrono::milliseconds>(this->clock_.now() + 1h);
    std::string const body("{\"status\":\"working\",\n\"note\":\"\xc3\xa9\0x\"}", 36);
    auto const first = task_of("0123456789abcdef0123456789abcdef", "alice", body, in_an_hour);
    auto const made = tasks.try_create(first);
    ASSERT_TRUE(made) << made.error();
    EXPECT_EQ(*made, task_store::created::ok);
    auto const found = tasks.try_find(first.id);
    ASSERT_TRUE(found) << found.error();
    ASSERT_TRUE(*found);
    EXPECT_EQ(task_fields(**found), task_fields(first));

    auto second = task_of("fedcba9876543210fedcba9876543210", "bob", "");
    second.terminal = true;
    ASSERT_EQ(tasks.create(second), task_store::created::ok);
    auto const again = tasks.find(second.id);
    ASSERT_TRUE(again);
    EXPECT_EQ(task_fields(*again), task_fields(second)) << "an empty body, terminal, never expiring";
}

TYPED_TEST(TaskStore, FindOfAnUnknownIdIsNothing) {
    auto const found = this->tasks_.try_find("0123456789abcdef0123456789abcdef");
    ASSERT_TRUE(found) << found.error();
    EXPECT_FALSE(*found);
    ASSERT_EQ(this->tasks_.create(task_of("a", "alice")), task_store::created::ok);
    // Ids a caller makes up, like the names a shared store might keep an owner's records under.
    for (auto const* id : {"alice", "owner:alice", "t:owner:alice", "owner-tasks:alice", ""}) {
        auto const other = this->tasks_.try_find(id);
        ASSERT_TRUE(other) << id << ": " << other.error();
        EXPECT_FALSE(*other) << id;
    }
}

TYPED_TEST(TaskStore, AnExpiredRecordIsGoneAndNoLongerCountsTowardsItsOwner) {
    auto const& tasks = this->tasks_;
    auto const soon = std::chrono::floor<std::chrono::milliseconds>(this->clock_.now() + 500ms);
    ASSERT_EQ(tasks.create(task_of("short", "alice", "{}", soon), 2), task_store::created::ok);
    ASSERT_EQ(tasks.create(task_of("long", "alice"), 2), task_store::created::ok);
    ASSERT_TRUE(tasks.find("short")) << "alive before its expiry";
    EXPECT_EQ(tasks.create(task_of("third", "alice"), 2), task_store::created::owner_full);

    this->clock_.pass(700ms);
    EXPECT_FALSE(tasks.find("short"));
    int changes = 0;
    EXPECT_FALSE(tasks.update("short", [&](task_record const& r) -> std::optional<task_record> {
        ++changes;
        return r;
    }));
    EXPECT_EQ(changes, 0);
    EXPECT_EQ(task_ids(tasks.list("alice", "", 10)), std::vector<std::string>{"long"});
    EXPECT_EQ(tasks.create(task_of("third", "alice"), 2), task_store::created::ok)
        << "the expired record no longer counts";
    EXPECT_EQ(tasks.create(task_of("fourth", "alice"), 2), task_store::created::owner_full);
    EXPECT_EQ(tasks.create(task_of("short", "bob", "{}"), 2), task_store::created::ok)
        << "an expired record's id is free again";
}

TYPED_TEST(TaskStore, EachOwnerHoldsAtMostTheBound) {
    auto const& tasks = this->tasks_;
    for (auto const* id : {"a1", "a2", "a3"})
        ASSERT_EQ(tasks.create(task_of(id, "alice"), 3), task_store::created::ok) << id;
    EXPECT_EQ(tasks.create(task_of("a4", "alice"), 3), task_store::created::owner_full);
    EXPECT_FALSE(tasks.find("a4")) << "a refused record is not kept";
    EXPECT_EQ(tasks.create(task_of("b1", "bob"), 3), task_store::created::ok)
        << "another owner is not affected";
    EXPECT_EQ(tasks.create(task_of("c1", "carol"), 0), task_store::created::owner_full)
        << "a bound of 0 refuses every record";
    EXPECT_EQ(task_ids(tasks.list("alice", "", 10)), (std::vector<std::string>{"a1", "a2", "a3"}));
}

TYPED_TEST(TaskStore, AnIdInUseIsTaken) {
    auto const& tasks = this->tasks_;
    ASSERT_EQ(tasks.create(task_of("x", "alice", "first")), task_store::created::ok);
    EXPECT_EQ(tasks.create(task_of("x", "bob", "second")), task_store::created::taken);
    EXPECT_EQ(tasks.create(task_of("x", "alice", "third")), task_store::created::taken);
    auto const found = tasks.find("x");
    ASSERT_TRUE(found);
    EXPECT_EQ(found->owner, "alice");
    EXPECT_EQ(found->body, "first");
    EXPECT_TRUE(task_ids(tasks.list("bob", "", 10)).empty());
}

TYPED_TEST(TaskStore, UpdateReplacesTheBodyAndTerminalFlagOnly) {
    auto const& tasks = this->tasks_;
    auto const expires = std::chrono::floor<std::chrono::milliseconds>(this->clock_.now() + 1h);
    ASSERT_EQ(tasks.create(task_of("t", "alice", "working", expires)), task_store::created::ok);
    std::vector<std::string> seen;
    auto const changed = tasks.try_update("t", [&](task_record const& current) -> std::optional<task_record> {
        seen.push_back(current.body);
        // Only body and terminal count: the rest is the record's own.
        return task_record{.id = "other",
                           .owner = "mallory",
                           .body = "completed",
                           .terminal = true,
                           .expires = task_time::max()};
    });
    ASSERT_TRUE(changed) << changed.error();
    ASSERT_TRUE(*changed);
    EXPECT_EQ(seen, std::vector<std::string>{"working"});
    auto want = task_of("t", "alice", "completed", expires);
    want.terminal = true;
    EXPECT_EQ(task_fields(**changed), task_fields(want));
    EXPECT_EQ(task_fields(*tasks.find("t")), task_fields(want));
    EXPECT_FALSE(tasks.find("other"));
}

TYPED_TEST(TaskStore, ADeclinedChangeLeavesTheRecord) {
    auto const& tasks = this->tasks_;
    ASSERT_EQ(tasks.create(task_of("t", "alice", "working")), task_store::created::ok);
    int changes = 0;
    auto const declined = tasks.try_update("t", [&](task_record const&) -> std::optional<task_record> {
        ++changes;
        return std::nullopt;
    });
    ASSERT_TRUE(declined) << declined.error();
    EXPECT_FALSE(*declined);
    EXPECT_EQ(changes, 1);
    auto const found = tasks.find("t");
    ASSERT_TRUE(found);
    EXPECT_EQ(found->body, "working");
    EXPECT_FALSE(found->terminal);
}

TYPED_TEST(TaskStore, ATerminalRecordNeverChangesAgain) {
    auto const& tasks = this->tasks_;
    ASSERT_EQ(tasks.create(task_of("t", "alice", "working")), task_store::created::ok);
    auto const cancelled = tasks.update("t", [](task_record const& r) -> std::optional<task_record> {
        auto next = r;
        next.body = "cancelled";
        next.terminal = true;
        return next;
    });
    ASSERT_TRUE(cancelled);
    int changes = 0;
    auto const later = tasks.try_update("t", [&](task_record const& r) -> std::optional<task_record> {
        ++changes;
        auto next = r;
        next.body = "completed";
        next.terminal = false;
        return next;
    });
    ASSERT_TRUE(later) << later.error();
    EXPECT_FALSE(*later);
    EXPECT_EQ(changes, 0) << "a terminal record's change is never even asked";
    auto const found = tasks.find("t");
    ASSERT_TRUE(found);
    EXPECT_EQ(found->body, "cancelled");
    EXPECT_TRUE(found->terminal);

    auto born_terminal = task_of("u", "alice", "failed");
    born_terminal.terminal = true;
    ASSERT_EQ(tasks.create(born_terminal), task_store::created::ok);
    EXPECT_FALSE(tasks.update("u", [&](task_record const& r) -> std::optional<task_record> {
        ++changes;
        return r;
    }));
    EXPECT_EQ(changes, 0);
}

TYPED_TEST(TaskStore, UpdateOfAnUnknownIdIsNothing) {
    int changes = 0;
    auto const none =
        this->tasks_.try_update("missing", [&](task_record const& r) -> std::optional<task_record> {
            ++changes;
            return r;
        });
    ASSERT_TRUE(none) << none.error();
    EXPECT_FALSE(*none);
    EXPECT_EQ(changes, 0);
}

TYPED_TEST(TaskStore, ListPagesAnOwnersRecordsInIdOrder) {
    auto const& tasks = this->tasks_;
    for (auto const* id : {"t05", "t01", "t03", "t02", "t04"})
        ASSERT_EQ(tasks.create(task_of(id, "alice", std::string("body of ") + id)), task_store::created::ok);
    for (auto const* id : {"t00", "t025", "t99"})
        ASSERT_EQ(tasks.create(task_of(id, "bob")), task_store::created::ok);

    auto const first = tasks.list("alice", "", 2);
    EXPECT_EQ(task_ids(first), (std::vector<std::string>{"t01", "t02"}));
    EXPECT_TRUE(first.more);
    ASSERT_FALSE(first.records.empty());
    EXPECT_EQ(first.records[0].body, "body of t01");
    EXPECT_EQ(first.records[0].owner, "alice");

    auto const second = tasks.list("alice", "t02", 2);
    EXPECT_EQ(task_ids(second), (std::vector<std::string>{"t03", "t04"}));
    EXPECT_TRUE(second.more);
    auto const last = tasks.list("alice", "t04", 2);
    EXPECT_EQ(task_ids(last), std::vector<std::string>{"t05"});
    EXPECT_FALSE(last.more);

    auto const exactly = tasks.list("alice", "t03", 2);
    EXPECT_EQ(task_ids(exactly), (std::vector<std::string>{"t04", "t05"}));
    EXPECT_FALSE(exactly.more) << "a full page with nothing after it";
    auto const between = tasks.list("alice", "t025", 10);
    EXPECT_EQ(task_ids(between), (std::vector<std::string>{"t03", "t04", "t05"}))
        << "`after` need not be an id of the owner's";

    auto const beyond = tasks.list("alice", "t05", 2);
    EXPECT_TRUE(beyond.records.empty());
    EXPECT_FALSE(beyond.more);
    auto const one = tasks.list("alice", "", 0);
    EXPECT_EQ(task_ids(one), std::vector<std::string>{"t01"}) << "a limit of 0 shows one";
    EXPECT_TRUE(one.more);
    auto const nobody = tasks.list("carol", "", 10);
    EXPECT_TRUE(nobody.records.empty());
    EXPECT_FALSE(nobody.more);
}

TYPED_TEST(TaskStore, ListSkipsExpiredRecords) {
    auto const& tasks = this->tasks_;
    auto const soon = std::chrono::floor<std::chrono::milliseconds>(this->clock_.now() + 500ms);
    for (auto const* id : {"t1", "t3"})
        ASSERT_EQ(tasks.create(task_of(id, "alice", "{}", soon)), task_store::created::ok);
    for (auto const* id : {"t2", "t4"})
        ASSERT_EQ(tasks.create(task_of(id, "alice")), task_store::created::ok);
    EXPECT_EQ(task_ids(tasks.list("alice", "", 10)), (std::vector<std::string>{"t1", "t2", "t3", "t4"}));
    this->clock_.pass(700ms);
    auto const first = tasks.list("alice", "", 1);
    EXPECT_EQ(task_ids(first), std::vector<std::string>{"t2"});
    EXPECT_TRUE(first.more);
    auto const second = tasks.list("alice", "t2", 1);
    EXPECT_EQ(task_ids(second), std::vector<std::string>{"t4"});
    EXPECT_FALSE(second.more) << "t3 expired";
}

TYPED_TEST(TaskStore, NoRecordIsOrphanedWhileTheStoreThatMadeItRuns) {
    // In memory, the store that made a record is the only one that reads it: never orphaned at all.
    auto const& tasks = this->tasks_;
    ASSERT_EQ(tasks.create(task_of("t1", "alice", "working")), task_store::created::ok);
    auto done = task_of("t2", "alice", "completed");
    done.terminal = true;
    ASSERT_EQ(tasks.create(done), task_store::created::ok);
    auto const found = tasks.find("t1");
    ASSERT_TRUE(found);
    EXPECT_FALSE(found->orphaned);
    auto const listed = tasks.list("alice", "", 10);
    EXPECT_EQ(task_ids(listed), (std::vector<std::string>{"t1", "t2"}));
    EXPECT_TRUE(orphaned_ids(listed).empty());
    std::optional<bool> seen;
    auto const changed = tasks.update("t1", [&](task_record const& current) -> std::optional<task_record> {
        seen = current.orphaned;
        auto next = current;
        next.body = "still working";
        return next;
    });
    EXPECT_EQ(seen, false);
    ASSERT_TRUE(changed);
    EXPECT_FALSE(changed->orphaned);
}

// ---- what only a shared store shows: several processes, and Redis away
// ---------------------------------------

class RedisTaskStore : public ::testing::Test {
protected:
    void SetUp() override {
        if (auto why = redis_kind::unavailable(); !why.empty())
            GTEST_SKIP() << why;
    }
};

TEST_F(RedisTaskStore, TwoProcessesOnOnePrefixShareEveryRecord) {
    auto const where = redis_kind::fresh_options();
    task_calls const one{redis_kind::make_task_store(where)}, other{redis_kind::make_task_store(where)};
    EXPECT_TRUE(one.store->shared());
    ASSERT_EQ(one.create(task_of("t1", "alice", "working"), 2), task_store::created::ok);

    auto const found = other.find("t1");
    ASSERT_TRUE(found) << "the other process finds it";
    EXPECT_EQ(found->body, "working");
    EXPECT_EQ(other.create(task_of("t1", "bob")), task_store::created::taken);
    ASSERT_EQ(other.create(task_of("t2", "alice"), 2), task_store::created::ok);
    EXPECT_EQ(one.create(task_of("t3", "alice"), 2), task_store::created::owner_full)
        << "the bound counts an owner's records wherever they were made";

    auto const changed = other.update("t1", [](task_record const& r) -> std::optional<task_record> {
        auto next = r;
        next.body = "completed";
        next.terminal = true;
        return next;
    });
    ASSERT_TRUE(changed);
    auto const seen = one.find("t1");
    ASSERT_TRUE(seen);
    EXPECT_EQ(seen->body, "completed");
    EXPECT_TRUE(seen->terminal);
    EXPECT_EQ(task_ids(one.list("alice", "", 10)), (std::vector<std::string>{"t1", "t2"}));

    task_calls const elsewhere{redis_kind::make_task_store(redis_kind::fresh_options())};
    EXPECT_FALSE(elsewhere.find("t1")) << "another key prefix is another deployment";
}

// Where the store that made a record keeps its runner key (task_store.cpp's layout), by asking Redis itself.
std::string runner_key_of(redis_options const& where, std::string const& id) {
    auto const tag = redis_kind::command(where, {"HGET", where.key_prefix + "task:" + id, "runner"});
    EXPECT_EQ(tag.size(), 32u) << "the record of " << id << " names its runner";
    return where.key_prefix + "task-runner:" + tag;
}

// A change that fails the task it is given (as the registry does to an orphaned one), noting what it saw.
task_store::change fail_task(std::vector<bool>& orphaned_seen) {
    return [&orphaned_seen](task_record const& current) -> std::optional<task_record> {
        orphaned_seen.push_back(current.orphaned);
        auto next = current;
        next.body = "failed";
        next.terminal = true;
        return next;
    };
}

// Holds an executor's thread (one store_runtime's) blocked from when it is made until release() or its end.
class executor_block {
public:
    explicit executor_block(boost::asio::any_io_executor const& executor) {
        auto const blocked = std::make_shared<std::promise<void>>();
        boost::asio::post(executor, [blocked, released = released_.get_future().share()] {
            blocked->set_value();
            released.wait();
        });
        blocked->get_future().wait();
    }
    ~executor_block() { release(); }
    executor_block(executor_block const&) = delete;
    executor_block& operator=(executor_block const&) = delete;

    void release() {
        if (!std::exchange(done_, true))
            released_.set_value();
    }

private:
    std::promise<void> released_;
    bool done_ = false;
};

TEST_F(RedisTaskStore, ARecordIsNotOrphanedWhileTheStoreThatMadeItRuns) {
    auto const where = redis_kind::fresh_options();
    task_calls const reader{redis_kind::make_task_store(where)};
    // Each store used the moment it is made: its first create waits for Redis, its runner key goes first.
    std::vector<std::shared_ptr<task_store>> makers;
    for (int i = 0; i < 4; ++i) {
        task_calls const maker{makers.emplace_back(redis_kind::make_task_store(where))};
        auto const id = "t" + std::to_string(i);
        ASSERT_EQ(maker.create(task_of(id, "alice", "working")), task_store::created::ok);
        auto const found = reader.find(id);
        ASSERT_TRUE(found) << id;
        EXPECT_FALSE(found->orphaned) << id << " seen orphaned just after it was made";
    }
    EXPECT_TRUE(orphaned_ids(reader.list("alice", "", 10)).empty());
    std::vector<bool> seen;
    auto const failed = reader.update("t0", fail_task(seen));
    EXPECT_EQ(seen, std::vector<bool>{false});
    ASSERT_TRUE(failed);
    EXPECT_FALSE(failed->orphaned);

    // The key lives 3 s past its last renewal: two seconds on, only a renewal keeps it above one second.
    auto const key = runner_key_of(where, "t1");
    EXPECT_EQ(redis_kind::command(where, {"EXISTS", key}), "1");
    std::this_thread::sleep_for(2s);
    EXPECT_GT(std::stol(redis_kind::command(where, {"PTTL", key})), 1000) << "the runner key was not renewed";
    auto const later = reader.find("t1");
    ASSERT_TRUE(later);
    EXPECT_FALSE(later->orphaned);
}

TEST_F(RedisTaskStore, TheRecordsOfAStoreThatEndedAreOrphanedAtOnceUnlessTerminal) {
    auto const where = redis_kind::fresh_options();
    task_calls const survivor{redis_kind::make_task_store(where)};
    ASSERT_EQ(survivor.create(task_of("mine", "alice", "working")), task_store::created::ok);
    {
        task_calls const ended{redis_kind::make_task_store(where)};
        for (auto const* id : {"running", "waiting", "older"})
            ASSERT_EQ(ended.create(task_of(id, "alice", "working")), task_store::created::ok) << id;
        auto done = task_of("done", "alice", "completed");
        done.terminal = true;
        ASSERT_EQ(ended.create(done), task_store::created::ok);
        auto const found = survivor.find("running");
        ASSERT_TRUE(found);
        EXPECT_FALSE(found->orphaned) << "its maker still runs";
    } // the store ends: its runner key goes with it
    // Within a second and a half: renewed every second for 3 s, its key would otherwise live 2 s more at
    // least.
    EXPECT_TRUE(test::wait_until(
        [&] {
            auto const r = survivor.find("running");
            return r && r->orphaned;
        },
        1500ms))
        << "the ended store's records are not orphaned at once";
    // As a record made before records named their runner.
    EXPECT_EQ(redis_kind::command(where, {"HDEL", where.key_prefix + "task:older", "runner"}), "1");

    auto const done = survivor.find("done");
    ASSERT_TRUE(done);
    EXPECT_TRUE(done->terminal);
    EXPECT_FALSE(done->orphaned) << "a terminal record is never orphaned";
    auto const older = survivor.find("older");
    ASSERT_TRUE(older);
    EXPECT_FALSE(older->orphaned) << "a record naming no runner is not orphaned";
    auto const mine = survivor.find("mine");
    ASSERT_TRUE(mine);
    EXPECT_FALSE(mine->orphaned) << "the survivor's own record";

    auto const listed = survivor.list("alice", "", 10);
    EXPECT_EQ(task_ids(listed), (std::vector<std::string>{"done", "mine", "older", "running", "waiting"}));
    EXPECT_EQ(orphaned_ids(listed), (std::vector<std::string>{"running", "waiting"}));
    auto const paged = survivor.list("alice", "older", 1);
    EXPECT_EQ(orphaned_ids(paged), std::vector<std::string>{"running"});
    EXPECT_TRUE(paged.more);

    // The change is told, and failing the task ends its orphanhood; declining leaves it orphaned.
    std::vector<bool> seen;
    auto const failed = survivor.update("running", fail_task(seen));
    EXPECT_EQ(seen, std::vector<bool>{true});
    ASSERT_TRUE(failed);
    EXPECT_TRUE(failed->terminal);
    EXPECT_FALSE(failed->orphaned);
    auto const after = survivor.find("running");
    ASSERT_TRUE(after);
    EXPECT_EQ(after->body, "failed");
    EXPECT_FALSE(after->orphaned);
    std::optional<bool> declined_seen;
    auto const declined =
        survivor.try_update("waiting", [&](task_record const& current) -> std::optional<task_record> {
            declined_seen = current.orphaned;
            return std::nullopt;
        });
    ASSERT_TRUE(declined) << declined.error();
    EXPECT_FALSE(*declined);
    EXPECT_EQ(declined_seen, true);
    auto const waiting = survivor.find("waiting");
    ASSERT_TRUE(waiting);
    EXPECT_TRUE(waiting->orphaned);
    auto const still =
        survivor.update("waiting", [](task_record const& current) -> std::optional<task_record> {
            auto next = current;
            next.body = "still waiting";
            return next;
        });
    ASSERT_TRUE(still);
    EXPECT_TRUE(still->orphaned) << "changed but not terminal: still nobody's";
}

TEST_F(RedisTaskStore, TheRecordsOfAStoreThatStoppedRenewingAreOrphanedUntilItRenewsAgain) {
    apps::store_runtime stuck_runtime; // first: it outlives the stuck store's connection
    auto const stuck_executor = stuck_runtime.start();
    auto const where = redis_kind::fresh_options();
    task_calls const stuck{make_redis_task_store(stuck_executor, where)};
    task_calls const other{redis_kind::make_task_store(where)};
    ASSERT_EQ(stuck.create(task_of("t", "alice", "working")), task_store::created::ok);
    auto const key = runner_key_of(where, "t");
    auto const before = other.find("t");
    ASSERT_TRUE(before);
    EXPECT_FALSE(before->orphaned);

    // The stuck store's thread blocks, as a process stopped or cut off would: it renews nothing.
    executor_block block(stuck_executor);
    // Its key would lapse 3 s after its last renewal: deleted here instead (again, should a renewal sent
    // just before it froze reach Redis after the first DEL).
    ASSERT_TRUE(test::wait_until(
        [&] {
            redis_kind::command(where, {"DEL", key});
            auto const r = other.find("t");
            return r && r->orphaned;
        },
        5s))
        << "a record whose runner key is gone is not orphaned";
    EXPECT_EQ(orphaned_ids(other.list("alice", "", 10)), std::vector<std::string>{"t"});
    std::optional<bool> seen;
    EXPECT_FALSE(other.update("t", [&](task_record const& current) -> std::optional<task_record> {
        seen = current.orphaned;
        return std::nullopt;
    }));
    EXPECT_EQ(seen, true);

    // Renewing again, it is alive again (whatever its records became meanwhile).
    block.release();
    EXPECT_TRUE(test::wait_until(
        [&] {
            auto const r = other.find("t");
            return r && !r->orphaned;
        },
        5s))
        << "a record whose runner renews its key again is still orphaned";
}

TEST_F(RedisTaskStore, ConcurrentUpdatesFromTwoProcessesLoseNone) {
    auto const where = redis_kind::fresh_options();
    auto const one = redis_kind::make_task_store(where), other = redis_kind::make_task_store(where);
    ASSERT_EQ(task_calls{one}.create(task_of("counter", "alice", "0")), task_store::created::ok);

    constexpr int each = 50;
    // Shared with the callbacks, which might outlive a failed test.
    struct tally {
        std::mutex mutex;
        std::vector<std::string> failures;
        std::atomic<int> answered{0}, written{0}, asked{0};
    };
    auto const counts = std::make_shared<tally>();
    auto const increment = [counts](task_record const& r) -> std::optional<task_record> {
        ++counts->asked;
        auto next = r;
        next.body = std::to_string(std::stoi(r.body) + 1);
        return next;
    };
    auto const done = [counts](task_answer<std::optional<task_record>> a) {
        if (!a) {
            std::lock_guard lock(counts->mutex);
            counts->failures.push_back(a.error());
        } else if (*a) {
            ++counts->written;
        }
        ++counts->answered;
    };
    std::thread second([&] {
        for (int i = 0; i < each; ++i)
            other->update("counter", increment, done);
    });
    for (int i = 0; i < each; ++i)
        one->update("counter", increment, done);
    second.join();
    ASSERT_TRUE(test::wait_until([&] { return counts->answered.load() == 2 * each; }, 20s))
        << counts->answered.load() << " of " << 2 * each << " updates answered";
    EXPECT_TRUE(counts->failures.empty())
        << counts->failures.size() << " failed, the first: " << counts->failures.front();
    EXPECT_EQ(counts->written.load(), 2 * each);
    EXPECT_GE(counts->asked.load(), 2 * each) << "each change asked once, again after each conflict";
    auto const final_value = task_calls{other}.find("counter");
    ASSERT_TRUE(final_value);
    EXPECT_EQ(final_value->body, std::to_string(2 * each));
}

TEST_F(RedisTaskStore, WhileRedisIsAwayEveryOperationFailsAtOnceAndWorksAgainAfter) {
    apps::store_runtime runtime; // first: it outlives the store's connection
    test::redis_server redis;
    task_calls const tasks{make_redis_task_store(runtime.start(), redis.options("away:"))};
    ASSERT_EQ(tasks.create(task_of("t", "alice")), task_store::created::ok);

    redis.kill();
    // The store may send one command before it hears the connection close: that one fails too, when it does.
    auto const started = std::chrono::steady_clock::now();
    auto const made = tasks.try_create(task_of("u", "alice"));
    auto const found = tasks.try_find("t");
    int changes = 0;
    auto const changed = tasks.try_update("t", [&](task_record const& r) -> std::optional<task_record> {
        ++changes;
        return r;
    });
    auto const listed = tasks.try_list("alice", "", 10);
    auto const took = std::chrono::steady_clock::now() - started;
    for (auto const& why :
         {made ? std::string() : made.error(), found ? std::string() : found.error(),
          changed ? std::string() : changed.error(), listed ? std::string() : listed.error()})
        EXPECT_NE(why.find("task store cannot reach Redis at 127.0.0.1:" + std::to_string(redis.port())),
                  std::string::npos)
            << "'" << why << "'";
    EXPECT_EQ(changes, 0);
    EXPECT_LT(took, 2s) << "four operations took " << std::chrono::duration<double>(took).count() << " s";

    redis.start();
    ASSERT_TRUE(test::wait_until([&] { return bool(tasks.try_find("t")); }, 20s, 20ms))
        << "the store never reached Redis again";
    EXPECT_FALSE(tasks.find("t")) << "a killed Redis kept nothing";
    EXPECT_EQ(tasks.create(task_of("t", "alice")), task_store::created::ok);
    auto const made_again = tasks.find("t");
    ASSERT_TRUE(made_again);
    EXPECT_FALSE(made_again->orphaned) << "the runner key is set again as soon as Redis is back";
}

TEST(RedisTaskStoreUnreachable, EveryOperationOfAStoreThatNeverReachedRedisFailsInWords) {
    apps::store_runtime runtime;
    auto where = redis_options{};
    where.port = test::free_loopback_port(); // nothing listens there
    where.min_backoff = 20ms;
    where.max_backoff = 200ms;
    task_calls const tasks{make_redis_task_store(runtime.start(), where)};
    auto const started = std::chrono::steady_clock::now();
    auto const made = tasks.try_create(task_of("t", "alice"));
    auto const found = tasks.try_find("t");
    auto const changed =
        tasks.try_update("t", [](task_record const& r) -> std::optional<task_record> { return r; });
    auto const listed = tasks.try_list("alice", "", 10);
    EXPECT_LT(std::chrono::steady_clock::now() - started, 3s);
    for (auto const& why :
         {made ? std::string() : made.error(), found ? std::string() : found.error(),
          changed ? std::string() : changed.error(), listed ? std::string() : listed.error()})
        EXPECT_NE(why.find("task store cannot reach Redis at 127.0.0.1:" + std::to_string(where.port)),
                  std::string::npos)
            << "'" << why << "'";
}

TEST_F(RedisTaskStore, AStoreDroppedWithCallsPendingAnswersThemAll) {
    auto const answered = std::make_shared<std::atomic<int>>(0);
    {
        auto store = redis_kind::make_task_store();
        auto const count = [answered](auto) {
            ++*answered;
        };
        store->create(task_of("t", "alice"), 10, count);
        store->find("t", count);
        store->update(
            "t", [](task_record const& r) -> std::optional<task_record> { return r; }, count);
        store->list("alice", "", 10, count);
    } // the last reference goes while the calls are on their way
    EXPECT_TRUE(test::wait_until([&] { return answered->load() == 4; }, 20s)) << answered->load() << " of 4";
}

} // namespace
} // namespace duet::store::checks
