// The client library following tools/call tasks end to end, in both eras: against the real `duet serve`
// (long_job: a task after 1 s, or at once for a 2025-11-25 client that asks) over HTTP and stdio, and against
// the conformance fixture server (duet-conformance-server: slow_compute, failing_job, protocol_error_job,
// confirm_delete, multi_input). What is checked is what a caller sees: the statuses on_task reports in
// order, the result (or the server's error), the handle a detached call returns, a task's state afterwards.
#include "client/sync_client.hpp"
#include "http/servers.hpp"
#include "support/child_process.hpp"
#include "support/files.hpp"
#include "support/task_log.hpp"
#include "support/wait.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <regex>
#include <string>
#include <vector>

namespace duet::test::tasks_client {

namespace json = boost::json;
using client_side::sync_client;
using namespace std::chrono_literals;

std::string text_of(json::object const& result) {
    auto const* content = result.if_contains("content");
    if (!content || !content->is_array() || content->get_array().empty())
        return {};
    auto const* b = content->get_array().front().if_object();
    return b && b->contains("text") && b->at("text").is_string() ? std::string(b->at("text").get_string())
                                                                 : std::string();
}

bool is_error(json::object const& result) {
    auto const* e = result.if_contains("isError");
    return e && e->is_bool() && e->get_bool();
}

bool is_task_id(std::string const& s) {
    static std::regex const id("[0-9a-f]{32}");
    return std::regex_match(s, id);
}

std::vector<std::string> statuses(std::initializer_list<char const*> s) {
    return {s.begin(), s.end()};
}

client::client_options modern_options() {
    client::client_options o;
    o.mode = client::connect_mode::modern;
    o.verdicts = nullptr;
    return o;
}

// Accepts every elicitation, answering each field of the requested schema: strings "Ada", booleans true.
// Counts the questions and keeps their messages.
struct accepting_user {
    std::shared_ptr<std::vector<std::string>> asked = std::make_shared<std::vector<std::string>>();

    client::input_handlers::handler handler() const {
        auto log = asked;
        return
            [log](json::object const& params) -> boost::system::result<json::object, jsonrpc::error_object> {
                auto const* message = params.if_contains("message");
                log->push_back(message && message->is_string() ? std::string(message->get_string()) : "");
                json::object content;
                auto const* schema = params.if_contains("requestedSchema");
                auto const* properties =
                    schema && schema->is_object() ? schema->get_object().if_contains("properties") : nullptr;
                if (properties && properties->is_object())
                    for (auto const& kv : properties->get_object()) {
                        auto const* type =
                            kv.value().is_object() ? kv.value().get_object().if_contains("type") : nullptr;
                        if (type && type->is_string() && type->get_string() == "boolean")
                            content[kv.key()] = true;
                        else
                            content[kv.key()] = "Ada";
                    }
                return json::object{{"action", "accept"}, {"content", std::move(content)}};
            };
    }
};

client::stdio_target stdio_demo() {
    return client::stdio_target{DUET_BINARY, {"serve", "--stdio"}};
}

// ---- the demo server's long_job, followed by a 2025-11-25 client that asks for a task

enum class via { http, stdio };

class ClientLegacyTasks : public ::testing::TestWithParam<via> {
protected:
    void SetUp() override {
        if (GetParam() == via::http)
            server_ = std::make_unique<http::child_server>();
    }
    client::server_target target() const {
        if (server_)
            return client::http_target{server_->url(), {}};
        return stdio_demo();
    }

