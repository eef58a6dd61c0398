// Tasks in process, in both eras (protocol/tasks.hpp, server.hpp's "Tasks"): a tools/call whose tool allows
// tasks answers with a task handle while its handler goes on. Modern requests that declare the extension
// io.modelcontextprotocol/tasks get a CreateTaskResult (at once, or after the tool's task_after, or when the
// handler calls async_become_task()) and follow it with tasks/get (the DetailedTask: inputRequests, result or
// error inline), tasks/update (answers to the task's questions) and tasks/cancel. A 2025-11-25 session asks
// with params.task and follows with tasks/get, tasks/result (blocks until the task ends), tasks/list and
// tasks/cancel, hears notifications/tasks/status, and gets a task's questions as real requests tied to it by
// _meta related-task. Tasks belong to whoever made them, expire after their TTL, and are bounded per caller.
//
// Handlers wait on a gate the test opens (never on a guessed time), so each status is observed while it
// holds.
#include <duet/protocol/tasks.hpp>
#include <duet/server/server.hpp>

#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "support/schema_validator.hpp"
#include "support/wait.hpp"
#include "unit/server/harness.hpp"
#include "unit/server/mrtr_support.hpp"
#include "unit/server/test_server.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace duet_tasks_test {

namespace bj = boost::json;
using namespace duet::test;
using namespace std::chrono_literals;
using duet::protocol::task_support;
using duet::server::input_request;
using duet::server::request_context;
using duet::server::server;
using duet::server::server_options;
using duet::server::tool_result;

constexpr std::string_view related_task = "io.modelcontextprotocol/related-task";
constexpr std::string_view unknown_task = "0123456789abcdef0123456789abcdef";

/// What the test controls and observes of the gated handlers: they wait until `open` (or their call is
/// cancelled), counting who came and went.
struct gate {
    std::atomic<bool> open{false};
    std::atomic<int> entered{0};
    std::atomic<int> left{0};
    std::atomic<bool> saw_cancelled{false};
    std::atomic<bool> became_task{false};
    std::string task_id; ///< what ctx.task_id() said after async_become_task() (written on the test's thread)
};

/// Opens the gate when the test ends, however it ends, so the handlers finish before the harness goes:
/// declare it after the harness.
struct open_at_end {
    gate& g;
    ~open_at_end() { g.open = true; }
};

boost::asio::awaitable<void> await_gate(gate& g, request_context& ctx) {
    boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
    // Bounded: a test that never opens the gate still ends.
    for (int i = 0; i < 12000 && !g.open && !ctx.cancelled(); ++i) {
        timer.expires_after(std::chrono::milliseconds(5));
        co_await timer.async_wait(boost::asio::use_awaitable);
    }
    if (ctx.cancelled())
        g.saw_cancelled = true;
}

duet::server::tool task_tool(std::string name, task_support support,
                             std::chrono::milliseconds after = std::chrono::milliseconds(0)) {
    auto t = plain_tool(std::move(name));
    t.tasks = support;
    t.task_after = after;
    return t;
}

/// slow (optional) / slow_required (required) / slow_forbidden (forbidden): wait on the gate, then "done
/// <text>" (or "late" when cancelled). quick: answers at once. sometimes_slow (task_after 500 ms): waits only
/// when its argument wait is true. ask_then_task: asks a name in the request's own rounds, then becomes a
/// task and waits on the gate. ask_in_task / ask_two: ask one / two questions. fails: a protocol_error.
/// tool_error: an isError result. progress: reports "one of four", then waits on the gate.
void add_task_tools(server& srv, std::shared_ptr<gate> const& g) {
    auto const gated = [g](bj::object const& args,
                           request_context& ctx) -> boost::asio::awaitable<tool_result> {
        auto keep = g;
        ++keep->entered;
        co_await await_gate(*keep, ctx);
        ++keep->left;
        if (ctx.cancelled())
            co_return tool_result::text("late");
        auto const* t = args.if_contains("text");
        co_return tool_result::text("done " +
                                    (t && t->is_string() ? std::string(t->get_string()) : std::string()));
    };
    srv.add_tool(task_tool("slow", task_support::optional), gated);
    srv.add_tool(task_tool("slow_required", task_support::required), gated);
    srv.add_tool(task_tool("slow_forbidden", task_support::forbidden), gated);
    srv.add_tool(task_tool("quick", task_support::optional),
                 [](bj::object const&, request_context&) -> boost::asio::awaitable<tool_result> {
                     co_return tool_result::text("quick result");
                 });
    srv.add_tool(task_tool("sometimes_slow", task_support::optional, std::chrono::milliseconds(500)),
                 [g](bj::object const& args, request_context& ctx) -> boost::asio::awaitable<tool_result> {
                     auto keep = g;
                     auto const* wait = args.if_contains("wait");
                     if (wait && wait->is_bool() && wait->get_bool())
                         co_await await_gate(*keep, ctx);
                     co_return tool_result::text("finished");
                 });
    srv.add_tool(
        task_tool("ask_then_task", task_support::optional, std::chrono::hours(1)),
        [g](bj::object const&, request_context& ctx) -> boost::asio::awaitable<tool_result> {
            auto keep = g;
            input_request question{"user_name", "elicitation/create", form("What is your name?", "name")};
            auto answer = co_await ctx.async_input(std::move(question));
            bool const became = co_await ctx.async_become_task();
            keep->became_task = became;
            keep->task_id = ctx.task_id().value_or("");
            co_await await_gate(*keep, ctx);
            co_return tool_result::text("Hello, " + outcome(answer, "name") + "!");
        });
    srv.add_tool(
        task_tool("ask_in_task", task_support::optional),
        [](bj::object const&, request_context& ctx) -> boost::asio::awaitable<tool_result> {
            input_request question{"user_name", "elicitation/create", form("What is your name?", "name")};
            auto answer = co_await ctx.async_input(std::move(question));
            co_return tool_result::text("Hello, " + outcome(answer, "name") + "!");
        });
    srv.add_tool(task_tool("ask_two", task_support::optional),
                 [](bj::object const&, request_context& ctx) -> boost::asio::awaitable<tool_result> {
                     std::vector<input_request> questions;
                     questions.push_back({"first", "elicitation/create", form("First?", "a")});
                     questions.push_back({"second", "elicitation/create", form("Second?", "b")});
                     auto answers = co_await ctx.async_inputs(std::move(questions));
                     co_return tool_result::text("a=" + outcome(answers.at(0), "a") +
                                                 ";b=" + outcome(answers.at(1), "b"));
                 });
    srv.add_tool(task_tool("fails", task_support::optional),
                 [](bj::object const&, request_context&) -> boost::asio::awaitable<tool_result> {
                     throw duet::server::protocol_error(
                         duet::jsonrpc::error_object{-32042, "Widget jammed", bj::object{{"widget", 7}}});
                     co_return tool_result::text("unreachable");
                 });
    srv.add_tool(task_tool("tool_error", task_support::optional),
                 [](bj::object const&, request_context&) -> boost::asio::awaitable<tool_result> {
                     co_return tool_result::error("it broke");
                 });
    srv.add_tool(task_tool("progress", task_support::optional),
                 [g](bj::object const&, request_context& ctx) -> boost::asio::awaitable<tool_result> {
                     auto keep = g;
                     ctx.report_progress(1, 4, "one of four");
                     co_await await_gate(*keep, ctx);
                     co_return tool_result::text("all four");
                 });
}

