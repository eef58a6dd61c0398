// Tasks shared by two `duet serve --store` processes (src/store/redis/task_store.cpp, and the event bus that
// src/server/task_registry.cpp announces changes on): a task made on one process is followed on the other, an
// answer (tasks/update) or a cancellation (tasks/cancel) taken by the other reaches the handler running on
// the first, a listen on the other hears the task change; a 2025-11-25 session's task is fetched through the
// other (tasks/result, tasks/list), its status notifications reach the session's stream held by the other,
// and a cancellation through the other answers a tasks/result waiting on the first; nobody else finds the
// task on either. Real processes and a real redis-server on loopback; A runs every handler, B is where the
// client follows it, as a round-robin load balancer would send it. Whether a handler still runs is read from
// Redis itself (`redis-cli monitor`): a running long_job touches its task's record every second.
//
// The demo server's long_job runs as a task after 1 s, reports "N s to go" each second, and with confirm=true
// asks whether to go on halfway. No flow here uses requestState (the task begins before any input round), so
// the processes need no shared --state-key-file.
#include "http/mcp_http.hpp"
#include "http/servers.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "support/child_process.hpp"
#include "support/redis_server.hpp"
#include "support/schema_validator.hpp"
#include "support/wait.hpp"

#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {
namespace shared_tasks_suite {

using namespace duet;
using namespace duet::test;
using namespace duet::test::http;
using namespace std::chrono_literals;
namespace json = boost::json;
using steady = std::chrono::steady_clock;

constexpr std::string_view tasks_extension = "io.modelcontextprotocol/tasks";
constexpr std::string_view related_task_key = "io.modelcontextprotocol/related-task";
constexpr char const* legacy_version = "2025-11-25";
constexpr char const* redis_cli = "/usr/bin/redis-cli";

/// A modern client's per-request capabilities: the tasks extension, and elicitation (long_job's question).
json::object modern_task_caps() {
    return {{"extensions", {{tasks_extension, json::object{}}}}, {"elicitation", json::object{}}};
}

/// A 2025-11-25 client's capabilities: tasks (list, cancel, elicitation as a task) and elicitation.
json::object legacy_task_caps() {
    return {{"tasks",
             {{"list", json::object{}},
              {"cancel", json::object{}},
              {"requests", {{"elicitation", {{"create", json::object{}}}}}}}},
            {"elicitation", json::object{}}};
}

std::string status_of(json::object const& task) {
    auto const* s = task.if_contains("status");
    return s && s->is_string() ? std::string(s->get_string()) : std::string("(no status)");
}

std::string task_id_of(json::object const& task) {
    auto const* id = task.if_contains("taskId");
    return id && id->is_string() ? std::string(id->get_string()) : std::string();
}

std::string status_message_of(json::object const& task) {
    auto const* m = task.if_contains("statusMessage");
    return m && m->is_string() ? std::string(m->get_string()) : std::string();
}

bool is_terminal(json::object const& task) {
    auto const s = status_of(task);
    return s == "completed" || s == "failed" || s == "cancelled";
}

/// The text of a completed modern task's result.
std::string result_text(json::object const& task) {
    auto const* r = task.if_contains("result");
    return r && r->is_object() ? first_text(r->get_object()) : std::string();
}

/// The answer to request `id` in a reply, whether a JSON body or an SSE stream carried it.
json::value answer_to(reply const& r, json::value const& id) {
    for (auto const& m : r.messages())
        if (is_response_to(m, id))
            return m;
    ADD_FAILURE() << "no answer to " << id << " (HTTP " << r.status << "): " << r.body;
    return json::object{};
}

/// A 2025-11-25 session's long_job of `seconds`, asked as a task (request 2): the CreateTaskResult's task, or
/// a test failure and an empty object.
json::object legacy_long_job_task(mcp_http& session, int seconds) {
    auto params = call_params("long_job", {{"seconds", seconds}});
    params["task"] = {{"ttl", 60000}};
    auto const made = answer_to(session.post(legacy_request(2, "tools/call", params)), 2);
    auto const created = result_of(made);
    auto const* task = created.if_contains("task");
    if (!task || !task->is_object()) {
        ADD_FAILURE() << "not a task: " << made;
        return {};
    }
    return task->get_object();
}

/// A modern client of one process declaring the tasks extension: numbered requests, Mcp-Name set to the task
/// id on the tasks methods (the extension's routing header).
class modern_caller {
public:
    explicit modern_caller(endpoint ep) : http_(std::move(ep)) {}

