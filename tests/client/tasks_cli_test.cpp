// `duet call` and `duet task` with tool calls that become tasks, end to end: the real `duet` client against
// the real `duet serve` (its long_job tool becomes a task after 1 s for a client that can follow one). A
// followed task prints "task ID: STATUS - MESSAGE" lines on stderr and its result on stdout; --detach prints
// the id and exits, and later `duet task get|result|cancel ID URL` processes (new connections) come back to
// it; Ctrl-C while following leaves the task running unless --cancel-on-exit says otherwise.
#include "http/servers.hpp"
#include "support/child_process.hpp"
#include "support/files.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace duet::test::tasks_cli {

using namespace std::chrono_literals;

struct cli_run {
    int code = -1;
    std::string out;
    std::string err;
    std::chrono::milliseconds took{0};
};

// Runs `duet ARGS` through the shell with stdin from /dev/null (not a terminal), to its end.
cli_run run_duet(std::string const& args) {
    static int counter = 0;
    auto const base = ::testing::TempDir() + "duet-tasks-cli-" + std::to_string(::getpid()) + "-" +
                      std::to_string(counter++);
    std::string command = DUET_BINARY;
    command += " " + args + " </dev/null >" + base + ".out 2>" + base + ".err";
    auto const started = std::chrono::steady_clock::now();
    int const status = std::system(command.c_str());
    cli_run r;
    r.took =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = take_file(base + ".out");
    r.err = take_file(base + ".err");
    return r;
}

std::string const& stdio_demo() {
    static std::string const s = std::string(" -- ") + DUET_BINARY + " serve --stdio";
    return s;
}

// The "task ID: ..." lines of a command's stderr, in order.
std::vector<std::string> task_lines(std::string const& err) {
    std::vector<std::string> lines;
    std::istringstream in(err);
    for (std::string line; std::getline(in, line);)
        if (line.starts_with("task "))
            lines.push_back(line);
    return lines;
}

bool is_task_id(std::string const& s) {
    static std::regex const id("[0-9a-f]{32}");
    return std::regex_match(s, id);
}

// The id in the first "task ID: working" line of `err`; empty when there is none yet.
std::string working_task_id(std::string const& err) {
    static std::regex const line("task ([0-9a-f]{32}): working");
    std::smatch m;
    return std::regex_search(err, m, line) ? m[1].str() : std::string();
}

std::string without_newline(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
        s.pop_back();
    return s;
}

// `duet task get ID URL`: the task's status as printed ("ID<TAB>STATUS[<TAB>MESSAGE]"), or "" on failure.
std::string status_of(std::string const& id, std::string const& url) {
    auto const r = run_duet("task get " + id + " " + url);
    EXPECT_EQ(r.code, 0) << r.err;
    auto const line = without_newline(r.out);
    if (!line.starts_with(id + "\t"))
        return {};
    auto status = line.substr(id.size() + 1);
    return status.substr(0, status.find('\t'));
}

// `duet call URL long_job seconds=N` followed in a child process, until it prints its first working line.
struct followed_call {
    child_process child;
    std::string id;

    followed_call(std::string const& url, std::vector<std::string> const& extra)
        : child(argv(url, extra), child_process::input::null) {
        EXPECT_TRUE(wait_until([&] { return !(id = working_task_id(child.stderr_text())).empty(); }, 30s))
            << "no working task line; stderr:\n"
            << child.stderr_text();
    }

    static std::vector<std::string> argv(std::string const& url, std::vector<std::string> const& extra) {
        std::vector<std::string> a{DUET_BINARY, "call", url, "long_job", "seconds=60"};
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    }
};

TEST(DuetCliTasks, FollowsALongJobToItsResultPrintingEachStatus) {
    http::child_server server;
    auto const r = run_duet("call " + server.url() + " long_job seconds=5");
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, "done after 5 s\n") << r.err;
    auto const lines = task_lines(r.err);
    ASSERT_GE(lines.size(), 3u) << "expected several working lines and a completed one:\n" << r.err;
    auto const id = working_task_id(lines.front());
    ASSERT_TRUE(is_task_id(id)) << lines.front();
    for (std::size_t i = 0; i + 1 < lines.size(); ++i)
        EXPECT_TRUE(lines[i].starts_with("task " + id + ": working")) << lines[i] << "\n" << r.err;
    EXPECT_TRUE(lines.back().starts_with("task " + id + ": completed")) << r.err;
    // The seconds counted down reach the status lines (the task's statusMessage).
    EXPECT_NE(r.err.find("task " + id + ": working - "), std::string::npos) << r.err;
}