server_options task_options(std::size_t page_size = 100) {
    auto o = test_options(page_size);
    o.task_ttl = std::chrono::minutes(2);
    o.task_poll_interval = std::chrono::milliseconds(250);
    return o;
}

/// A modern request's capabilities declaring the tasks extension (and elicitation, for the asking tools).
bj::object task_caps() {
    auto caps = all_caps();
    caps["extensions"] = bj::object{{duet::protocol::tasks_extension, bj::object{}}};
    return caps;
}

std::string status_of(bj::object const& task) {
    auto const* s = task.if_contains("status");
    return s && s->is_string() ? std::string(s->get_string()) : std::string("(no status)");
}

std::string task_id_of(bj::object const& task) {
    auto const* id = task.if_contains("taskId");
    return id && id->is_string() ? std::string(id->get_string()) : std::string();
}

bool terminal(std::string_view status) {
    return status == "completed" || status == "failed" || status == "cancelled";
}

/// The keys of an object, sorted.
std::vector<std::string> keys(bj::value const& v) {
    std::vector<std::string> out;
    if (auto const* o = v.if_object())
        for (auto const& kv : *o)
            out.emplace_back(kv.key());
    std::sort(out.begin(), out.end());
    return out;
}

/// Runs the connection's ready work until `done` holds (bounded far beyond need).
template<class Predicate>
bool run_until(harness& h, Predicate&& done, std::chrono::milliseconds limit = 20s) {
    return wait_until(
        [&] {
            h.io().poll();
            return done();
        },
        limit, std::chrono::milliseconds(2));
}

std::int64_t next_request_id = 100;

/// A client of one era on one harness: numbered requests, each awaited.
class caller {
public:
    caller(harness& h, bool modern, bj::object caps = task_caps())
        : h_(h), modern_(modern), caps_(std::move(caps)) {}

    /// Sends a request and returns its id, without waiting for the answer.
    bj::value send(std::string_view method, bj::object params = {}) {
        bj::value id = next_request_id++; // unique across callers sharing a harness
        h_.send(modern_ ? modern_request(id, method, std::move(params), caps_)
                        : legacy_request(id, method, std::move(params)));
        return id;
    }
    bj::value call(std::string_view method, bj::object params = {}) {
        auto const id = send(method, std::move(params));
        return h_.response(id);
    }
    bj::value get(std::string const& task) { return call("tasks/get", {{"taskId", task}}); }

    /// tasks/get until the task's status is `want` (stopping early at another terminal status); the last
    /// task seen.
    bj::object get_until(std::string const& task, std::string_view want) {
        bj::object last;
        bool const reached = wait_until(
            [&] {
                h_.io().poll();
                last = result_of(get(task));
                auto const s = status_of(last);
                return s == want || terminal(s);
            },
            20s, std::chrono::milliseconds(2));
        EXPECT_TRUE(reached) << "task " << task << " never reached " << want << "; last " << bj::value(last);
        EXPECT_EQ(status_of(last), want) << bj::value(last);
        return last;
    }

private:
    harness& h_;
    bool modern_;
    bj::object caps_;
};

/// Opens a legacy session at `version`; the initialize result.
bj::object open_legacy(harness& h, std::string_view version, bj::object caps = all_caps()) {
    h.send(initialize_request("init", version, std::move(caps)));
    auto r = result_of(h.response("init"));
    h.send(initialized_notification());
    return r;
}

/// params.task of a 2025-11-25 tools/call.
bj::object legacy_task_call(std::string_view tool, std::int64_t ttl = 60000, bj::object arguments = {}) {
    auto p = call_params(tool, std::move(arguments));
    p["task"] = bj::object{{"ttl", ttl}};
    return p;
}

/// The Task of a 2025-11-25 CreateTaskResult ({task: {...}}), checked for its shape.
bj::object legacy_created(bj::value const& response) {
    auto const r = result_of(response);
    auto const* t = r.if_contains("task");
    if (!t || !t->is_object()) {
        ADD_FAILURE() << "no task in " << response;
        return {};
    }
    auto const& task = t->get_object();
    EXPECT_EQ(task_id_of(task).size(), 32u) << response;
    EXPECT_TRUE(task.contains("createdAt") && task.contains("lastUpdatedAt")) << response;
    EXPECT_TRUE(task.contains("ttl") && task.contains("pollInterval")) << response;
    EXPECT_FALSE(task.contains("ttlMs") || task.contains("pollIntervalMs")) << response;
    EXPECT_FALSE(r.contains("content")) << response;
    EXPECT_FALSE(r.contains("resultType")) << response;
    return task;
}