    [[nodiscard]] mcp_http& http() noexcept { return http_; }

    json::value call(std::string_view method, json::object params) {
        std::vector<header_field> extra;
        if (auto const* t = params.if_contains("taskId"); t && t->is_string())
            extra.push_back({"Mcp-Name", std::string(t->get_string())});
        json::value const id = next_id_++;
        return answer_to(http_.post(modern_request(id, method, std::move(params), modern_task_caps()), extra),
                         id);
    }

    /// tools/call long_job: the CreateTaskResult (checked for its shape).
    json::object start_long_job(json::object arguments) {
        auto const answer = call("tools/call", call_params("long_job", std::move(arguments)));
        auto const created = result_of(answer);
        EXPECT_EQ(created.if_contains("resultType") ? created.at("resultType") : json::value(), "task")
            << answer;
        EXPECT_EQ(task_id_of(created).size(), 32u) << answer;
        EXPECT_EQ(status_of(created), "working") << answer;
        return created;
    }

    json::object get(std::string const& task) { return result_of(call("tasks/get", {{"taskId", task}})); }

    /// tasks/get every 100 ms until `done` holds of the task (a test failure when `limit` passes first);
    /// every task seen, in order.
    std::vector<json::object> poll(std::string const& task, std::function<bool(json::object const&)> done,
                                   std::chrono::milliseconds limit) {
        std::vector<json::object> seen;
        bool const reached = wait_until(
            [&] {
                seen.push_back(get(task));
                return done(seen.back());
            },
            limit, 100ms);
        EXPECT_TRUE(reached) << "on " << http_.ep().authority() << ", task " << task
                             << " never got there; last " << json::value(seen.back());
        return seen;
    }

private:
    mcp_http http_;
    std::int64_t next_id_ = 1;
};

/// Every command redis-server runs, as `redis-cli monitor` prints them, read on a thread of its own (so the
/// pipe never fills) with the time each line was read.
class redis_monitor {
public:
    explicit redis_monitor(std::uint16_t port)
        : child_({redis_cli, "-p", std::to_string(port), "monitor"}, child_process::input::null),
          reader_([this] { read_lines(); }) {}
    ~redis_monitor() {
        stop_ = true;
        reader_.join();
    }
    redis_monitor(redis_monitor const&) = delete;
    redis_monitor& operator=(redis_monitor const&) = delete;

    /// Whether MONITOR was accepted (its "OK" came) in time.
    bool ready() {
        return wait_until(
            [&] {
                std::lock_guard lock(mutex_);
                return !lines_.empty();
            },
            10s);
    }

    /// The commands clients sent since `from` that name `key` (not the commands a script ran itself).
    std::vector<std::string> commands_on(std::string const& key, steady::time_point from) const {
        std::vector<std::string> out;
        std::lock_guard lock(mutex_);
        for (auto const& l : lines_)
            if (l.at >= from && names(l.text, key))
                out.push_back(l.text);
        return out;
    }

    /// When the last client command naming `key` was read; `otherwise` when none was.
    steady::time_point last_command_on(std::string const& key, steady::time_point otherwise) const {
        std::lock_guard lock(mutex_);
        for (auto it = lines_.rbegin(); it != lines_.rend(); ++it)
            if (names(it->text, key))
                return std::max(it->at, otherwise);
        return otherwise;
    }

private:
    struct line {
        steady::time_point at;
        std::string text;
    };

    static bool names(std::string const& text, std::string const& key) {
        return text.find(" lua] ") == std::string::npos && text.find('"' + key + '"') != std::string::npos;
    }

