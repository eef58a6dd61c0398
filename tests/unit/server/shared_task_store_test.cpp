// Two servers sharing one Redis task store (server_options::task_store, one store object each, as two
// processes serving one endpoint would have), but each on an in-memory event bus of its own: no announcement
// ever passes between them, as when Redis pub/sub (at most once) drops one. What reaches the process running
// a task's handler from a request another process took does so through the task's record alone.
//
// A runs every handler; the client follows the task through B. Both connections run on the test's thread,
// each pumped while the test waits on the other (A's handler waits, reads the record and completes while the
// test talks to B). Every wait is bounded.
#include <duet/protocol/tasks.hpp>
#include <duet/server/request_context.hpp>
#include <duet/server/server.hpp>
#include <duet/store/memory.hpp>
#include <duet/store/redis.hpp>

#include "common/store_runtime.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "support/redis_server.hpp"
#include "support/wait.hpp"
#include "unit/server/harness.hpp"
#include "unit/server/mrtr_support.hpp"
#include "unit/server/test_server.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace duet_shared_task_store_test {

namespace bj = boost::json;
using namespace duet::test;
using namespace std::chrono_literals;
using duet::protocol::task_support;
using duet::server::input_request;
using duet::server::request_context;
using duet::server::server;
using duet::server::tool_result;

/// The bound of every wait: far beyond the second a handler waits before it reads its task's record.
constexpr std::chrono::milliseconds patience = 10s;

/// What one server's handlers did: how many started and ended. The gated tool waits until `open` (or its
/// call is cancelled).
struct handler_log {
    std::atomic<int> entered{0};
    std::atomic<int> left{0};
    std::atomic<bool> open{false};
};

duet::server::tool shared_task_tool(std::string name) {
    auto t = plain_tool(std::move(name));
    t.tasks = task_support::optional;
    t.task_after = std::chrono::milliseconds(0); // a task from the start
    return t;
}

/// ask_name: asks the client's name (elicitation, key "user_name") and answers "Hello, <name>!". gated: waits
/// on the log's gate, then answers "done".
void add_shared_task_tools(server& srv, std::shared_ptr<handler_log> const& log) {
    srv.add_tool(
        shared_task_tool("ask_name"),
        [log](bj::object const&, request_context& ctx) -> boost::asio::awaitable<tool_result> {
            auto keep = log;
            ++keep->entered;
            input_request question{"user_name", "elicitation/create", form("What is your name?", "name")};
            auto answer = co_await ctx.async_input(std::move(question));
            ++keep->left;
            co_return tool_result::text("Hello, " + outcome(answer, "name") + "!");
        });
    srv.add_tool(shared_task_tool("gated"),
                 [log](bj::object const&, request_context& ctx) -> boost::asio::awaitable<tool_result> {
                     auto keep = log;
                     ++keep->entered;
                     boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
                     // Bounded: a test that never opens the gate still ends.
                     for (int i = 0; i < 6000 && !keep->open && !ctx.cancelled(); ++i) {
                         timer.expires_after(std::chrono::milliseconds(5));
                         co_await timer.async_wait(boost::asio::use_awaitable);
                     }
                     ++keep->left;
                     co_return tool_result::text("done");
                 });
}

/// A modern request's capabilities: elicitation (the question) and the tasks extension.
bj::object shared_task_caps() {
    auto caps = all_caps();
    caps["extensions"] = bj::object{{duet::protocol::tasks_extension, bj::object{}}};
    return caps;
}