/// A modern CreateTaskResult, checked for its shape.
bj::object modern_created(bj::value const& response) {
    auto const r = result_of(response);
    EXPECT_EQ(r.if_contains("resultType") ? r.at("resultType") : bj::value{}, "task") << response;
    EXPECT_EQ(task_id_of(r).size(), 32u) << response;
    EXPECT_TRUE(r.contains("createdAt") && r.contains("lastUpdatedAt")) << response;
    EXPECT_FALSE(r.contains("content")) << response;
    EXPECT_FALSE(r.contains("ttl") || r.contains("pollInterval")) << response;
    return r;
}

/// The `_meta` related-task of an object, or null.
bj::value related_task_of(bj::object const& o) {
    auto const* meta = o.if_contains("_meta");
    auto const* rt = meta && meta->is_object() ? meta->get_object().if_contains(related_task) : nullptr;
    return rt ? *rt : bj::value{};
}

/// A modern acknowledgement: an empty result but for resultType "complete" and `_meta`.
void expect_ack(bj::value const& response) {
    auto const r = result_of(response);
    EXPECT_EQ(r.if_contains("resultType") ? r.at("resultType") : bj::value{}, "complete") << response;
    for (auto const& kv : r)
        EXPECT_TRUE(kv.key() == "resultType" || kv.key() == "_meta") << kv.key() << " in " << response;
}

bool is_task_status(bj::value const& m, std::string_view task, std::string_view status) {
    if (!is_notification(m, "notifications/tasks/status"))
        return false;
    auto const& p = m.as_object().at("params").as_object();
    return task_id_of(p) == task && status_of(p) == status;
}

class Tasks : public testing::Test {
protected:
    Tasks() : gate_(std::make_shared<gate>()), srv_(task_options()) {
        add_test_features(srv_);
        add_task_tools(srv_, gate_);
    }
    std::shared_ptr<gate> gate_;
    server srv_;
};

// ---- modern ----------------------------------------------------------------------------------------------

TEST_F(Tasks, ModernCallBecomesATaskThatTasksGetFindsAtOnce) {
    harness h(srv_);
    open_at_end release{*gate_};
    caller c(h, true);
    auto const created = modern_created(c.call("tools/call", call_params("slow", {{"text", "x"}})));
    EXPECT_EQ(status_of(created), "working");
    EXPECT_EQ(created.at("ttlMs"), 120000) << bj::value(created);
    EXPECT_EQ(created.at("pollIntervalMs"), 250) << bj::value(created);
    auto const id = task_id_of(created);

    auto const now = c.get(id);
    auto const task = result_of(now);
    EXPECT_EQ(status_of(task), "working") << now;
    EXPECT_EQ(task_id_of(task), id);
    EXPECT_EQ(task.if_contains("resultType") ? task.at("resultType") : bj::value{}, "complete") << now;
    EXPECT_FALSE(task.contains("result")) << now;
    // The task's own TTL and poll interval, never cache hints.
    EXPECT_EQ(task.if_contains("ttlMs") ? task.at("ttlMs") : bj::value{}, 120000) << now;
    EXPECT_EQ(task.if_contains("pollIntervalMs") ? task.at("pollIntervalMs") : bj::value{}, 250) << now;
    EXPECT_FALSE(task.contains("cacheScope")) << now;
    EXPECT_EQ(gate_->entered, 1);

    gate_->open = true;
    auto const done = c.get_until(id, "completed");
    auto const* result = done.if_contains("result");
    ASSERT_TRUE(result && result->is_object()) << bj::value(done);
    EXPECT_EQ(first_text(result->get_object()), "done x") << bj::value(done);
    EXPECT_FALSE(is_error_result(result->get_object()));
}

TEST_F(Tasks, ModernCallWithoutTheExtensionAnswersPlainly) {
    harness h(srv_);
    open_at_end release{*gate_};
    gate_->open = true;
    caller c(h, true, all_caps());
    auto const r = c.call("tools/call", call_params("slow", {{"text", "y"}}));
    expect_modern_result(r, false);
    EXPECT_EQ(call_text(r), "done y");
    EXPECT_FALSE(result_of(r).contains("taskId")) << r;
}

TEST_F(Tasks, ModernRequiredToolWithoutTheExtensionIsRefused) {
    harness h(srv_);
    caller c(h, true, all_caps());
    auto const r = c.call("tools/call", call_params("slow_required"));
    expect_error(r, -32021);
    EXPECT_EQ(gate_->entered, 0) << "the handler ran for a refused call";
}

TEST_F(Tasks, ModernTasksMethodsWithoutTheExtensionAreRefused) {
    harness h(srv_);
    caller with(h, true);
    auto const id = task_id_of(modern_created(with.call("tools/call", call_params("quick"))));
    caller without(h, true, all_caps());
    expect_error(without.get(id), -32021);
    expect_error(without.call("tasks/cancel", {{"taskId", id}}), -32021);
}

TEST_F(Tasks, ModernTaskAfterAnswersAQuickCallPlainly) {
    harness h(srv_);
    caller c(h, true);
    auto const r = c.call("tools/call", call_params("sometimes_slow", {{"wait", false}}));
    expect_modern_result(r, false);
    EXPECT_EQ(call_text(r), "finished");
}