    void read_lines() {
        std::string pending;
        while (!stop_) {
            pollfd p{child_.out(), POLLIN, 0};
            if (::poll(&p, 1, 50) <= 0)
                continue;
            char buf[8192];
            auto const got = ::read(child_.out(), buf, sizeof buf);
            if (got <= 0)
                return;
            pending.append(buf, static_cast<std::size_t>(got));
            auto const now = steady::now();
            std::lock_guard lock(mutex_);
            for (auto nl = pending.find('\n'); nl != std::string::npos; nl = pending.find('\n')) {
                lines_.push_back({now, pending.substr(0, nl)});
                pending.erase(0, nl + 1);
            }
        }
    }

    child_process child_;
    mutable std::mutex mutex_;
    std::vector<line> lines_;
    std::atomic<bool> stop_{false};
    std::thread reader_; // last: it reads the members above
};

class SharedTasks : public ::testing::Test {
protected:
    void SetUp() override {
        if (auto why = test::redis_server::missing(); !why.empty())
            GTEST_SKIP() << why;
        redis_ = std::make_unique<test::redis_server>();
        prefix_ = "shared-tasks:" + std::to_string(::getpid()) + ':' +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name() + ':';
        for (auto& p : processes_)
            p = std::make_unique<child_server>(
                std::vector<std::string>{"--store", redis_->url(), "--store-prefix", prefix_});
        for (auto& p : processes_)
            ASSERT_NE(p->ep().port, 0) << p->stderr_text();
    }
    child_server& a() { return *processes_[0]; }
    child_server& b() { return *processes_[1]; }
    /// The Redis key of a task's record (src/store/redis/task_store.cpp).
    std::string record_key(std::string const& id) const { return prefix_ + "task:" + id; }

