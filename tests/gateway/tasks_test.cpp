// Tasks through `duet gateway`, bridged between the protocol eras (src/gateway/upstream_tasks.cpp,
// upstream_call.cpp and upstream_handler.cpp): an upstream tools/call answered with a task is followed by the
// gateway to its end, and the downstream request becomes a task of the gateway's own, in the shape of the
// downstream client's era; with --task-after a call still running upstream becomes a gateway task of its own,
// the gateway holding the upstream call.
//
// Upstreams: the conformance fixture server (duet-conformance-server: slow_compute becomes a task after
// 200 ms, failing_job requires a task, confirm_delete asks a question), restricted to one era; the demo
// `duet serve --stdio` (countdown: 20 steps of 50 ms, never a task of its own); and, for an upstream that
// offers no tasks at all, a server of the test's own in process. Downstream: raw HTTP
// (tests/http/mcp_http.hpp) where the wire shapes are the point, the client library where what a caller sees
// is.
#include <duet/client/client.hpp>
#include <duet/server/server.hpp>
#include <duet/transport/http_server.hpp>

#include "client/sync_client.hpp"
#include "gateway/gateway_process.hpp"
#include "http/mcp_http.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "support/child_process.hpp"
#include "support/task_log.hpp"
#include "support/wait.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

namespace duet::test::gateway_tasks {

namespace json = boost::json;
using namespace std::chrono_literals;
using namespace duet::test::http;
using client_side::sync_client;
using duet::test::gateway::gateway_process;
using duet::test::gateway::only_message;

constexpr char const* tasks_extension = "io.modelcontextprotocol/tasks";
constexpr char const* related_task = "io.modelcontextprotocol/related-task";
constexpr auto task_wait = std::chrono::milliseconds(20'000);

bool is_task_id(std::string const& s) {
    static std::regex const id("[0-9a-f]{32}");
    return std::regex_match(s, id);
}

std::string string_at(json::object const& o, std::string_view key) {
    auto const* v = o.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

// ---- the upstreams

#if defined(DUET_CONFORMANCE_SERVER)

// duet-conformance-server --port 0 <flag>: its URL from stdout line 1; SIGTERM when the test ends.
class conformance_upstream {
public:
    explicit conformance_upstream(std::string const& flag)
        : child_({DUET_CONFORMANCE_SERVER, "--port", "0", flag}, child_process::input::null) {
        url_ = child_.first_stdout_line(std::chrono::steady_clock::now() + 30s);
        if (url_.empty())
            ADD_FAILURE() << "the conformance server printed no URL; its stderr:\n" << child_.stderr_text();
    }
    ~conformance_upstream() {
        if (!child_.running())
            return;
        child_.signal(SIGTERM);
        [[maybe_unused]] bool const gone = child_.exited_by(std::chrono::steady_clock::now() + 5s);
    }
    conformance_upstream(conformance_upstream const&) = delete;
    conformance_upstream& operator=(conformance_upstream const&) = delete;

    [[nodiscard]] std::string const& url() const noexcept { return url_; }

private:
    child_process child_;
    std::string url_;
};

#endif // DUET_CONFORMANCE_SERVER

// An upstream that offers no tasks at all: one tool, `countdown`, that takes `n` × 50 ms (no task support, so
// the server declares no tasks in either era), served over HTTP from a thread of the test.
class taskless_upstream {
public:
    taskless_upstream() {
        server::server_options o;
        o.info.name = "taskless-upstream";
        o.info.version = "1.0.0";
        srv_ = std::make_unique<server::server>(std::move(o));
        srv_->add_tool(server::tool{.name = "countdown", .description = "Takes n × 50 ms"},
                       [](json::object const& args,
                          server::request_context&) -> boost::asio::awaitable<server::tool_result> {
                           std::int64_t n = 1;
                           if (auto const* v = args.if_contains("n"); v && v->is_number())
                               n = v->to_number<std::int64_t>();
                           boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
                           timer.expires_after(std::chrono::milliseconds(50 * n));
                           co_await timer.async_wait(boost::asio::use_awaitable);
                           co_return server::tool_result::text("liftoff after " + std::to_string(n) +
                                                               " steps");
                       });
        transport::http_options h;
        h.host = "127.0.0.1";
        h.port = 0;
        http_ = std::make_unique<transport::http_server>(*srv_, std::move(h));
        if (auto ec = http_->listen()) {
            ADD_FAILURE() << "listen: " << ec.message();
            return;
        }
        url_ = http_->url();
        thread_ = std::thread([this] { http_->run(); });
    }
    ~taskless_upstream() {
        if (!thread_.joinable())
            return;
        http_->stop();
        thread_.join();
    }
    taskless_upstream(taskless_upstream const&) = delete;
    taskless_upstream& operator=(taskless_upstream const&) = delete;

    [[nodiscard]] std::string const& url() const noexcept { return url_; }

private:
    std::unique_ptr<server::server> srv_;
    std::unique_ptr<transport::http_server> http_;
    std::thread thread_;
    std::string url_;
};

std::string demo_stdio_upstream() {
    return std::string("stdio:") + DUET_BINARY + " serve --stdio";
}

// ---- modern requests

// What a modern client that follows tasks (and answers elicitations) declares.
json::object follower_caps() {
    return {{"elicitation", json::object{}}, {"extensions", json::object{{tasks_extension, json::object{}}}}};
}

json::object modern_call(int id, std::string_view tool, json::object args,
                         json::object caps = follower_caps()) {
    return modern_request(id, "tools/call", call_params(tool, std::move(args)), std::move(caps));
}

json::object modern_task_request(int id, std::string_view method, std::string const& task_id,
                                 json::object extra = {}) {
    extra["taskId"] = task_id;
    return modern_request(id, method, std::move(extra), follower_caps());
}

// The one message a POST answered with.
json::value answer_of(mcp_http& c, json::object const& request) {
    auto const r = c.post(request);
    return only_message(r);
}

// A modern tasks/* request names its task in the Mcp-Name header too.
json::value task_answer_of(mcp_http& c, json::object const& request) {
    auto const& id = request.at("params").at("taskId").as_string();
    auto const r = c.post(request, {{"Mcp-Name", std::string(id)}});
    return only_message(r);
}

// A modern CreateTaskResult (resultType "task"), or a test failure: its taskId.
std::string modern_task_id(json::value const& response) {
    auto const r = result_of(response);
    EXPECT_EQ(string_at(r, "resultType"), "task") << "not a task: " << response;
    EXPECT_FALSE(r.contains("content")) << "a result, not a task: " << response;
    auto const id = string_at(r, "taskId");
    EXPECT_TRUE(is_task_id(id)) << response;
    return id;
}

// Follows a gateway task with modern tasks/get, each on a connection of its own (the client that made the
// call is gone), keeping the statuses it saw in order, repeats collapsed.
class task_watch {
public:
    task_watch(endpoint ep, std::string id) : ep_(std::move(ep)), id_(std::move(id)) {}

    /// tasks/get once: the task as the gateway shows it now (empty, and a test failure, on an error).
    json::object get() {
        mcp_http c(ep_);
        auto const response = task_answer_of(c, modern_task_request(++n_, "tasks/get", id_));
        auto task = result_of(response);
        auto const status = string_at(task, "status");
        if (!status.empty() && (statuses_.empty() || statuses_.back() != status))
            statuses_.push_back(status);
        return task;
    }
    /// Polls until `done(task)` holds: the last task seen; a test failure when not in time.
    json::object until(std::function<bool(json::object const&)> const& done) {
        json::object last;
        bool const ok = wait_until(
            [&] {
                last = get();
                return last.empty() || done(last);
            },
            task_wait, 100ms);
        EXPECT_TRUE(ok) << "the task never got there; last seen: " << json::serialize(last);
        return last;
    }
    json::object until_status(std::string const& status) {
        return until([&](json::object const& t) { return string_at(t, "status") == status; });
    }
    json::object until_terminal() {
        return until([](json::object const& t) {
            auto const s = string_at(t, "status");
            return s == "completed" || s == "failed" || s == "cancelled";
        });
    }

    [[nodiscard]] std::vector<std::string> const& statuses() const noexcept { return statuses_; }

private:
    endpoint ep_;
    std::string id_;
    int n_ = 100;
    std::vector<std::string> statuses_;
};

std::vector<std::string> statuses(std::initializer_list<char const*> s) {
    return {s.begin(), s.end()};
}

// The inlined result of a completed modern task (DetailedTask.result).
json::object inline_result(json::object const& task) {
    auto const* r = task.if_contains("result");
    if (!r || !r->is_object()) {
        ADD_FAILURE() << "no result inline: " << json::serialize(task);
        return {};
    }
    return r->get_object();
}

bool has_related_task(json::object const& result) {
    auto const* meta = result.if_contains("_meta");
    return meta && meta->is_object() && meta->get_object().contains(related_task);
}

#if defined(DUET_CONFORMANCE_SERVER)

// ---- a 2025-11-25 upstream that makes tasks, bridged to modern clients that declare the extension

class GatewayTasksModernClient : public ::testing::Test {
protected:
    GatewayTasksModernClient() : upstream_("--legacy-only"), gw_(upstream_.url(), {"--era", "legacy"}) {}

    // A modern tools/list through the gateway, as a client does before it calls: the tools' names.
    std::vector<std::string> list_tools() {
        mcp_http c(gw_.ep());
        auto const r = result_of(answer_of(c, modern_request(1, "tools/list", {}, follower_caps())));
        std::vector<std::string> names;
        if (auto const* tools = r.if_contains("tools"); tools && tools->is_array())
            for (auto const& t : tools->get_array())
                names.push_back(string_at(t.as_object(), "name"));
        return names;
    }

    conformance_upstream upstream_;
    gateway_process gw_;
};

TEST_F(GatewayTasksModernClient, AnUpstreamTaskBecomesAGatewayTaskWithTheResultInlineAtItsEnd) {
    ASSERT_FALSE(list_tools().empty());
    mcp_http c(gw_.ep());
    auto const started = std::chrono::steady_clock::now();
    auto const response = answer_of(c, modern_call(1, "slow_compute", {{"seconds", 2}}));
    auto const id = modern_task_id(response);
    ASSERT_FALSE(id.empty());
    EXPECT_LT(std::chrono::steady_clock::now() - started, 1900ms) << "the task came only as the call ended";

    task_watch watch(gw_.ep(), id);
    auto const first = watch.get();
    EXPECT_EQ(string_at(first, "status"), "working") << json::serialize(first);
    EXPECT_FALSE(first.contains("result")) << json::serialize(first);
    auto const last = watch.until_terminal();
    EXPECT_EQ(watch.statuses(), statuses({"working", "completed"}));
    EXPECT_EQ(string_at(last, "taskId"), id);
    auto const result = inline_result(last);
    EXPECT_EQ(first_text(result), "Computed compute in 2.000000 s") << json::serialize(last);
    // The upstream's 2025-11-25 tie to its own task is no part of the result the extension inlines.
    EXPECT_FALSE(has_related_task(result)) << json::serialize(last);
    c.expect_schema_valid();
}

// The upstream task's status message (slow_compute reports "computing LABEL" as it goes) is the gateway
// task's while it works.
TEST_F(GatewayTasksModernClient, TheUpstreamTasksStatusMessageIsTheGatewayTasks) {
    ASSERT_FALSE(list_tools().empty());
    mcp_http c(gw_.ep());
    auto const id =
        modern_task_id(answer_of(c, modern_call(1, "slow_compute", {{"seconds", 3}, {"label", "rho"}})));
    ASSERT_FALSE(id.empty());
    task_watch watch(gw_.ep(), id);
    auto const noted = watch.until([](json::object const& t) {
        return string_at(t, "statusMessage") == "computing rho" || string_at(t, "status") == "completed";
    });
    EXPECT_EQ(string_at(noted, "statusMessage"), "computing rho") << json::serialize(noted);
    EXPECT_EQ(string_at(noted, "status"), "working") << json::serialize(noted);
    watch.until_terminal();
}

// A modern client may call a tool it knows (a cached list, another gateway process of the deployment, a
// gateway restarted since) without listing the tools through this gateway process first: what the upstream
// says of its tools' tasks holds all the same. failing_job requires a task upstream, so a client that cannot
// follow one is refused by the gateway itself (-32021), not sent on to be refused by the upstream in its own
// era's terms (-32601). Until the gateway has learned it, each try is such a quick upstream refusal.
TEST_F(GatewayTasksModernClient, WithoutAToolsListTheGatewayStillLearnsTheUpstreamsTaskTools) {
    mcp_http c(gw_.ep());
    int n = 0;
    json::value refused;
    EXPECT_TRUE(wait_until(
        [&] {
            refused = answer_of(c, modern_call(++n, "failing_job", {}, json::object{}));
            return code_of(refused) == -32021;
        },
        task_wait, 50ms))
        << refused;
    auto const response = answer_of(c, modern_call(++n, "slow_compute", {{"seconds", 2}}));
    auto const id = modern_task_id(response);
    EXPECT_FALSE(id.empty()) << "the 2025-11-25 upstream was not asked for a task";
    auto const required = answer_of(c, modern_call(++n, "failing_job", {}));
    EXPECT_EQ(code_of(required), 0) << required;
    EXPECT_FALSE(modern_task_id(required).empty()) << required;
}

// The same from the gateway's first moment: a client that reconnects to a restarted gateway calls as soon as
// it serves.
TEST_F(GatewayTasksModernClient, ACallAsSoonAsTheGatewayServesKnowsTheUpstreamsTaskTools) {
    mcp_http c(gw_.ep());
    auto const refused = answer_of(c, modern_call(1, "failing_job", {}, json::object{}));
    EXPECT_EQ(code_of(refused), -32021) << refused;
}

TEST_F(GatewayTasksModernClient, ARequiredTaskToolRefusesAClientWithoutTheExtension) {
    ASSERT_FALSE(list_tools().empty());
    mcp_http c(gw_.ep());
    auto const refused = answer_of(c, modern_call(1, "failing_job", {}, json::object{}));
    EXPECT_EQ(code_of(refused), -32021) << refused;
    // The same tool, for a client that follows tasks: a task, ending in the tool's error (a completed task).
    auto const id = modern_task_id(answer_of(c, modern_call(2, "failing_job", {})));
    ASSERT_FALSE(id.empty());
    task_watch watch(gw_.ep(), id);
    auto const last = watch.until_terminal();
    EXPECT_EQ(string_at(last, "status"), "completed") << json::serialize(last);
    auto const result = inline_result(last);
    EXPECT_TRUE(is_error_result(result)) << json::serialize(last);
    EXPECT_EQ(first_text(result), "The job failed: its input could not be processed");
}

TEST_F(GatewayTasksModernClient, TheUpstreamsQuestionMakesTheGatewayTaskInputRequiredAndItsAnswerEndsIt) {
    ASSERT_FALSE(list_tools().empty());
    mcp_http c(gw_.ep());
    auto const id =
        modern_task_id(answer_of(c, modern_call(1, "confirm_delete", {{"filename", "notes.txt"}})));
    ASSERT_FALSE(id.empty());
    task_watch watch(gw_.ep(), id);
    auto const asking = watch.until_status("input_required");
    ASSERT_EQ(string_at(asking, "status"), "input_required") << json::serialize(asking);
    auto const* requests = asking.if_contains("inputRequests");
    ASSERT_TRUE(requests && requests->is_object() && requests->get_object().size() == 1)
        << json::serialize(asking);
    auto const& question = requests->get_object().begin()->value().as_object();
    std::string const key(requests->get_object().begin()->key());
    EXPECT_EQ(string_at(question, "method"), "elicitation/create") << json::serialize(question);
    auto const* params = question.if_contains("params");
    ASSERT_TRUE(params && params->is_object()) << json::serialize(question);
    EXPECT_EQ(string_at(params->get_object(), "message"), "Delete notes.txt?") << json::serialize(question);

    json::object answers{
        {key, json::object{{"action", "accept"}, {"content", json::object{{"confirm", true}}}}}};
    auto const ack =
        task_answer_of(c, modern_task_request(2, "tasks/update", id, {{"inputResponses", answers}}));
    EXPECT_EQ(code_of(ack), 0) << ack;
    auto const last = watch.until_terminal();
    EXPECT_EQ(string_at(last, "status"), "completed") << json::serialize(last);
    EXPECT_EQ(first_text(inline_result(last)), "Deleted notes.txt") << json::serialize(last);
}

TEST_F(GatewayTasksModernClient, CancellingTheGatewayTaskIsAcknowledgedAndLetsGoOfTheUpstreamCall) {
    ASSERT_FALSE(list_tools().empty());
    mcp_http c(gw_.ep());
    auto const id = modern_task_id(answer_of(c, modern_call(1, "slow_compute", {{"seconds", 30}})));
    ASSERT_FALSE(id.empty());
    auto const ack = task_answer_of(c, modern_task_request(2, "tasks/cancel", id));
    EXPECT_EQ(code_of(ack), 0) << ack;
    EXPECT_TRUE(ack.is_object() && ack.as_object().contains("result")) << ack;
    task_watch watch(gw_.ep(), id);
    auto const now = watch.get();
    EXPECT_EQ(string_at(now, "status"), "cancelled") << json::serialize(now);
    EXPECT_FALSE(now.contains("result")) << json::serialize(now);
    // The gateway let go of the upstream call: it ends, cancelled, well before its 30 s.
    EXPECT_TRUE(gw_.wait_for_log("status=cancelled", 10s)) << gw_.stderr_text();
}

// ---- a modern upstream bridged to a 2025-11-25 client

class GatewayTasksLegacyClient : public ::testing::Test {
protected:
    GatewayTasksLegacyClient() : upstream_("--modern-only"), gw_(upstream_.url(), {"--era", "modern"}) {}

    // A 2025-11-25 session through the gateway; its tools/list's tools by name.
    json::object open_session(mcp_http& c) {
        auto const init = c.initialize("2025-11-25", {{"elicitation", json::object{}}});
        EXPECT_EQ(init.status, 200u) << init.body;
        EXPECT_EQ(c.version(), "2025-11-25");
        auto const listed = result_of(answer_of(c, legacy_request(1, "tools/list")));
        json::object by_name;
        if (auto const* tools = listed.if_contains("tools"); tools && tools->is_array())
            for (auto const& t : tools->get_array())
                by_name[string_at(t.as_object(), "name")] = t;
        return by_name;
    }

    // tools/call with params.task: the Task of the CreateTaskResult (empty, and a test failure, otherwise).
    json::object call_as_task(mcp_http& c, int id, std::string_view tool, json::object args) {
        auto params = call_params(tool, std::move(args));
        params["task"] = json::object{{"ttl", 60000}};
        auto const response = answer_of(c, legacy_request(id, "tools/call", std::move(params)));
        auto const r = result_of(response);
        auto const* task = r.if_contains("task");
        if (!task || !task->is_object()) {
            ADD_FAILURE() << "no task: " << response;
            return {};
        }
        EXPECT_FALSE(r.contains("content")) << response;
        EXPECT_FALSE(r.contains("resultType")) << "a modern shape for a 2025-11-25 client: " << response;
        return task->get_object();
    }

    conformance_upstream upstream_;
    gateway_process gw_;
};

TEST_F(GatewayTasksLegacyClient, ToolsThatRunAsTasksUpstreamAreOfferedAsOptionalTasks) {
    mcp_http c(gw_.ep());
    auto const tools = open_session(c);
    for (char const* name : {"slow_compute", "failing_job", "confirm_delete"}) {
        SCOPED_TRACE(name);
        auto const* tool = tools.if_contains(name);
        ASSERT_TRUE(tool) << json::serialize(tools);
        auto const* execution = tool->as_object().if_contains("execution");
        ASSERT_TRUE(execution && execution->is_object()) << json::serialize(*tool);
        EXPECT_EQ(string_at(execution->get_object(), "taskSupport"), "optional") << json::serialize(*tool);
    }
    c.expect_schema_valid();
}

TEST_F(GatewayTasksLegacyClient, AskedForATaskTheCallAnswersATaskAndTasksResultTheUpstreamsResult) {
    mcp_http c(gw_.ep());
    ASSERT_TRUE(open_session(c).contains("slow_compute"));
    auto const task = call_as_task(c, 2, "slow_compute", {{"seconds", 1.5}, {"label", "pi"}});
    auto const id = string_at(task, "taskId");
    ASSERT_TRUE(is_task_id(id)) << json::serialize(task);
    EXPECT_EQ(string_at(task, "status"), "working") << json::serialize(task);
    EXPECT_TRUE(task.contains("createdAt")) << json::serialize(task);
    EXPECT_TRUE(task.contains("ttl") && task.at("ttl").is_int64()) << json::serialize(task);
    EXPECT_TRUE(task.contains("pollInterval") && task.at("pollInterval").is_int64()) << json::serialize(task);
    EXPECT_FALSE(task.contains("ttlMs")) << json::serialize(task);

    auto const now = result_of(answer_of(c, legacy_request(3, "tasks/get", {{"taskId", id}})));
    EXPECT_EQ(string_at(now, "taskId"), id);
    EXPECT_EQ(string_at(now, "status"), "working") << json::serialize(now);

    auto const result = result_of(answer_of(c, legacy_request(4, "tasks/result", {{"taskId", id}})));
    EXPECT_EQ(first_text(result), "Computed pi in 1.500000 s") << json::serialize(result);
    ASSERT_TRUE(has_related_task(result)) << json::serialize(result);
    EXPECT_EQ(string_at(result.at("_meta").at(related_task).as_object(), "taskId"), id);
    auto const after = result_of(answer_of(c, legacy_request(5, "tasks/get", {{"taskId", id}})));
    EXPECT_EQ(string_at(after, "status"), "completed") << json::serialize(after);
    c.expect_schema_valid();
}

// failing_job requires a task upstream: a modern upstream refuses a call that does not declare the tasks
// extension (-32021). Its tool error reaching the client shows the gateway asked the upstream with the
// extension and followed the upstream's own task to its end.
TEST_F(GatewayTasksLegacyClient, TheUpstreamsOwnTaskIsFollowedByTheGateway) {
    mcp_http c(gw_.ep());
    ASSERT_TRUE(open_session(c).contains("failing_job"));
    auto const task = call_as_task(c, 2, "failing_job", {});
    auto const id = string_at(task, "taskId");
    ASSERT_TRUE(is_task_id(id)) << json::serialize(task);
    auto const response = answer_of(c, legacy_request(3, "tasks/result", {{"taskId", id}}));
    auto const result = result_of(response);
    EXPECT_TRUE(is_error_result(result)) << response;
    EXPECT_EQ(first_text(result), "The job failed: its input could not be processed") << response;
    // 2025-11-25: a tool error is a failed task whose tasks/result is still the CallToolResult.
    auto const after = result_of(answer_of(c, legacy_request(4, "tasks/get", {{"taskId", id}})));
    EXPECT_EQ(string_at(after, "status"), "failed") << json::serialize(after);
}

#endif // DUET_CONFORMANCE_SERVER

// ---- calls the gateway holds as tasks of its own (--task-after)

// countdown n=20 runs 1 s upstream, never a task there: after 0.5 s the gateway makes it one. The client
// drops its connection as soon as it has the task; a client on a new connection later gets the result.
TEST(GatewayHeldTasks, ACallStillRunningAfterTaskAfterBecomesATaskThatOutlivesItsConnection) {
    gateway_process gw(demo_stdio_upstream(), {"--task-after", "0.5"});
    std::string id;
    {
        mcp_http c(gw.ep());
        auto const started = std::chrono::steady_clock::now();
        auto stream = c.open(modern_call(1, "countdown", {{"n", 20}}));
        ASSERT_TRUE(stream);
        auto const answered = stream->finish();
        auto const took = std::chrono::steady_clock::now() - started;
        stream.reset(); // the client hangs up at once
        id = modern_task_id(only_message(answered));
        ASSERT_FALSE(id.empty());
        EXPECT_GE(took, 450ms) << "a task before --task-after passed";
    } // the connection closes here, mid-call upstream

    task_watch watch(gw.ep(), id);
    auto const last = watch.until_terminal();
    EXPECT_EQ(string_at(last, "status"), "completed") << json::serialize(last);
    EXPECT_EQ(first_text(inline_result(last)), "liftoff after 20 steps") << json::serialize(last);
}

TEST(GatewayHeldTasks, WithoutTaskAfterTheSameCallIsAnsweredPlainly) {
    gateway_process gw(demo_stdio_upstream());
    mcp_http c(gw.ep());
    auto const response = answer_of(c, modern_call(1, "countdown", {{"n", 20}}));
    auto const result = result_of(response);
    EXPECT_NE(string_at(result, "resultType"), "task") << response;
    EXPECT_EQ(first_text(result), "liftoff after 20 steps") << response;
}

// An upstream that offers no tasks: the gateway holds its long calls as tasks only when told to.
TEST(GatewayHeldTasks, AnUpstreamWithoutTasksGetsHeldCallsOnlyWithTaskAfter) {
    taskless_upstream up;
    {
        SCOPED_TRACE("without --task-after");
        gateway_process gw(up.url());
        mcp_http c(gw.ep());
        auto const response = answer_of(c, modern_call(1, "countdown", {{"n", 20}}));
        auto const result = result_of(response);
        EXPECT_NE(string_at(result, "resultType"), "task") << response;
        EXPECT_EQ(first_text(result), "liftoff after 20 steps") << response;
    }
    {
        SCOPED_TRACE("with --task-after 0.5");
        gateway_process gw(up.url(), {"--task-after", "0.5"});
        mcp_http c(gw.ep());
        auto const id = modern_task_id(answer_of(c, modern_call(1, "countdown", {{"n", 20}})));
        ASSERT_FALSE(id.empty());
        task_watch watch(gw.ep(), id);
        auto const last = watch.until_terminal();
        EXPECT_EQ(first_text(inline_result(last)), "liftoff after 20 steps") << json::serialize(last);
    }
}

// ---- the client library through the gateway

#if defined(DUET_CONFORMANCE_SERVER)

client::client_options modern_options() {
    client::client_options o;
    o.mode = client::connect_mode::modern;
    o.verdicts = nullptr;
    return o;
}

class GatewayTasksClientLibrary : public ::testing::Test {
protected:
    GatewayTasksClientLibrary() : upstream_("--legacy-only"), gw_(upstream_.url(), {"--era", "legacy"}) {}

    bool connect(sync_client& c) {
        auto r = c.connect(client::http_target{gw_.url(), {}}, modern_options());
        EXPECT_TRUE(r) << r.error().to_string();
        return static_cast<bool>(r);
    }

    conformance_upstream upstream_;
    gateway_process gw_;
};

TEST_F(GatewayTasksClientLibrary, ACallFollowsTheGatewaysTaskToTheResult) {
    sync_client c;
    ASSERT_TRUE(connect(c));
    task_log log;
    client::request_options o;
    o.on_task = log.recorder();
    std::string const tool = "slow_compute";
    json::object const args{{"seconds", 1.5}, {"label", "e"}};
    auto r = c.run(c->async_call_tool(tool, args, o));
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(first_text(*r), "Computed e in 1.500000 s") << json::serialize(*r);
    EXPECT_FALSE(client::task_in(*r)) << json::serialize(*r);
    EXPECT_EQ(log.statuses(), statuses({"working", "completed"}));
    ASSERT_FALSE(log.seen.empty());
    EXPECT_TRUE(is_task_id(log.seen.front().id));
}

TEST_F(GatewayTasksClientLibrary, ADetachedCallsResultIsFetchedFromAnotherConnection) {
    std::string id;
    {
        sync_client c;
        ASSERT_TRUE(connect(c));
        client::request_options o;
        o.detach_task = true;
        std::string const tool = "slow_compute";
        json::object const args{{"seconds", 1.5}, {"label", "tau"}};
        auto r = c.run(c->async_call_tool(tool, args, o));
        ASSERT_TRUE(r) << r.error().to_string();
        auto const task = client::task_in(*r);
        ASSERT_TRUE(task) << "no task handle: " << json::serialize(*r);
        EXPECT_EQ(task->status, "working");
        id = task->id;
    } // this client disconnects
    ASSERT_TRUE(is_task_id(id)) << id;

    sync_client later;
    ASSERT_TRUE(connect(later));
    task_log log;
    client::request_options o;
    o.on_task = log.recorder();
    auto r = later.run(later->async_task_result(id, o));
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(first_text(*r), "Computed tau in 1.500000 s") << json::serialize(*r);
    ASSERT_FALSE(log.seen.empty());
    EXPECT_EQ(log.seen.back().status, "completed");
    EXPECT_EQ(log.seen.back().id, id);
}

#endif // DUET_CONFORMANCE_SERVER

} // namespace duet::test::gateway_tasks