TEST_F(Tasks, ModernTaskAfterMakesALongerCallATask) {
    harness h(srv_);
    open_at_end release{*gate_};
    caller c(h, true);
    auto const sent = std::chrono::steady_clock::now();
    auto const r = c.call("tools/call", call_params("sometimes_slow", {{"wait", true}}));
    auto const waited = std::chrono::steady_clock::now() - sent;
    auto const created = modern_created(r);
    EXPECT_GE(waited, std::chrono::milliseconds(500)) << "a task before task_after elapsed";
    auto const id = task_id_of(created);
    EXPECT_EQ(status_of(result_of(c.get(id))), "working");
    gate_->open = true;
    auto const done = c.get_until(id, "completed");
    EXPECT_EQ(first_text(done.at("result").as_object()), "finished") << bj::value(done);
}

// SEP-2663 §Task Creation: input gathered in the request's own rounds, then a task that uses it.
TEST_F(Tasks, ModernBecomeTaskAfterAnInputRound) {
    harness h(srv_);
    open_at_end release{*gate_};
    caller c(h, true);
    auto const params = call_params("ask_then_task");
    auto const first = expect_input_required(c.call("tools/call", params));
    EXPECT_EQ(keys_of(first), std::vector<std::string>{"user_name"});
    EXPECT_FALSE(gate_->became_task) << "the first run got past its question";

    auto const r = c.call("tools/call", retry(params, {{"user_name", accepted("name", "Ada")}}, first));
    auto const created = modern_created(r);
    auto const id = task_id_of(created);
    EXPECT_TRUE(gate_->became_task) << "async_become_task() returned false";
    EXPECT_EQ(gate_->task_id, id) << "task_id() does not name the task the client got";
    EXPECT_EQ(status_of(result_of(c.get(id))), "working");

    gate_->open = true;
    auto const done = c.get_until(id, "completed");
    EXPECT_EQ(first_text(done.at("result").as_object()), "Hello, Ada!") << bj::value(done);
}

TEST_F(Tasks, ModernElicitationInATaskIsAnsweredThroughTasksUpdate) {
    harness h(srv_);
    caller c(h, true);
    auto const id = task_id_of(modern_created(c.call("tools/call", call_params("ask_in_task"))));
    auto const asking = c.get_until(id, "input_required");
    bj::value const question = bj::object{
        {"user_name", {{"method", "elicitation/create"}, {"params", form("What is your name?", "name")}}}};
    EXPECT_EQ(asking.if_contains("inputRequests") ? asking.at("inputRequests") : bj::value{}, question)
        << bj::value(asking);

    // A malformed answer refuses the update and changes nothing.
    auto const bad =
        c.call("tasks/update", {{"taskId", id}, {"inputResponses", {{"user_name", {{"action", "maybe"}}}}}});
    expect_error(bad, -32602);
    auto const still = result_of(c.get(id));
    EXPECT_EQ(status_of(still), "input_required") << bj::value(still);
    EXPECT_EQ(still.if_contains("inputRequests") ? still.at("inputRequests") : bj::value{}, question);

    // An answer to nothing asked is ignored: acknowledged, and the task still asks.
    expect_ack(c.call("tasks/update",
                      {{"taskId", id}, {"inputResponses", {{"nonsense", accepted("name", "Eve")}}}}));
    auto const ignored = result_of(c.get(id));
    EXPECT_EQ(status_of(ignored), "input_required") << bj::value(ignored);
    EXPECT_EQ(ignored.if_contains("inputRequests") ? ignored.at("inputRequests") : bj::value{}, question);

    expect_ack(c.call(
        "tasks/update",
        {{"taskId", id},
         {"inputResponses", {{"user_name", accepted("name", "Ada")}, {"other", accepted("x", "y")}}}}));
    auto const done = c.get_until(id, "completed");
    EXPECT_FALSE(done.contains("inputRequests")) << bj::value(done);
    EXPECT_EQ(first_text(done.at("result").as_object()), "Hello, Ada!") << bj::value(done);
}

TEST_F(Tasks, ModernPartialUpdateKeepsAskingTheRest) {
    harness h(srv_);
    caller c(h, true);
    auto const id = task_id_of(modern_created(c.call("tools/call", call_params("ask_two"))));
    auto const asking = c.get_until(id, "input_required");
    EXPECT_EQ(keys(asking.at("inputRequests")), (std::vector<std::string>{"first", "second"}))
        << bj::value(asking);

    expect_ack(c.call("tasks/update", {{"taskId", id}, {"inputResponses", {{"first", accepted("a", "x")}}}}));
    auto const half = result_of(c.get(id));
    EXPECT_EQ(status_of(half), "input_required") << bj::value(half);
    EXPECT_EQ(keys(half.if_contains("inputRequests") ? half.at("inputRequests") : bj::value{}),
              std::vector<std::string>{"second"})
        << bj::value(half);

    expect_ack(
        c.call("tasks/update", {{"taskId", id}, {"inputResponses", {{"second", accepted("b", "y")}}}}));
    auto const done = c.get_until(id, "completed");
    EXPECT_EQ(first_text(done.at("result").as_object()), "a=x;b=y") << bj::value(done);
}

TEST_F(Tasks, ModernCancelIsStickyAndReachesTheHandler) {
    harness h(srv_);
    open_at_end release{*gate_};
    caller c(h, true);
    auto const id = task_id_of(modern_created(c.call("tools/call", call_params("slow"))));
    ASSERT_TRUE(run_until(h, [&] { return gate_->entered == 1; }));
    expect_ack(c.call("tasks/cancel", {{"taskId", id}}));
    EXPECT_EQ(status_of(result_of(c.get(id))), "cancelled");

    ASSERT_TRUE(run_until(h, [&] { return gate_->left == 1; })) << "the handler never ended";
    EXPECT_TRUE(gate_->saw_cancelled) << "the handler did not see cancelled()";
    // The handler's own result came after the cancellation: it changes nothing.
    auto const after = result_of(c.get(id));
    EXPECT_EQ(status_of(after), "cancelled") << bj::value(after);
    EXPECT_FALSE(after.contains("result")) << bj::value(after);
    // The extension acknowledges a cancel of a finished task too.
    expect_ack(c.call("tasks/cancel", {{"taskId", id}}));
    EXPECT_EQ(status_of(result_of(c.get(id))), "cancelled");
}