    std::unique_ptr<http::child_server> server_;
};

TEST_P(ClientLegacyTasks, AskedForATaskItFollowsItToTheResult) {
    sync_client c;
    auto connected = c.connect(target(), client_side::legacy_options());
    ASSERT_TRUE(connected) << connected.error().to_string();
    ASSERT_EQ(c->version(), protocol::version::v2025_11_25);
    task_log log;
    client::request_options o;
    o.ask_for_task = true;
    o.on_task = log.recorder();
    std::string const tool = "long_job";
    json::object const args{{"seconds", 2}};
    auto r = c.run(c->async_call_tool(tool, args, o));
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(text_of(*r), "done after 2 s") << json::serialize(*r);
    EXPECT_FALSE(r->contains("task")) << "the result, not the handle: " << json::serialize(*r);
    EXPECT_EQ(log.statuses(), statuses({"working", "completed"}));
    EXPECT_TRUE(is_task_id(log.one_id()));
}

INSTANTIATE_TEST_SUITE_P(HttpAndStdio, ClientLegacyTasks, ::testing::Values(via::http, via::stdio),
                         [](auto const& row) { return row.param == via::http ? "http" : "stdio"; });

// The same client, not asking: long_job's tasks are optional, so the call is plain.
TEST(ClientLegacyPlainCall, NotAskedAnOptionalTaskToolIsAPlainCall) {
    sync_client c;
    ASSERT_TRUE(c.connect(stdio_demo(), client_side::legacy_options()));
    task_log log;
    client::request_options o;
    o.on_task = log.recorder();
    std::string const tool = "long_job";
    json::object const args{{"seconds", 1}};
    auto r = c.run(c->async_call_tool(tool, args, o));
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(text_of(*r), "done after 1 s");
    EXPECT_TRUE(log.seen.empty()) << "a task: " << log.seen.front().id;
}

// ---- a task cancelled while its follower waits for a tasks/get answer

// The caller's cancel arrives while a tasks/get poll is in flight: the follower must still cancel the task
// (nobody will fetch its result), as it does when the cancel arrives between polls. The server is a
// `duet serve --stdio` behind `tee` (its stdin copied to a file, so the test sees each request sent) and is
// stopped (SIGSTOP) so that the poll stays unanswered.
TEST(ClientTaskCancel, DuringAPollStillCancelsTheTask) {
    auto const base = ::testing::TempDir() + "duet-tasks-client-" + std::to_string(::getpid());
    auto const sent = base + ".sent";
    auto const pid_file = base + ".pid";
    // Neither writes to the suite's stderr: orphaned, they would keep the test runner's pipe open.
    std::string const server =
        std::string("echo $$ >") + pid_file + "; exec " + DUET_BINARY + " serve --stdio 2>/dev/null";
    client::stdio_target target{"/bin/sh",
                                {"-c", "tee " + sent + " 2>/dev/null | /bin/sh -c '" + server + "'"}};
    auto count_sent = [&](std::string const& method) {
        auto const text = read_file(sent);
        std::size_t n = 0;
        for (auto at = text.find("\"" + method + "\""); at != std::string::npos;
             at = text.find("\"" + method + "\"", at + 1))
            ++n;
        return n;
    };

    sync_client c;
    ASSERT_TRUE(c.connect(target, modern_options()));
    auto const server_pid = static_cast<pid_t>(std::atoi(read_file(pid_file).c_str()));
    ASSERT_GT(server_pid, 0);
    // However the test ends, the server it stops does not outlive it (the test started it).
    struct end_on_exit {
        pid_t pid;
        ~end_on_exit() {
            ::kill(pid, SIGCONT);
            ::kill(pid, SIGKILL);
        }
    } const end_server{server_pid};

    task_log log;
    auto cancel = std::make_shared<client::cancellation>();
    client::request_options o;
    o.cancel = cancel;
    o.on_task = log.recorder();
    std::string const tool = "long_job";
    json::object const args{{"seconds", 60}};
    auto call = boost::asio::co_spawn(c.io(), c->async_call_tool(tool, args, o), boost::asio::use_future);
    auto const ready = [&] {
        return call.wait_for(0s) == std::future_status::ready;
    };
    ASSERT_TRUE(c.pump_until([&] { return !log.seen.empty(); }));
    ASSERT_EQ(log.seen.front().status, "working");
    auto const id = log.seen.front().id;

    // Stopped, the server leaves the next poll unanswered: cancel while it is in flight (a poll is in flight
    // when more were sent than were answered, each answer being one on_task report after the first).
    ASSERT_EQ(::kill(server_pid, SIGSTOP), 0);
    ASSERT_TRUE(c.pump_until([&] { return count_sent("tasks/get") + 1 > log.seen.size(); }, 10s))
        << "no poll was sent";
    cancel->cancel();
    // The follower ends, or waits for the server to acknowledge its tasks/cancel.
    ASSERT_TRUE(c.pump_until([&] { return ready() || count_sent("tasks/cancel") > 0; }, 10s));
    ::kill(server_pid, SIGCONT);
    ASSERT_TRUE(c.pump_until(ready));
    auto r = call.get();
    ASSERT_FALSE(r) << json::serialize(*r);
    EXPECT_EQ(r.error().code, client::errc::cancelled) << r.error().to_string();
    EXPECT_EQ(count_sent("tasks/cancel"), 1u) << "the task was left running: no tasks/cancel was sent";
    auto now = c.run(c->async_get_task(id));
    ASSERT_TRUE(now) << now.error().to_string();
    EXPECT_EQ(now->status, "cancelled");
    std::remove(sent.c_str());
    std::remove(pid_file.c_str());
}

// ---- the conformance fixture server's task tools (built with the normal build, not the sanitized one)

#if defined(DUET_CONFORMANCE_SERVER)

// duet-conformance-server --port 0: HTTP only, its URL on stdout line 1.
class fixture_server {
public:
    fixture_server() : child_({DUET_CONFORMANCE_SERVER, "--port", "0"}, child_process::input::null) {
        url_ = child_.first_stdout_line(std::chrono::steady_clock::now() + 30s);
        if (url_.empty())
            ADD_FAILURE() << "the conformance server printed no URL; its stderr:\n" << child_.stderr_text();
    }
    ~fixture_server() {
        if (!child_.running())
            return;
        child_.signal(SIGTERM);
        [[maybe_unused]] bool const gone = child_.exited_by(std::chrono::steady_clock::now() + 5s);
    }
    fixture_server(fixture_server const&) = delete;
    fixture_server& operator=(fixture_server const&) = delete;

