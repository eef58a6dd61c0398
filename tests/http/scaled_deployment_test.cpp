// The deployment the issue describes (#28), end to end: redis-server, three `duet serve --store` processes
// and nginx round-robin in front with no stickiness (tests/scale/deployment). One client's legacy session
// goes on through whichever process nginx picks, and goes on when one of them is killed mid-run: its stream
// resumes elsewhere with every event that was logged.
#include "http/mcp_http.hpp"
#include "http/servers.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "support/child_process.hpp"
#include "support/redis_server.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

using namespace duet;
using namespace duet::test;
using namespace duet::test::http;
namespace json = boost::json;

class ScaledDeployment : public ::testing::Test {
protected:
    void SetUp() override {
        if (auto why = redis_server::missing(); !why.empty())
            GTEST_SKIP() << why;
        if (::access("/usr/sbin/nginx", X_OK) != 0)
            GTEST_SKIP() << "nginx is not installed (scripts/bootstrap installs nginx-light)";
        dir_ = ::testing::TempDir() + "duet-deployment-" + std::to_string(::getpid());
        deployment_ = std::make_unique<child_process>(
            std::vector<std::string>{DUET_SOURCE_DIR "/tests/scale/deployment", dir_, "3", DUET_BINARY,
                                     "serve"},
            child_process::input::null);
        auto const url =
            deployment_->first_stdout_line(std::chrono::steady_clock::now() + std::chrono::seconds(30));
        ASSERT_FALSE(url.empty()) << deployment_->stderr_text();
        ep_ = endpoint::parse(url);
    }
    void TearDown() override {
        if (deployment_ && deployment_->running()) {
            deployment_->signal(SIGTERM);
            EXPECT_EQ(deployment_->wait_exit(std::chrono::seconds(30)), 0);
        }
        std::filesystem::remove_all(dir_);
    }
    pid_t server_pid(int i) {
        std::ifstream in(dir_ + "/server-" + std::to_string(i) + ".pid");
        pid_t pid = 0;
        in >> pid;
        return pid;
    }

    std::string dir_;
    std::unique_ptr<child_process> deployment_;
    endpoint ep_;
};

TEST_F(ScaledDeployment, OneClientsSessionGoesOnThroughWhicheverProcessNginxPicks) {
    mcp_http c(ep_);
    c.initialize("2025-11-25");
    for (int id = 2; id < 14; ++id) { // four rounds of the three processes
        auto const r =
            c.post(legacy_request(id, "tools/call", call_params("echo", {{"text", std::to_string(id)}})));
        ASSERT_EQ(r.status, 200u) << r.body;
        EXPECT_EQ(first_text(result_of(r.json())), std::to_string(id));
    }
    auto const level = c.post(legacy_request(20, "logging/setLevel", {{"level", "warning"}}));
    EXPECT_EQ(level.status, 200u);
    c.expect_schema_valid();
}

TEST_F(ScaledDeployment, AProcessKilledMidStreamLosesNothingThatWasLogged) {
    mcp_http c(ep_);
    c.initialize("2025-11-25");
    // A countdown of 20 steps, 50 ms apart, broken after its first event; every process is then killed in
    // turn but one, so whichever ran it, the resumption lands on another.
    auto const countdown =
        legacy_request(2, "tools/call", with_progress(call_params("countdown", {{"n", 20}}), "t"));
    auto stream = c.open(countdown);
    ASSERT_EQ(stream->status(), 200u);
    ASSERT_TRUE(is_notification(c.next(*stream), "notifications/progress"));
    auto const resume_from = stream->last_event_id();
    stream->close();
    ::kill(server_pid(1), SIGKILL);
    // What the killed process logged can be read from any other; the call itself died with it if it ran
    // there, else the stream goes on to its answer.
    auto resumed = c.open_spec(stream_spec(c, {{"Last-Event-ID", resume_from}}));
    ASSERT_EQ(resumed->status(), 200u);
    // Exactly what followed the event seen (the log message countdown writes after its first progress, unless
    // the kill came first), then the answer: liftoff, or, when the call ran on the killed process, an error
    // saying it stopped.
    auto const rest = c.rest(*resumed);
    ASSERT_FALSE(rest.empty());
    if (is_notification(rest.front(), "notifications/message")) // logged before any kill
        EXPECT_EQ(rest.front().at("params").at("data"), "tick 1");
    else // killed with the call before it logged it: the answer alone
        EXPECT_EQ(rest.size(), 1u) << rest.front();
    ASSERT_TRUE(is_response_to(rest.back(), 2)) << rest.back();
    auto const answer = json::serialize(rest.back());
    EXPECT_TRUE(answer.find("liftoff after 20 steps") != std::string::npos ||
                answer.find("stopped before answering") != std::string::npos)
        << answer;
    // The session goes on through the two left.
    for (int id = 3; id < 9; ++id)
        EXPECT_EQ(c.post(legacy_request(id, "ping")).status, 200u) << "request " << id;
}

} // namespace