TEST_F(Tasks, ModernCancelWhileAskingWithdrawsTheQuestions) {
    harness h(srv_);
    caller c(h, true);
    auto const id = task_id_of(modern_created(c.call("tools/call", call_params("ask_in_task"))));
    c.get_until(id, "input_required");
    expect_ack(c.call("tasks/cancel", {{"taskId", id}}));
    auto const after = result_of(c.get(id));
    EXPECT_EQ(status_of(after), "cancelled") << bj::value(after);
    EXPECT_FALSE(after.contains("inputRequests")) << bj::value(after);
    // An answer now changes nothing.
    expect_ack(c.call("tasks/update",
                      {{"taskId", id}, {"inputResponses", {{"user_name", accepted("name", "Ada")}}}}));
    auto const still = result_of(c.get(id));
    EXPECT_EQ(status_of(still), "cancelled") << bj::value(still);
    EXPECT_FALSE(still.contains("result")) << bj::value(still);
}

TEST_F(Tasks, ModernProtocolErrorFailsTheTask) {
    harness h(srv_);
    caller c(h, true);
    auto const id = task_id_of(modern_created(c.call("tools/call", call_params("fails"))));
    auto const failed = c.get_until(id, "failed");
    EXPECT_FALSE(failed.contains("result")) << bj::value(failed);
    auto const* error = failed.if_contains("error");
    ASSERT_TRUE(error && error->is_object()) << bj::value(failed);
    EXPECT_EQ(error->get_object().at("code"), -32042) << bj::value(failed);
    EXPECT_EQ(error->get_object().at("message"), "Widget jammed") << bj::value(failed);
    EXPECT_EQ(error->get_object().if_contains("data") ? error->get_object().at("data") : bj::value{},
              (bj::object{{"widget", 7}}));
}

// The extension: a tool's isError result is a completed task (only a JSON-RPC error fails one).
TEST_F(Tasks, ModernToolErrorCompletesTheTask) {
    harness h(srv_);
    caller c(h, true);
    auto const id = task_id_of(modern_created(c.call("tools/call", call_params("tool_error"))));
    auto const done = c.get_until(id, "completed");
    ASSERT_TRUE(done.contains("result")) << bj::value(done);
    EXPECT_TRUE(is_error_result(done.at("result").as_object())) << bj::value(done);
    EXPECT_EQ(first_text(done.at("result").as_object()), "it broke");
    EXPECT_FALSE(done.contains("error")) << bj::value(done);
}

TEST_F(Tasks, ModernProgressBecomesTheStatusMessage) {
    harness h(srv_);
    open_at_end release{*gate_};
    caller c(h, true);
    auto const id = task_id_of(modern_created(c.call("tools/call", call_params("progress"))));
    bj::object last;
    bool const shown = wait_until(
        [&] {
            h.io().poll();
            last = result_of(c.get(id));
            auto const* m = last.if_contains("statusMessage");
            return m && m->is_string() && m->get_string() == "one of four";
        },
        20s, std::chrono::milliseconds(2));
    EXPECT_TRUE(shown) << bj::value(last);
    EXPECT_EQ(status_of(last), "working");
    gate_->open = true;
    c.get_until(id, "completed");
}

TEST_F(Tasks, ModernUnknownTaskIsInvalidParams) {
    harness h(srv_);
    caller c(h, true);
    std::string const id(unknown_task);
    expect_error(c.get(id), -32602);
    expect_error(c.call("tasks/update", {{"taskId", id}, {"inputResponses", {{"k", accepted("a", "b")}}}}),
                 -32602);
    expect_error(c.call("tasks/cancel", {{"taskId", id}}), -32602);
}

// ---- 2025-11-25 sessions ---------------------------------------------------------------------------------

TEST_F(Tasks, LegacyParamsTaskMakesATask) {
    harness h(srv_);
    open_at_end release{*gate_};
    open_legacy(h, "2025-11-25");
    caller c(h, false);
    auto const created = legacy_created(c.call("tools/call", legacy_task_call("slow", 60000)));
    EXPECT_EQ(status_of(created), "working");
    EXPECT_EQ(created.at("ttl"), 60000) << bj::value(created);
    EXPECT_EQ(created.at("pollInterval"), 250) << bj::value(created);
    auto const id = task_id_of(created);

    auto const got = c.get(id);
    auto const task = result_of(got);
    EXPECT_EQ(task_id_of(task), id) << got;
    EXPECT_EQ(status_of(task), "working") << got;
    EXPECT_TRUE(task.contains("ttl")) << got;
    EXPECT_FALSE(task.contains("resultType")) << got;
    gate_->open = true;
    c.get_until(id, "completed");
}

// server_options: a 2025-11-25 client's requested ttl is honoured between 1 s and task_max_ttl.
TEST(TasksTtl, LegacyRequestedTtlIsKeptWithinTheServersBounds) {
    auto g = std::make_shared<gate>();
    auto o = task_options();
    o.task_max_ttl = std::chrono::minutes(5);
    server srv(o);
    add_task_tools(srv, g);
    harness h(srv);
    open_legacy(h, "2025-11-25");
    caller c(h, false);
    EXPECT_EQ(legacy_created(c.call("tools/call", legacy_task_call("quick", 10))).at("ttl"), 1000);
    EXPECT_EQ(legacy_created(c.call("tools/call", legacy_task_call("quick", 90000))).at("ttl"), 90000);
    EXPECT_EQ(legacy_created(c.call("tools/call", legacy_task_call("quick", 86400000))).at("ttl"), 300000);
    // Without a ttl of its own the task gets the server's.
    auto p = call_params("quick");
    p["task"] = bj::object{};
    EXPECT_EQ(legacy_created(c.call("tools/call", p)).at("ttl"), 120000);
}