    [[nodiscard]] client::server_target target() const { return client::http_target{url_, {}}; }

private:
    child_process child_;
    std::string url_;
};

class ClientTasks : public ::testing::Test {
protected:
    // A client of `mode` connected to the fixture server, or a test failure.
    bool connect(sync_client& c, client::client_options o) {
        auto r = c.connect(server_.target(), std::move(o));
        EXPECT_TRUE(r) << r.error().to_string();
        return static_cast<bool>(r);
    }

    fixture_server server_;
};

TEST_F(ClientTasks, ModernCallFollowsTheTaskFromWorkingToCompleted) {
    sync_client c;
    ASSERT_TRUE(connect(c, modern_options()));
    task_log log;
    client::request_options o;
    o.on_task = log.recorder();
    std::string const tool = "slow_compute";
    json::object const args{{"seconds", 1.5}, {"label", "pi"}};
    auto r = c.run(c->async_call_tool(tool, args, o));
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(text_of(*r), "Computed pi in 1.500000 s") << json::serialize(*r);
    EXPECT_FALSE(client::task_in(*r)) << json::serialize(*r);
    EXPECT_EQ(log.statuses(), statuses({"working", "completed"}));
    EXPECT_GE(log.seen.size(), 3u) << "the first status, at least one poll while working, the end";
    EXPECT_TRUE(is_task_id(log.one_id()));
    // The server's progress reached the statuses as their message.
    bool progress_shown = false;
    for (auto const& t : log.seen)
        progress_shown = progress_shown || (t.status == "working" && t.status_message == "computing pi");
    EXPECT_TRUE(progress_shown);
}

TEST_F(ClientTasks, DetachedCallReturnsTheHandleAndALaterConnectionFetchesTheResult) {
    std::string id;
    {
        sync_client c;
        ASSERT_TRUE(connect(c, modern_options()));
        task_log log;
        client::request_options o;
        o.detach_task = true;
        o.on_task = log.recorder();
        std::string const tool = "slow_compute";
        json::object const args{{"seconds", 1.5}, {"label", "e"}};
        auto r = c.run(c->async_call_tool(tool, args, o));
        ASSERT_TRUE(r) << r.error().to_string();
        auto const task = client::task_in(*r);
        ASSERT_TRUE(task) << "no task handle: " << json::serialize(*r);
        EXPECT_TRUE(is_task_id(task->id)) << task->id;
        EXPECT_EQ(task->status, "working");
        EXPECT_FALSE(task->terminal());
        EXPECT_TRUE(log.seen.empty()) << "a detached task is not followed";
        id = task->id;
        auto now = c.run(c->async_get_task(id));
        ASSERT_TRUE(now) << now.error().to_string();
        EXPECT_EQ(now->id, id);
        EXPECT_EQ(now->status, "working");
    } // this client disconnects

    sync_client later;
    ASSERT_TRUE(connect(later, modern_options()));
    task_log log;
    client::request_options o;
    o.on_task = log.recorder();
    auto r = later.run(later->async_task_result(id, o));
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(text_of(*r), "Computed e in 1.500000 s") << json::serialize(*r);
    EXPECT_EQ(log.statuses(), statuses({"working", "completed"}));
    EXPECT_EQ(log.one_id(), id);
}

TEST_F(ClientTasks, RequiredTaskToolIsAskedAsATaskByALegacyClientAndEndsInIsError) {
    sync_client c;
    ASSERT_TRUE(connect(c, client_side::legacy_options()));
    ASSERT_EQ(c->version(), protocol::version::v2025_11_25);
    task_log log;
    client::request_options o; // no ask_for_task: the tool's execution.taskSupport "required" asks
    o.on_task = log.recorder();
    std::string const tool = "failing_job";
    json::object const args;
    auto r = c.run(c->async_call_tool(tool, args, o));
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_TRUE(is_error(*r)) << json::serialize(*r);
    EXPECT_EQ(text_of(*r), "The job failed: its input could not be processed");
    // 2025-11-25: a tool error is a failed task whose tasks/result is still the CallToolResult.
    EXPECT_EQ(log.statuses(), statuses({"working", "failed"}));
    EXPECT_TRUE(is_task_id(log.one_id()));
}

TEST_F(ClientTasks, RequiredTaskToolEndsInIsErrorForAModernClient) {
    sync_client c;
    ASSERT_TRUE(connect(c, modern_options()));
    task_log log;
    client::request_options o;
    o.on_task = log.recorder();
    std::string const tool = "failing_job";
    json::object const args;
    auto r = c.run(c->async_call_tool(tool, args, o));
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_TRUE(is_error(*r)) << json::serialize(*r);
    EXPECT_EQ(text_of(*r), "The job failed: its input could not be processed");
    EXPECT_EQ(log.statuses(), statuses({"working", "completed"})); // the extension: a completed task
}

TEST_F(ClientTasks, ElicitationInsideAModernTaskIsAnsweredByTheHandler) {
    accepting_user user;
    auto options = modern_options();
    options.inputs.elicitation = user.handler();
    sync_client c;
    ASSERT_TRUE(connect(c, options));
    task_log log;
    client::request_options o;
    o.on_task = log.recorder();
    std::string const tool = "confirm_delete";
    json::object const args{{"filename", "notes.txt"}};
    auto r = c.run(c->async_call_tool(tool, args, o));
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(text_of(*r), "Deleted notes.txt") << json::serialize(*r);
    EXPECT_EQ(*user.asked, std::vector<std::string>{"Delete notes.txt?"});
    EXPECT_TRUE(log.saw("input_required")) << "the question was not the task's";
    EXPECT_EQ(log.seen.back().status, "completed");
    EXPECT_TRUE(is_task_id(log.one_id()));
}

TEST_F(ClientTasks, ElicitationInsideALegacyTaskIsAnsweredByTheHandler) {
    accepting_user user;
    auto options = client_side::legacy_options();
    options.inputs.elicitation = user.handler();
    sync_client c;
    ASSERT_TRUE(connect(c, options));
    task_log log;
    client::request_options o;
    o.ask_for_task = true;
    o.on_task = log.recorder();
    std::string const tool = "confirm_delete";
    json::object const args{{"filename", "draft.md"}};
    auto r = c.run(c->async_call_tool(tool, args, o));
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(text_of(*r), "Deleted draft.md") << json::serialize(*r);
    EXPECT_EQ(*user.asked, std::vector<std::string>{"Delete draft.md?"});
    ASSERT_FALSE(log.seen.empty()) << "the call did not become a task";
    EXPECT_EQ(log.seen.back().status, "completed");
}

TEST_F(ClientTasks, TwoQuestionsAtOnceInsideATaskAreBothAnswered) {
    accepting_user user;
    auto options = modern_options();
    options.inputs.elicitation = user.handler();
    sync_client c;
    ASSERT_TRUE(connect(c, options));
    task_log log;
    client::request_options o;
    o.on_task = log.recorder();
    std::string const tool = "multi_input";
    json::object const args;
    auto r = c.run(c->async_call_tool(tool, args, o));
    ASSERT_TRUE(r) << r.error().to_string();
    auto const text = text_of(*r);
    EXPECT_TRUE(text.starts_with("Answers: ")) << text;
    EXPECT_NE(text.find(R"("name":"Ada")"), std::string::npos) << text;
    EXPECT_NE(text.find(R"("confirm":true)"), std::string::npos) << text;
    EXPECT_EQ(text.find("error"), std::string::npos) << text;
    EXPECT_THAT(*user.asked, ::testing::UnorderedElementsAre("Your name?", "Go on?"));
    EXPECT_TRUE(log.saw("input_required"));
    EXPECT_EQ(log.seen.back().status, "completed");
}

TEST_F(ClientTasks, FailedTaskIsTheServersRpcErrorInEachEra) {
    for (auto const mode : {client::connect_mode::modern, client::connect_mode::legacy}) {
        SCOPED_TRACE(mode == client::connect_mode::modern ? "modern" : "legacy");
        auto options = modern_options();
        options.mode = mode;
        sync_client c;
        ASSERT_TRUE(connect(c, options));
        task_log log;
        client::request_options o;
        o.ask_for_task = true; // legacy: protocol_error_job's tasks are optional
        o.on_task = log.recorder();
        std::string const tool = "protocol_error_job";
        json::object const args;
        auto r = c.run(c->async_call_tool(tool, args, o));
        ASSERT_FALSE(r) << json::serialize(*r);
        ASSERT_EQ(r.error().code, client::errc::rpc_error) << r.error().to_string();
        ASSERT_TRUE(r.error().rpc);
        EXPECT_EQ(r.error().rpc->code, -32603);
        EXPECT_NE(r.error().rpc->message.find("protocol_error_job failed on purpose"), std::string::npos)
            << r.error().rpc->message;
        EXPECT_EQ(log.statuses(), statuses({"working", "failed"}));
    }
}

TEST_F(ClientTasks, CancellingTheFollowCancelsTheTask) {
    sync_client c;
    ASSERT_TRUE(connect(c, modern_options()));
    task_log log;
    auto cancel = std::make_shared<client::cancellation>();
    client::request_options o;
    o.cancel = cancel;
    o.on_task = log.recorder();
    std::string const tool = "slow_compute";
    json::object const args{{"seconds", 60}};
    auto call = boost::asio::co_spawn(c.io(), c->async_call_tool(tool, args, o), boost::asio::use_future);
    ASSERT_TRUE(c.pump_until([&] { return !log.seen.empty(); }));
    EXPECT_EQ(log.seen.front().status, "working");
    auto const id = log.seen.front().id;
    cancel->cancel();
    ASSERT_TRUE(c.pump_until([&] { return call.wait_for(0s) == std::future_status::ready; }));
    auto r = call.get();
    ASSERT_FALSE(r) << json::serialize(*r);
    EXPECT_EQ(r.error().code, client::errc::cancelled) << r.error().to_string();
    auto now = c.run(c->async_get_task(id));
    ASSERT_TRUE(now) << now.error().to_string();
    EXPECT_EQ(now->status, "cancelled");
}

TEST_F(ClientTasks, WithoutTheExtensionACallIsPlain) {
    std::string const tool = "slow_compute";
    json::object const args{{"seconds", 0.5}};
    for (bool const tasks : {false, true}) {
        SCOPED_TRACE(tasks ? "tasks declared" : "tasks not declared");
        auto options = modern_options();
        options.tasks = tasks;
        sync_client c;
        ASSERT_TRUE(connect(c, options));
        task_log log;
        client::request_options o;
        o.on_task = log.recorder();
        auto r = c.run(c->async_call_tool(tool, args, o));
        ASSERT_TRUE(r) << r.error().to_string();
        EXPECT_EQ(text_of(*r), "Computed compute in 0.500000 s") << json::serialize(*r);
        // The same call is a task (after 200 ms) only for a client that declares the extension.
        EXPECT_EQ(log.seen.empty(), !tasks);
    }
}

#endif // DUET_CONFORMANCE_SERVER

} // namespace duet::test::tasks_client