    std::unique_ptr<test::redis_server> redis_; // first: the processes end before it
    std::string prefix_;
    std::unique_ptr<child_server> processes_[2];
};

TEST_F(SharedTasks, ATaskMadeOnOneProcessIsFollowedOnAnother) {
    modern_caller on_a(a().ep()), on_b(b().ep());
    auto const id = task_id_of(on_a.start_long_job({{"seconds", 3}}));
    ASSERT_FALSE(id.empty());
    // Durably made before it was answered (SEP-2663 §Task Creation): B finds it at once.
    auto const first = on_b.get(id);
    EXPECT_EQ(status_of(first), "working") << json::value(first);
    EXPECT_EQ(task_id_of(first), id);

    auto const seen = on_b.poll(id, is_terminal, 10s);
    std::vector<std::string> progress;
    for (auto const& t : seen)
        if (status_of(t) == "working" && !status_message_of(t).empty())
            progress.push_back(status_message_of(t));
    ASSERT_FALSE(progress.empty()) << "B never saw the handler's progress as the statusMessage";
    for (auto const& m : progress)
        EXPECT_TRUE(m.ends_with(" s to go")) << m;
    auto const& last = seen.back();
    EXPECT_EQ(status_of(last), "completed") << json::value(last);
    EXPECT_EQ(result_text(last), "done after 3 s") << json::value(last);
    auto const* result = last.if_contains("result");
    ASSERT_TRUE(result && result->is_object()) << json::value(last);
    EXPECT_FALSE(is_error_result(result->get_object())) << json::value(last);

    // A, which ran it, says the same.
    auto const on_its_own = on_a.get(id);
    EXPECT_EQ(status_of(on_its_own), "completed") << json::value(on_its_own);
    EXPECT_EQ(on_its_own.if_contains("result") ? on_its_own.at("result") : json::value(), *result);
    on_a.http().expect_schema_valid();
    on_b.http().expect_schema_valid();
}

TEST_F(SharedTasks, AnAnswerGivenToAnotherProcessReachesTheHandler) {
    modern_caller on_a(a().ep()), on_b(b().ep());
    auto const id = task_id_of(on_a.start_long_job({{"seconds", 4}, {"confirm", true}}));
    ASSERT_FALSE(id.empty());
    auto const asking =
        on_b.poll(
                id, [](json::object const& t) { return status_of(t) == "input_required" || is_terminal(t); },
                8s)
            .back();
    ASSERT_EQ(status_of(asking), "input_required") << json::value(asking);
    auto const* requests = asking.if_contains("inputRequests");
    ASSERT_TRUE(requests && requests->is_object() && requests->get_object().size() == 1u)
        << json::value(asking);
    std::string const key(requests->get_object().begin()->key());
    auto const& question = requests->get_object().begin()->value();
    EXPECT_EQ(question.at("method"), "elicitation/create") << json::value(asking);
    auto const asking_on_a = on_a.get(id);
    EXPECT_EQ(asking_on_a.if_contains("inputRequests") ? asking_on_a.at("inputRequests") : json::value(),
              *requests)
        << "A and B disagree on what the task asks: " << json::value(asking_on_a);

    auto const ack = on_b.call(
        "tasks/update",
        {{"taskId", id}, {"inputResponses", {{key, {{"action", "accept"}, {"content", json::object{}}}}}}});
    auto const acked = result_of(ack);
    EXPECT_EQ(acked.if_contains("resultType") ? acked.at("resultType") : json::value(), "complete") << ack;

    // The handler runs on A: only the answer reaching it lets it go on to its end (a decline, or no answer,
    // ends it otherwise or never).
    auto const last = on_b.poll(id, is_terminal, 8s).back();
    EXPECT_EQ(status_of(last), "completed") << json::value(last);
    EXPECT_EQ(result_text(last), "done after 4 s") << json::value(last);
    auto const on_its_own = on_a.get(id);
    EXPECT_EQ(status_of(on_its_own), "completed") << json::value(on_its_own);
    EXPECT_EQ(result_text(on_its_own), "done after 4 s") << json::value(on_its_own);
    on_a.http().expect_schema_valid();
    on_b.http().expect_schema_valid();
}

TEST_F(SharedTasks, ACancellationTakenByAnotherProcessStopsTheHandler) {
    if (::access(redis_cli, X_OK) != 0)
        GTEST_SKIP() << redis_cli
                     << " is not installed (scripts/bootstrap installs redis-server, which has it)";
    // What shows the handler on A at work: each second its progress note reads the task's record in Redis
    // (and writes it while the task runs). Once it has stopped, nothing names the record.
    redis_monitor redis_commands(redis_->port());
    ASSERT_TRUE(redis_commands.ready());
    modern_caller on_a(a().ep()), on_b(b().ep());
    auto const id = task_id_of(on_a.start_long_job({{"seconds", 30}}));
    ASSERT_FALSE(id.empty());
    auto const key = record_key(id);
    auto const working =
        on_b.poll(
                id, [](json::object const& t) { return !status_message_of(t).empty() || is_terminal(t); }, 5s)
            .back();
    ASSERT_EQ(status_of(working), "working") << json::value(working);

    // The handler at work, seen with nobody asking about the task: its notes keep coming.
    auto const quiet_from = steady::now();
    EXPECT_TRUE(wait_until([&] { return redis_commands.commands_on(key, quiet_from).size() >= 3; }, 5s))
        << "the running handler's progress never reached Redis; the observation below would prove nothing";

    auto const ack = on_b.call("tasks/cancel", {{"taskId", id}});
    auto const acked = result_of(ack);
    EXPECT_EQ(acked.if_contains("resultType") ? acked.at("resultType") : json::value(), "complete") << ack;
    auto const cancelled_on_a = on_a.get(id);
    auto const cancelled_on_b = on_b.get(id);
    EXPECT_EQ(status_of(cancelled_on_a), "cancelled") << json::value(cancelled_on_a);
    EXPECT_EQ(status_of(cancelled_on_b), "cancelled") << json::value(cancelled_on_b);
    auto const asked_last = steady::now();

    // The handler wakes within a second, sees the cancellation and ends (one last look at the record). Had it
    // not heard it, it would touch the record every second for 25 more: 2.5 s without a command naming the
    // record shows it stopped.
    auto const quiet_for = 2500ms;
    bool const stopped = wait_until(
        [&] { return steady::now() - redis_commands.last_command_on(key, asked_last) >= quiet_for; }, 8s,
        50ms);
    auto const after = redis_commands.commands_on(key, asked_last);
    EXPECT_TRUE(stopped) << "the handler on A still works on the cancelled task: " << after.size()
                         << " commands on its record since the cancellation, the last: "
                         << (after.empty() ? std::string("none") : after.back().substr(0, 160));

    // And the task is left as the cancellation made it, on both.
    for (auto* c : {&on_a, &on_b}) {
        auto const now = c->get(id);
        EXPECT_EQ(status_of(now), "cancelled") << json::value(now);
        EXPECT_EQ(now.at("lastUpdatedAt"), cancelled_on_a.at("lastUpdatedAt")) << json::value(now);
        EXPECT_EQ(status_message_of(now), status_message_of(cancelled_on_a)) << json::value(now);
    }
    on_a.http().expect_schema_valid();
    on_b.http().expect_schema_valid();
}

// The process running a task is killed: nothing will finish the task, so B's next read fails it (once A's
// liveness in Redis has lapsed, 3 s) with an error saying so, rather than showing it working until its TTL;
// and it stays failed.
TEST_F(SharedTasks, ATaskWhoseProcessWasKilledFailsAtItsNextRead) {
    modern_caller on_a(a().ep()), on_b(b().ep());
    auto const id = task_id_of(on_a.start_long_job({{"seconds", 30}}));
    ASSERT_FALSE(id.empty());
    EXPECT_EQ(status_of(on_b.get(id)), "working");
    a().signal(SIGKILL); // reaped by the fixture's end

    auto const seen = on_b.poll(id, is_terminal, 10s);
    auto const& last = seen.back();
    ASSERT_EQ(status_of(last), "failed") << json::value(last);
    auto const* error = last.if_contains("error");
    ASSERT_TRUE(error && error->is_object()) << json::value(last);
    EXPECT_EQ(error->as_object().at("code"), -32603) << json::value(last);
    auto const* message = error->as_object().if_contains("message");
    ASSERT_TRUE(message && message->is_string()) << json::value(last);
    EXPECT_NE(std::string_view(message->get_string()).find("process running this task ended"),
              std::string_view::npos)
        << json::value(last);
    for (int i = 0; i < 3; ++i)
        EXPECT_EQ(status_of(on_b.get(id)), "failed");
    on_b.http().expect_schema_valid();
}

TEST_F(SharedTasks, AListenOnAnotherProcessHearsTheTask) {
    modern_caller on_a(a().ep()), on_b(b().ep());
    auto const id = task_id_of(on_a.start_long_job({{"seconds", 4}}));
    ASSERT_FALSE(id.empty());
    json::value const listen_id = "task-listen";
    auto listen = on_b.http().open(
        modern_request(listen_id, "subscriptions/listen",
                       {{"notifications", {{"taskIds", json::array{json::value(id)}}}}}, modern_task_caps()));
    ASSERT_EQ(listen->status(), 200u);
    auto const ack = on_b.http().next(*listen);
    ASSERT_TRUE(is_notification(ack, "notifications/subscriptions/acknowledged")) << ack;
    EXPECT_EQ(ack.at("params").at("notifications").at("taskIds"), json::value(json::array{json::value(id)}))
        << "B's listen did not take the task A runs: " << ack;

    // Each change A makes, heard on B's stream, to the end.
    std::vector<json::object> heard;
    while (heard.empty() || !is_terminal(heard.back())) {
        auto const e = listen->next(10s);
        if (!e)
            break; // the stream ended, or the time is up (a test failure then)
        auto const m = on_b.http().log().record_received(e->data);
        ASSERT_TRUE(is_notification(m, "notifications/tasks")) << "only task notifications here: " << m;
        EXPECT_EQ(subscription_id_of(m), listen_id) << m;
        heard.push_back(m.at("params").as_object());
        EXPECT_EQ(task_id_of(heard.back()), id) << m;
    }
    listen->close();
    ASSERT_FALSE(heard.empty()) << "B's listen heard nothing of the task";
    // The handler's progress while it worked, then its end.
    bool progress = false;
    for (auto const& t : heard)
        progress = progress || (status_of(t) == "working" && status_message_of(t).ends_with(" s to go"));
    EXPECT_TRUE(progress) << "no progress heard before the end, first " << json::value(heard.front());
    EXPECT_EQ(status_of(heard.back()), "completed") << json::value(heard.back());
    EXPECT_EQ(result_text(heard.back()), "done after 4 s") << json::value(heard.back());
    on_b.http().expect_schema_valid();
}

TEST_F(SharedTasks, ALegacyTaskIsFetchedThroughAnotherProcess) {
    mcp_http on_a(a().ep());
    on_a.initialize(legacy_version, legacy_task_caps());
    mcp_http on_b(b().ep(), on_a); // the same session, served by B from Redis
    auto const task = legacy_long_job_task(on_a, 2);
    auto const id = task_id_of(task);
    ASSERT_EQ(id.size(), 32u) << json::value(task);
    EXPECT_EQ(status_of(task), "working") << json::value(task);

    // tasks/result on B waits for the handler on A to end.
    auto const started = steady::now();
    auto const fetched = answer_to(on_b.post(legacy_request(3, "tasks/result", {{"taskId", id}})), 3);
    auto const result = result_of(fetched);
    EXPECT_EQ(first_text(result), "done after 2 s") << fetched;
    EXPECT_FALSE(is_error_result(result)) << fetched;
    auto const* meta = result.if_contains("_meta");
    ASSERT_TRUE(meta && meta->is_object()) << fetched;
    EXPECT_EQ(meta->get_object().if_contains(related_task_key) ? meta->get_object().at(related_task_key)
                                                               : json::value(),
              (json::object{{"taskId", id}}))
        << fetched;
    EXPECT_GE(steady::now() - started, 500ms) << "tasks/result answered before the task could have ended";

    auto const listed = answer_to(on_b.post(legacy_request(4, "tasks/list")), 4);
    auto const list = result_of(listed);
    ASSERT_TRUE(list.contains("tasks") && list.at("tasks").is_array()) << listed;
    bool found = false;
    for (auto const& t : list.at("tasks").as_array())
        if (task_id_of(t.as_object()) == id) {
            found = true;
            EXPECT_EQ(status_of(t.as_object()), "completed") << listed;
        }
    EXPECT_TRUE(found) << "B's tasks/list left out the session's task: " << listed;
    auto const got = answer_to(on_b.post(legacy_request(5, "tasks/get", {{"taskId", id}})), 5);
    EXPECT_EQ(status_of(result_of(got)), "completed") << got;
    on_a.expect_schema_valid();
    on_b.expect_schema_valid();
}

TEST_F(SharedTasks, ALegacyTasksStatusReachesTheSessionsStreamOnAnotherProcess) {
    mcp_http on_a(a().ep());
    on_a.initialize(legacy_version, legacy_task_caps());
    mcp_http on_b(b().ep(), on_a);
    auto stream = on_b.open_spec(stream_spec(on_b)); // the session's GET stream, held by B
    ASSERT_EQ(stream->status(), 200u);
    auto const task = legacy_long_job_task(on_a, 2);
    auto const id = task_id_of(task);
    ASSERT_EQ(id.size(), 32u) << json::value(task);

    // What the handler on A does to the task is told on B's stream, to its end (each notification checked
    // against the schema below).
    std::vector<json::value> heard;
    while (heard.empty() || !is_terminal(heard.back().at("params").as_object())) {
        auto const m = stream->next_message(10s);
        if (m.is_null())
            break; // the stream ended, or the time is up (a test failure then)
        if (!is_notification(m, "notifications/tasks/status"))
            continue; // progress and log messages of the call travel here too
        heard.push_back(m);
        EXPECT_EQ(task_id_of(m.at("params").as_object()), id) << m;
    }
    stream->close();
    ASSERT_FALSE(heard.empty()) << "B's stream heard nothing of the task";
    EXPECT_EQ(status_of(heard.back().at("params").as_object()), "completed") << heard.back();
    if (auto* schemas = schemas_or_skip())
        for (auto const& m : heard) {
            auto const verdict = schemas->validate(legacy_version, "TaskStatusNotification", m);
            EXPECT_TRUE(verdict.ok) << m << ": " << verdict.errors;
        }
    on_a.expect_schema_valid();
}

TEST_F(SharedTasks, ALegacyCancellationThroughAnotherProcessAnswersTheWaiterOnTheFirst) {
    mcp_http on_a(a().ep());
    on_a.initialize(legacy_version, legacy_task_caps());
    mcp_http on_b(b().ep(), on_a);
    auto const task = legacy_long_job_task(on_a, 30);
    auto const id = task_id_of(task);
    ASSERT_EQ(id.size(), 32u) << json::value(task);

    // A tasks/result waiting on A, the process running the handler (its answer, head and all, comes when the
    // task ends); cancelled through B once it had time to start waiting.
    auto const result_request = legacy_request(3, "tasks/result", {{"taskId", id}});
    on_a.log().record_sent(result_request);
    response_stream waiting(on_a.ep(), on_a.spec_for(result_request), /*read_head=*/false);
    std::this_thread::sleep_for(300ms);
    auto const cancelled = answer_to(on_b.post(legacy_request(4, "tasks/cancel", {{"taskId", id}})), 4);
    EXPECT_EQ(status_of(result_of(cancelled)), "cancelled") << cancelled; // 2025-11-25 answers with the task
    // The waiter is answered: a cancelled task has no result to give.
    waiting.read_head(5s);
    json::value answer;
    for (auto const& m : waiting.finish(5s).messages()) {
        on_a.log().record_received(json::serialize(m));
        if (is_response_to(m, 3))
            answer = m;
    }
    ASSERT_FALSE(answer.is_null()) << "A's tasks/result never answered after the cancellation";
    EXPECT_NE(code_of(answer), 0) << answer;
    for (auto* c : {&on_a, &on_b}) {
        auto const got = answer_to(c->post(legacy_request(5, "tasks/get", {{"taskId", id}})), 5);
        EXPECT_EQ(status_of(result_of(got)), "cancelled") << "on " << c->ep().authority() << ": " << got;
    }
    on_a.expect_schema_valid();
    on_b.expect_schema_valid();
}

TEST_F(SharedTasks, AnotherCallerCannotSeeTheTaskOnAnyProcess) {
    mcp_http owner_on_a(a().ep());
    owner_on_a.initialize(legacy_version, legacy_task_caps());
    auto const task = legacy_long_job_task(owner_on_a, 3);
    auto const id = task_id_of(task);
    ASSERT_EQ(id.size(), 32u) << json::value(task);
    // The owner reaches it through either process.
    mcp_http owner_on_b(b().ep(), owner_on_a);
    auto const own = answer_to(owner_on_b.post(legacy_request(3, "tasks/get", {{"taskId", id}})), 3);
    EXPECT_EQ(task_id_of(result_of(own)), id) << own;

    // Another session, opened on B, served by both.
    mcp_http other_on_b(b().ep());
    other_on_b.initialize(legacy_version, legacy_task_caps());
    mcp_http other_on_a(a().ep(), other_on_b);
    int request = 10;
    for (auto* c : {&other_on_a, &other_on_b}) {
        for (auto const* method : {"tasks/get", "tasks/result", "tasks/cancel"}) {
            auto const r = answer_to(c->post(legacy_request(request, method, {{"taskId", id}})), request);
            ++request;
            EXPECT_EQ(code_of(r), -32602) << method << " on " << c->ep().authority() << ": " << r;
        }
        auto const listed = answer_to(c->post(legacy_request(request, "tasks/list")), request);
        ++request;
        auto const list = result_of(listed);
        ASSERT_TRUE(list.contains("tasks") && list.at("tasks").is_array()) << listed;
        for (auto const& t : list.at("tasks").as_array())
            EXPECT_NE(task_id_of(t.as_object()), id)
                << "listed to another session on " << c->ep().authority();
    }
    // Nor does a modern caller (no identity: the anonymous callers' own tasks) find it.
    for (auto* ep : {&a().ep(), &b().ep()}) {
        modern_caller anonymous(*ep);
        auto const r = anonymous.call("tasks/get", {{"taskId", id}});
        EXPECT_EQ(code_of(r), -32602) << "modern tasks/get on " << ep->authority() << ": " << r;
    }
    // The refused cancellations left it running.
    auto const still = answer_to(owner_on_a.post(legacy_request(4, "tasks/get", {{"taskId", id}})), 4);
    EXPECT_EQ(status_of(result_of(still)), "working") << still;
    other_on_a.expect_schema_valid();
    other_on_b.expect_schema_valid();
    owner_on_b.expect_schema_valid();
}

} // namespace shared_tasks_suite
} // namespace