std::string string_member(bj::object const& o, std::string_view key) {
    auto const* v = o.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

class SharedTaskStore : public testing::Test {
protected:
    void SetUp() override {
        if (auto why = redis_server::missing(); !why.empty())
            GTEST_SKIP() << why;
        redis_ = std::make_unique<redis_server>();
        a_.emplace(options_on_the_shared_store());
        b_.emplace(options_on_the_shared_store());
        add_shared_task_tools(*a_, log_a_);
        add_shared_task_tools(*b_, log_b_);
        at_a_.emplace(*a_);
        at_b_.emplace(*b_);
    }

    void TearDown() override {
        // Whatever a failed test left waiting on a gate ends before the connections go.
        log_a_->open = true;
        log_b_->open = true;
    }

    /// A server on its own Redis task store (same Redis, same key prefix, same topic as the other's) and on
    /// an in-memory event bus of its own.
    duet::server::server_options options_on_the_shared_store() {
        auto o = test_options();
        o.task_ttl = std::chrono::minutes(2);
        o.task_poll_interval = std::chrono::milliseconds(250);
        o.event_topic = "shared-task-store-endpoint";
        o.event_bus = duet::store::make_memory_event_bus();
        o.task_store =
            duet::store::make_redis_task_store(runtime_.start(), redis_->options("duet-shared-tasks:"));
        return o;
    }

    /// Runs both connections' ready work.
    void pump() {
        at_a_->io().poll();
        at_b_->io().poll();
    }

    /// Sends a modern request to `h` and runs both connections until its answer (null, and a test failure,
    /// after `patience`).
    bj::value call(harness& h, std::string_view method, bj::object params = {}) {
        bj::value const id = next_id_++;
        h.send(modern_request(id, method, std::move(params), shared_task_caps()));
        std::optional<bj::value> answer;
        bool const answered = wait_until(
            [&] {
                pump();
                for (auto const& m : h.messages())
                    if (is_response_to(m, id))
                        answer = m;
                return answer.has_value();
            },
            patience, std::chrono::milliseconds(2));
        EXPECT_TRUE(answered) << method << " was never answered";
        return answer.value_or(bj::value{});
    }

    bj::object get(harness& h, std::string const& task) {
        return result_of(call(h, "tasks/get", {{"taskId", task}}));
    }

    /// tasks/get at `h` until the task's status is `want` (or another terminal one); the last task seen.
    bj::object get_until(harness& h, std::string const& task, std::string_view want) {
        bj::object last;
        bool const reached = wait_until(
            [&] {
                last = get(h, task);
                auto const s = string_member(last, "status");
                return s == want || s == "completed" || s == "failed" || s == "cancelled";
            },
            patience, std::chrono::milliseconds(5));
        EXPECT_TRUE(reached) << "task " << task << " never reached " << want << "; last " << bj::value(last);
        EXPECT_EQ(string_member(last, "status"), want) << bj::value(last);
        return last;
    }

    /// A modern acknowledgement: an empty result but for resultType "complete" and `_meta`.
    static void expect_ack(bj::value const& response) {
        auto const r = result_of(response);
        EXPECT_EQ(string_member(r, "resultType"), "complete") << response;
        for (auto const& kv : r)
            EXPECT_TRUE(kv.key() == "resultType" || kv.key() == "_meta") << kv.key() << " in " << response;
    }

    // Destroyed in reverse: the connections, the servers (and with them the stores), the thread the stores
    // talk to Redis on, Redis.
    std::unique_ptr<redis_server> redis_;
    duet::apps::store_runtime runtime_;
    std::shared_ptr<handler_log> log_a_ = std::make_shared<handler_log>();
    std::shared_ptr<handler_log> log_b_ = std::make_shared<handler_log>();
    std::optional<server> a_;
    std::optional<server> b_;
    std::optional<harness> at_a_;
    std::optional<harness> at_b_;
    std::int64_t next_id_ = 1;
};

// tasks/update at B keeps what it took in the task's record; A's handler, waiting on its question and never
// told (no bus between them), reads the record when its second's wait runs out and goes on with the answer.
TEST_F(SharedTaskStore, AnAnswerTakenElsewhereReachesTheHandlerWithoutTheBus) {
    auto const created = result_of(call(*at_a_, "tools/call", call_params("ask_name")));
    EXPECT_EQ(string_member(created, "resultType"), "task") << bj::value(created);
    auto const id = string_member(created, "taskId");
    ASSERT_EQ(id.size(), 32u) << bj::value(created);

    // B reads the shared record: the question A's handler asked.
    auto const asking = get_until(*at_b_, id, "input_required");
    auto const* requests = asking.if_contains("inputRequests");
    ASSERT_TRUE(requests && requests->is_object() && requests->get_object().size() == 1) << bj::value(asking);
    auto const& asked = *requests->get_object().begin();
    std::string const key(asked.key());
    EXPECT_EQ(key, "user_name") << bj::value(asking);
    EXPECT_EQ(string_member(asked.value().as_object(), "method"), "elicitation/create") << bj::value(asking);

    expect_ack(
        call(*at_b_, "tasks/update", {{"taskId", id}, {"inputResponses", {{key, accepted("name", "Ada")}}}}));

    for (auto* h : {&*at_a_, &*at_b_}) {
        auto const done = get_until(*h, id, "completed");
        auto const* result = done.if_contains("result");
        ASSERT_TRUE(result && result->is_object()) << bj::value(done);
        EXPECT_EQ(first_text(result->get_object()), "Hello, Ada!") << bj::value(done);
    }
    // The handler ran on A alone, and once: the answer given to B crossed to it.
    EXPECT_EQ(log_a_->entered, 1);
    EXPECT_EQ(log_a_->left, 1);
    EXPECT_EQ(log_b_->entered, 0);
}

// A tasks/cancel at B makes the shared record cancelled (what A and B both report from then on); A's handler
// hears it without the bus, from A's own look at the tasks it runs, and its end changes nothing of the
// record.
TEST_F(SharedTaskStore, ACancelTakenElsewhereReachesTheHandlerWithoutTheBus) {
    auto const created = result_of(call(*at_a_, "tools/call", call_params("gated")));
    auto const id = string_member(created, "taskId");
    ASSERT_EQ(id.size(), 32u) << bj::value(created);
    ASSERT_TRUE(wait_until(
        [&] {
            pump();
            return log_a_->entered == 1;
        },
        patience, std::chrono::milliseconds(2)))
        << "the handler never started on A";
    EXPECT_EQ(string_member(get(*at_b_, id), "status"), "working");

    expect_ack(call(*at_b_, "tasks/cancel", {{"taskId", id}}));
    for (auto* h : {&*at_b_, &*at_a_}) {
        auto const now = get(*h, id);
        EXPECT_EQ(string_member(now, "status"), "cancelled") << bj::value(now);
    }

    // No announcement reaches A, yet its handler hears the cancellation (its look at the tasks it runs, every
    // 2 s) and ends with its gate still shut.
    ASSERT_TRUE(wait_until(
        [&] {
            pump();
            return log_a_->left == 1;
        },
        patience, std::chrono::milliseconds(2)))
        << "the handler on A never heard the cancellation taken at B";
    EXPECT_FALSE(log_a_->open);
    // Its outcome goes to the store once it has ended: a few looks at A and at B after that give a late write
    // every chance to show.
    for (int round = 0; round < 10; ++round)
        for (auto* h : {&*at_a_, &*at_b_}) {
            auto const after = get(*h, id);
            EXPECT_EQ(string_member(after, "status"), "cancelled") << bj::value(after);
            EXPECT_FALSE(after.contains("result")) << bj::value(after);
        }
    EXPECT_EQ(log_b_->entered, 0);
}

} // namespace duet_shared_task_store_test