TEST_F(Tasks, LegacyMalformedParamsTaskIsInvalidParams) {
    harness h(srv_);
    open_legacy(h, "2025-11-25");
    caller c(h, false);
    auto p = call_params("slow");
    p["task"] = "please";
    expect_error(c.call("tools/call", p), -32602);
    p["task"] = bj::object{{"ttl", -5}};
    expect_error(c.call("tools/call", p), -32602);
    p["task"] = bj::object{{"ttl", "soon"}};
    expect_error(c.call("tools/call", p), -32602);
    EXPECT_EQ(gate_->entered, 0);
}

TEST_F(Tasks, LegacyTasksResultWaitsForTheHandler) {
    harness h(srv_);
    open_at_end release{*gate_};
    open_legacy(h, "2025-11-25");
    caller c(h, false);
    auto const id =
        task_id_of(legacy_created(c.call("tools/call", legacy_task_call("slow", 60000, {{"text", "z"}}))));
    auto const waiting = c.send("tasks/result", {{"taskId", id}});
    // A later request's answer proves the first was not answered before it.
    c.call("ping");
    for (auto const& m : h.messages())
        ASSERT_FALSE(is_response_to(m, waiting)) << "tasks/result answered while the task runs: " << m;
    EXPECT_EQ(gate_->left, 0);

    gate_->open = true;
    auto const r = h.response(waiting);
    auto const result = result_of(r);
    EXPECT_EQ(gate_->left, 1);
    EXPECT_EQ(first_text(result), "done z") << r;
    EXPECT_EQ(related_task_of(result), (bj::object{{"taskId", id}})) << r;
    EXPECT_EQ(status_of(result_of(c.get(id))), "completed");
}

// 2025-11-25: an isError result fails the task, yet tasks/result returns that result.
TEST_F(Tasks, LegacyToolErrorFailsTheTaskButTasksResultReturnsIt) {
    harness h(srv_);
    open_legacy(h, "2025-11-25");
    caller c(h, false);
    auto const id = task_id_of(legacy_created(c.call("tools/call", legacy_task_call("tool_error"))));
    auto const r = c.call("tasks/result", {{"taskId", id}});
    auto const result = result_of(r);
    EXPECT_TRUE(is_error_result(result)) << r;
    EXPECT_EQ(first_text(result), "it broke") << r;
    EXPECT_EQ(related_task_of(result), (bj::object{{"taskId", id}})) << r;
    EXPECT_EQ(status_of(result_of(c.get(id))), "failed");
}

TEST_F(Tasks, LegacyProtocolErrorIsWhatTasksResultReturns) {
    harness h(srv_);
    open_legacy(h, "2025-11-25");
    caller c(h, false);
    auto const id = task_id_of(legacy_created(c.call("tools/call", legacy_task_call("fails"))));
    auto const r = c.call("tasks/result", {{"taskId", id}});
    expect_error(r, -32042);
    EXPECT_EQ(error_of(r).at("message"), "Widget jammed") << r;
    EXPECT_EQ(status_of(result_of(c.get(id))), "failed");
}

TEST(TasksPaged, LegacyTasksListPagesTheSessionsTasks) {
    auto g = std::make_shared<gate>();
    server srv(task_options(2));
    add_task_tools(srv, g);
    harness other(srv); // another session's task is never listed
    open_at_end release_other{*g};
    open_legacy(other, "2025-11-25");
    caller o(other, false);
    auto const foreign = task_id_of(legacy_created(o.call("tools/call", legacy_task_call("slow"))));

    harness h(srv);
    open_at_end release{*g};
    open_legacy(h, "2025-11-25");
    caller c(h, false);
    std::set<std::string> made;
    for (int i = 0; i < 3; ++i)
        made.insert(task_id_of(legacy_created(c.call("tools/call", legacy_task_call("slow")))));
    ASSERT_EQ(made.size(), 3u);

    auto const first = result_of(c.call("tasks/list"));
    ASSERT_TRUE(first.contains("tasks")) << bj::value(first);
    EXPECT_EQ(first.at("tasks").as_array().size(), 2u) << bj::value(first);
    auto const* cursor = first.if_contains("nextCursor");
    ASSERT_TRUE(cursor && cursor->is_string()) << bj::value(first);
    auto const second = result_of(c.call("tasks/list", {{"cursor", *cursor}}));
    EXPECT_EQ(second.at("tasks").as_array().size(), 1u) << bj::value(second);
    EXPECT_FALSE(second.contains("nextCursor")) << bj::value(second);

    std::multiset<std::string> listed;
    for (auto const* page : {&first, &second})
        for (auto const& t : page->at("tasks").as_array()) {
            listed.insert(task_id_of(t.as_object()));
            EXPECT_EQ(status_of(t.as_object()), "working") << t;
            EXPECT_TRUE(t.as_object().contains("ttl")) << t;
        }
    EXPECT_EQ(listed, (std::multiset<std::string>(made.begin(), made.end())));
    EXPECT_FALSE(listed.contains(foreign));

    expect_error(c.call("tasks/list", {{"cursor", "not-a-cursor"}}), -32602);
}

TEST_F(Tasks, LegacyCancelReturnsTheCancelledTaskOnce) {
    harness h(srv_);
    open_at_end release{*gate_};
    open_legacy(h, "2025-11-25");
    caller c(h, false);
    auto const id = task_id_of(legacy_created(c.call("tools/call", legacy_task_call("slow"))));
    ASSERT_TRUE(run_until(h, [&] { return gate_->entered == 1; }));
    auto const r = c.call("tasks/cancel", {{"taskId", id}});
    auto const task = result_of(r);
    EXPECT_EQ(task_id_of(task), id) << r;
    EXPECT_EQ(status_of(task), "cancelled") << r;
    ASSERT_TRUE(run_until(h, [&] { return gate_->left == 1; })) << "the handler never ended";
    EXPECT_TRUE(gate_->saw_cancelled);
    EXPECT_EQ(status_of(result_of(c.get(id))), "cancelled");
    // 2025-11-25 refuses to cancel a task that already ended.
    expect_error(c.call("tasks/cancel", {{"taskId", id}}), -32602);
}