TEST(DuetCliTasks, DetachedTaskIsLookedAtAndFetchedByLaterCommands) {
    http::child_server server;
    auto const url = server.url();
    auto const detached = run_duet("call --detach " + url + " long_job seconds=3");
    ASSERT_EQ(detached.code, 0) << detached.err;
    auto const id = without_newline(detached.out);
    ASSERT_TRUE(is_task_id(id)) << "stdout: " << detached.out << "\nstderr: " << detached.err;
    // Back as soon as the call became a task (after 1 s), not when the job is done.
    EXPECT_LT(detached.took, 2500ms) << detached.err;
    EXPECT_NE(detached.err.find("duet task result " + id + " " + url), std::string::npos) << detached.err;

    // Each later command is a new process and connection: the client that went away comes back.
    EXPECT_EQ(status_of(id, url), "working");
    auto const fetched = run_duet("task result " + id + " " + url);
    EXPECT_EQ(fetched.code, 0) << fetched.err;
    EXPECT_EQ(fetched.out, "done after 3 s\n") << fetched.err;
    EXPECT_EQ(status_of(id, url), "completed");
}

TEST(DuetCliTasks, CancelledDetachedTaskShowsCancelled) {
    http::child_server server;
    auto const url = server.url();
    auto const detached = run_duet("call --detach " + url + " long_job seconds=60");
    ASSERT_EQ(detached.code, 0) << detached.err;
    auto const id = without_newline(detached.out);
    ASSERT_TRUE(is_task_id(id)) << detached.out;
    auto const cancelled = run_duet("task cancel " + id + " " + url);
    EXPECT_EQ(cancelled.code, 0) << cancelled.err;
    EXPECT_NE(cancelled.err.find("task " + id + ": cancellation sent"), std::string::npos) << cancelled.err;
    EXPECT_EQ(status_of(id, url), "cancelled");
    // Its result is the cancellation, not a hang.
    auto const result = run_duet("task result " + id + " " + url);
    EXPECT_EQ(result.code, 130) << result.err;
    EXPECT_TRUE(result.out.empty()) << result.out;
}

TEST(DuetCliTasks, UnknownTaskIdIsTheServersErrorExitFour) {
    http::child_server server;
    auto const r = run_duet("task get 0123456789abcdef0123456789abcdef " + server.url());
    EXPECT_EQ(r.code, 4) << r.err;
    EXPECT_NE(r.err.find("-32602"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
}

// long_job seconds=4 confirm=true asks "Go on?" after 2 s; declined, it stops there. Modern: the call is a
// task by then (an input_required status answered with tasks/update); legacy: a plain call asked in its
// session.
class DuetCliTaskQuestion : public ::testing::TestWithParam<char const*> {};

TEST_P(DuetCliTaskQuestion, DeclinedQuestionStopsTheJob) {
    std::string const era = GetParam();
    auto const r =
        run_duet("call --no-input --era " + era + " long_job seconds=4 confirm=true" + stdio_demo());
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, "stopped by the user after 2 s\n") << r.err;
    EXPECT_NE(
        r.err.find("duet: the server asks: long_job has worked 2 of 4 s. Go on? (declined: --no-input)"),
        std::string::npos)
        << r.err;
    auto const lines = task_lines(r.err);
    if (era == "modern") {
        ASSERT_FALSE(lines.empty()) << "the modern call never became a task:\n" << r.err;
        auto const id = working_task_id(lines.front());
        ASSERT_TRUE(is_task_id(id)) << r.err;
        EXPECT_NE(r.err.find("task " + id + ": input_required"), std::string::npos) << r.err;
        EXPECT_TRUE(lines.back().starts_with("task " + id + ": completed")) << r.err;
    } else {
        EXPECT_TRUE(lines.empty()) << "a legacy call not asked as a task is plain:\n" << r.err;
    }
}

INSTANTIATE_TEST_SUITE_P(BothEras, DuetCliTaskQuestion, ::testing::Values("modern", "legacy"));

TEST(DuetCliTasks, InterruptWithoutATerminalLeavesTheTaskRunning) {
    http::child_server server;
    auto const url = server.url();
    followed_call call(url, {});
    ASSERT_FALSE(call.id.empty());
    call.child.signal(SIGINT);
    EXPECT_EQ(call.child.wait_exit(30s), 130) << call.child.stderr_text();
    EXPECT_NE(call.child.stderr_text().find("duet: task " + call.id +
                                            " goes on; its result: duet task result " + call.id + " " + url),
              std::string::npos)
        << call.child.stderr_text();
    EXPECT_EQ(status_of(call.id, url), "working");
}

TEST(DuetCliTasks, InterruptWithCancelOnExitCancelsTheTask) {
    http::child_server server;
    auto const url = server.url();
    followed_call call(url, {"--cancel-on-exit"});
    ASSERT_FALSE(call.id.empty());
    call.child.signal(SIGINT);
    EXPECT_EQ(call.child.wait_exit(30s), 130) << call.child.stderr_text();
    EXPECT_EQ(call.child.stderr_text().find("goes on"), std::string::npos) << call.child.stderr_text();
    // The command sent tasks/cancel and had it acknowledged before it exited.
    EXPECT_EQ(status_of(call.id, url), "cancelled") << call.child.stderr_text();
}

} // namespace duet::test::tasks_cli