TEST_F(Tasks, LegacyStatusNotificationsFollowTheTask) {
    harness h(srv_);
    open_at_end release{*gate_};
    open_legacy(h, "2025-11-25");
    caller c(h, false);
    auto const id = task_id_of(legacy_created(c.call("tools/call", legacy_task_call("progress"))));
    auto const noted = h.wait_for([&](bj::value const& m) {
        if (!is_task_status(m, id, "working"))
            return false;
        auto const* msg = m.as_object().at("params").as_object().if_contains("statusMessage");
        return msg && msg->is_string() && msg->get_string() == "one of four";
    });
    ASSERT_TRUE(noted) << "no notifications/tasks/status for the progress message";
    gate_->open = true;
    auto const done =
        h.wait_for([&](bj::value const& m) { return is_task_status(m, id, "completed"); }, *noted, 10s);
    ASSERT_TRUE(done) << "no notifications/tasks/status for the completion";
    auto const params = h.messages()[*done].as_object().at("params").as_object();
    EXPECT_TRUE(params.contains("createdAt") && params.contains("lastUpdatedAt") && params.contains("ttl"))
        << bj::value(params);
}

TEST_F(Tasks, LegacyElicitationFromATaskIsARealRequestTiedToIt) {
    harness h(srv_);
    open_legacy(h, "2025-11-25");
    caller c(h, false);
    auto const id = task_id_of(legacy_created(c.call("tools/call", legacy_task_call("ask_in_task"))));
    auto const asked =
        h.wait_for([](bj::value const& m) { return is_server_request(m, "elicitation/create"); });
    ASSERT_TRUE(asked);
    auto const request = h.messages()[*asked].as_object();
    auto const& params = request.at("params").as_object();
    EXPECT_EQ(related_task_of(params), (bj::object{{"taskId", id}})) << bj::value(request);
    // What the handler asked, as it asked it, and the task it serves.
    auto want = form("What is your name?", "name");
    want["_meta"] = bj::object{{related_task, {{"taskId", id}}}};
    EXPECT_EQ(without_input_key(params), bj::value(want)) << bj::value(request);
    EXPECT_EQ(status_of(result_of(c.get(id))), "input_required");

    h.send(client_response(request.at("id"), accepted("name", "Ada")));
    auto const r = c.call("tasks/result", {{"taskId", id}});
    EXPECT_EQ(first_text(result_of(r)), "Hello, Ada!") << r;
    EXPECT_EQ(status_of(result_of(c.get(id))), "completed");
}

TEST_F(Tasks, LegacyRequiredToolWithoutParamsTaskIsMethodNotFound) {
    harness h(srv_);
    open_legacy(h, "2025-11-25");
    caller c(h, false);
    expect_error(c.call("tools/call", call_params("slow_required")), -32601);
    EXPECT_EQ(gate_->entered, 0);
}

TEST_F(Tasks, LegacyForbiddenToolWithParamsTaskIsMethodNotFound) {
    harness h(srv_);
    open_legacy(h, "2025-11-25");
    caller c(h, false);
    expect_error(c.call("tools/call", legacy_task_call("slow_forbidden")), -32601);
    EXPECT_EQ(gate_->entered, 0);
}

TEST_F(Tasks, OlderLegacySessionIgnoresParamsTask) {
    harness h(srv_);
    open_legacy(h, "2025-06-18");
    caller c(h, false);
    auto const r = c.call("tools/call", legacy_task_call("quick"));
    expect_legacy_result(r);
    EXPECT_EQ(call_text(r), "quick result");
    EXPECT_FALSE(result_of(r).contains("task")) << r;
}

TEST_F(Tasks, LegacyAdvertisesTasksAt2025_11_25Only) {
    auto const task_support_of = [](bj::object const& list, std::string_view tool) -> bj::value {
        for (auto const& t : list.at("tools").as_array())
            if (t.as_object().at("name") == bj::value(bj::string(tool))) {
                auto const* e = t.as_object().if_contains("execution");
                return e ? e->as_object().at("taskSupport") : bj::value("(no execution)");
            }
        return "(no such tool)";
    };
    {
        harness h(srv_);
        auto const init = open_legacy(h, "2025-11-25");
        auto const* tasks = init.at("capabilities").as_object().if_contains("tasks");
        ASSERT_TRUE(tasks && tasks->is_object()) << bj::value(init);
        EXPECT_TRUE(tasks->get_object().contains("list")) << bj::value(init);
        EXPECT_TRUE(tasks->get_object().contains("cancel")) << bj::value(init);
        EXPECT_EQ(tasks->get_object().if_contains("requests") ? tasks->get_object().at("requests")
                                                              : bj::value{},
                  (bj::object{{"tools", {{"call", bj::object{}}}}}))
            << bj::value(init);
        caller c(h, false);
        auto const list = result_of(c.call("tools/list"));
        EXPECT_EQ(task_support_of(list, "slow"), "optional");
        EXPECT_EQ(task_support_of(list, "slow_required"), "required");
        EXPECT_EQ(task_support_of(list, "slow_forbidden"), "(no execution)");
        EXPECT_EQ(task_support_of(list, "echo"), "(no execution)");
        h.expect_schema_valid();
    }
    {
        harness h(srv_);
        auto const init = open_legacy(h, "2025-06-18");
        EXPECT_FALSE(init.at("capabilities").as_object().contains("tasks")) << bj::value(init);
        caller c(h, false);
        auto const list = result_of(c.call("tools/list"));
        for (auto const& t : list.at("tools").as_array())
            EXPECT_FALSE(t.as_object().contains("execution")) << t;
    }
}

// What a 2025-11-25 session sees of a task, checked against that version's schema (the transcript's own check
// knows tools/call only as a CallToolResult).
TEST_F(Tasks, LegacyTaskShapesMatchTheSchema) {
    auto* schemas = schemas_or_skip();
    if (!schemas)
        return;
    harness h(srv_);
    open_at_end release{*gate_};
    open_legacy(h, "2025-11-25");
    caller c(h, false);
    auto const created = c.call("tools/call", legacy_task_call("slow"));
    auto const id = task_id_of(legacy_created(created));
    ASSERT_TRUE(run_until(h, [&] { return gate_->entered == 1; }));
    auto const got = c.get(id);
    auto const listed = c.call("tasks/list");
    auto const cancelled = c.call("tasks/cancel", {{"taskId", id}});
    auto const noted =
        h.wait_for([&](bj::value const& m) { return is_task_status(m, id, "cancelled"); }, 0, 10s);
    ASSERT_TRUE(noted) << "no notifications/tasks/status for the cancellation";
    auto const notification = h.messages()[*noted];

    auto const quick = task_id_of(legacy_created(c.call("tools/call", legacy_task_call("quick"))));
    auto const payload = c.call("tasks/result", {{"taskId", quick}});

    std::vector<schema_check> const checks{
        {"2025-11-25", "CreateTaskResult", result_of(created), schema_mode::closed},
        {"2025-11-25", "GetTaskResult", result_of(got)},
        {"2025-11-25", "ListTasksResult", result_of(listed)},
        {"2025-11-25", "CancelTaskResult", result_of(cancelled)},
        {"2025-11-25", "TaskStatusNotification", notification},
        {"2025-11-25", "CallToolResult", result_of(payload)},
    };
    auto const verdicts = schemas->validate(checks);
    ASSERT_EQ(verdicts.size(), checks.size());
    for (std::size_t i = 0; i < checks.size(); ++i)
        EXPECT_TRUE(verdicts[i].ok) << checks[i].type << ": " << checks[i].value << "\n"
                                    << verdicts[i].errors;
}

TEST_F(Tasks, ModernAdvertisesTheExtensionAndNoExecution) {
    harness h(srv_);
    caller c(h, true);
    auto const discovered = result_of(c.call("server/discover"));
    auto const* caps = discovered.if_contains("capabilities");
    ASSERT_TRUE(caps && caps->is_object()) << bj::value(discovered);
    auto const* ext = caps->get_object().if_contains("extensions");
    EXPECT_TRUE(ext && ext->is_object() && ext->get_object().contains(duet::protocol::tasks_extension))
        << bj::value(discovered);
    EXPECT_FALSE(caps->get_object().contains("tasks")) << bj::value(discovered);
    auto const list = result_of(c.call("tools/list"));
    for (auto const& t : list.at("tools").as_array())
        EXPECT_FALSE(t.as_object().contains("execution")) << t;
}

// ---- scoping, expiry, bounds
// -------------------------------------------------------------------------------

TEST_F(Tasks, AnotherConnectionCannotSeeASessionsTask) {
    harness a(srv_);
    open_at_end release{*gate_};
    open_legacy(a, "2025-11-25");
    caller ca(a, false);
    auto const id = task_id_of(legacy_created(ca.call("tools/call", legacy_task_call("slow"))));

    harness b(srv_);
    open_at_end release_b{*gate_};
    open_legacy(b, "2025-11-25");
    caller cb(b, false);
    expect_error(cb.get(id), -32602);
    expect_error(cb.call("tasks/result", {{"taskId", id}}), -32602);
    expect_error(cb.call("tasks/cancel", {{"taskId", id}}), -32602);
    // Nor can a modern caller reach it by its id.
    caller modern(b, true);
    expect_error(modern.get(id), -32602);

    // The attempts changed nothing for its owner.
    EXPECT_EQ(status_of(result_of(ca.get(id))), "working");
    EXPECT_FALSE(gate_->saw_cancelled);
}

TEST(TasksExpiry, ATaskIsGoneAfterItsTtl) {
    auto g = std::make_shared<gate>();
    auto o = task_options();
    o.task_ttl = std::chrono::seconds(1);
    server srv(o);
    add_task_tools(srv, g);
    harness h(srv);
    caller c(h, true);
    auto const created = modern_created(c.call("tools/call", call_params("quick")));
    EXPECT_EQ(created.at("ttlMs"), 1000) << bj::value(created);
    auto const id = task_id_of(created);
    auto const found = c.get(id);
    ASSERT_TRUE(found.as_object().contains("result")) << "not found right after it was made: " << found;

    bj::value last;
    bool const gone = wait_until(
        [&] {
            last = c.get(id);
            return last.as_object().contains("error");
        },
        20s, std::chrono::milliseconds(20));
    ASSERT_TRUE(gone) << "still there: " << last;
    expect_error(last, -32602);
}

TEST(TasksBound, ACallerBeyondItsMostTasksIsRefusedBeforeTheHandlerRuns) {
    auto g = std::make_shared<gate>();
    auto o = task_options();
    o.max_tasks_per_caller = 2;
    server srv(o);
    add_task_tools(srv, g);
    harness h(srv);
    open_at_end release{*g};
    open_legacy(h, "2025-11-25");
    caller c(h, false);
    legacy_created(c.call("tools/call", legacy_task_call("slow")));
    legacy_created(c.call("tools/call", legacy_task_call("slow")));
    ASSERT_TRUE(run_until(h, [&] { return g->entered == 2; }));
    auto const third = c.call("tools/call", legacy_task_call("slow"));
    auto const e = error_of(third);
    EXPECT_TRUE(e.contains("code")) << third;
    // The handler's start would be queued before a later request's answer.
    c.call("ping");
    h.io().poll();
    EXPECT_EQ(g->entered, 2) << "the handler ran for a refused task";
}

} // namespace duet_tasks_test
