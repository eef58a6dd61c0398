// Legacy sessions shared by three `duet serve --store` processes (#28): a session opened on one is served by
// every other (its requests, its changes, its DELETE), a stream broken on one resumes on another with nothing
// lost, an elicitation sent by one is answered through another, the server events of a session reach the GET
// stream wherever it is held, once, and a process killed mid-run leaves its sessions to the others. Real
// processes and a real redis-server on loopback; every client here is one client reaching the deployment's
// processes in turn, as a round-robin load balancer would send it.
#include "http/mcp_http.hpp"
#include "http/servers.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "support/redis_server.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <string>

namespace {

using namespace duet;
using namespace duet::test;
using namespace duet::test::http;
namespace json = boost::json;

constexpr char const* version = "2025-11-25";

class SharedSessions : public ::testing::Test {
protected:
    void SetUp() override {
        if (auto why = test::redis_server::missing(); !why.empty())
            GTEST_SKIP() << why;
        redis_ = std::make_unique<test::redis_server>();
        for (auto& p : processes_)
            p = std::make_unique<child_server>(
                std::vector<std::string>{"--store", redis_->url(), "--store-prefix",
                                         "shared-sessions:" + std::to_string(::getpid()) + ':'});
    }
    child_server& process(int i) { return *processes_[i]; }

    std::unique_ptr<test::redis_server> redis_;
    std::unique_ptr<child_server> processes_[3];
};

json::value call(mcp_http& c, int id, std::string_view tool, json::object args = {}) {
    return c.post(legacy_request(id, "tools/call", call_params(tool, std::move(args)))).json();
}

TEST_F(SharedSessions, ASessionOpenedOnOneProcessIsServedByEveryOther) {
    mcp_http on_a(process(0).ep());
    on_a.initialize(version, {{"elicitation", json::object{}}});
    mcp_http on_b(process(1).ep(), on_a);
    mcp_http on_c(process(2).ep(), on_a);
    EXPECT_EQ(call_text(call(on_b, 2, "echo", {{"text", "via b"}})), "via b");
    EXPECT_EQ(call_text(call(on_c, 3, "echo", {{"text", "via c"}})), "via c");
    EXPECT_EQ(code_of(on_c.post(legacy_request(4, "logging/setLevel", {{"level", "error"}})).json()), 0);
    // The level set through c holds on a: countdown's info logs no longer come (only progress).
    auto const r =
        on_a.post(legacy_request(5, "tools/call", with_progress(call_params("countdown", {{"n", 2}}), "t")));
    for (auto const& m : r.messages())
        EXPECT_FALSE(is_notification(m, "notifications/message")) << m;
    // Ended through b: unknown everywhere by the time the DELETE is answered (every process holding it let
    // go).
    auto const ended = on_b.send(
        [&] {
            auto spec = stream_spec(on_b);
            spec.method = "DELETE";
            return spec;
        }(),
        json::value());
    EXPECT_EQ(ended.status, 200u);
    for (auto* c : {&on_a, &on_c})
        EXPECT_EQ(c->post(legacy_request(6, "ping")).status, 404u) << "the ended session is still served";
    on_a.expect_schema_valid();
}

TEST_F(SharedSessions, AStreamBrokenOnOneProcessResumesOnAnotherWithNothingLost) {
    mcp_http on_a(process(0).ep());
    on_a.initialize(version);
    auto const countdown =
        legacy_request(2, "tools/call", with_progress(call_params("countdown", {{"n", 6}}), "t"));
    auto stream = on_a.open(countdown);
    ASSERT_EQ(stream->status(), 200u);
    auto const first = on_a.next(*stream);
    ASSERT_TRUE(is_notification(first, "notifications/progress")) << first;
    auto const resume_from = stream->last_event_id();
    stream->close();

    mcp_http on_b(process(1).ep(), on_a);
    on_b.log().record_sent(countdown); // one client: what it sent through a, its answer comes through b
    auto resumed = on_b.open_spec(stream_spec(on_b, {{"Last-Event-ID", resume_from}}));
    ASSERT_EQ(resumed->status(), 200u);
    auto const rest = on_b.rest(*resumed);
    ASSERT_FALSE(rest.empty());
    EXPECT_TRUE(is_response_to(rest.back(), 2)) << rest.back();
    EXPECT_EQ(call_text(rest.back()), "liftoff after 6 steps");
    // Every progress after the one seen, in order: 2 to 6.
    std::vector<double> progress;
    for (auto const& m : rest)
        if (is_notification(m, "notifications/progress"))
            progress.push_back(m.at("params").at("progress").to_number<double>());
    EXPECT_EQ(progress, (std::vector<double>{2, 3, 4, 5, 6}));
    on_b.expect_schema_valid();
}

TEST_F(SharedSessions, AnElicitationSentByOneProcessIsAnsweredThroughAnother) {
    mcp_http on_a(process(0).ep());
    on_a.initialize(version, {{"elicitation", json::object{}}});
    auto asking = on_a.open(legacy_request(2, "tools/call", call_params("ask_name")));
    auto const question = on_a.next_server_request(*asking, "elicitation/create");
    ASSERT_TRUE(is_server_request(question, "elicitation/create")) << question;

    mcp_http on_c(process(2).ep(), on_a);
    auto const accepted =
        on_c.post(client_response(question.at("id"), {{"action", "accept"}, {"content", {{"name", "Ada"}}}}));
    EXPECT_EQ(accepted.status, 202u);
    auto const rest = on_a.rest(*asking);
    ASSERT_FALSE(rest.empty());
    EXPECT_EQ(call_text(rest.back()), "Hello, Ada!");
    on_a.expect_schema_valid();
}

TEST_F(SharedSessions, ServerEventsReachTheGetStreamWhereverItIsHeldOnce) {
    mcp_http on_a(process(0).ep());
    on_a.initialize(version);
    EXPECT_EQ(
        code_of(on_a.post(legacy_request(2, "resources/subscribe", {{"uri", "duet://demo/readme"}})).json()),
        0);
    mcp_http on_b(process(1).ep(), on_a);
    auto get = on_b.open_spec(stream_spec(on_b));
    ASSERT_EQ(get->status(), 200u);
    // Raised on c, whose own copy of the session stays quiet: b's GET hears it once.
    mcp_http modern_c(process(2).ep());
    for (int round = 0; round < 2; ++round) {
        modern_c.post(modern_request(10 + round, "tools/call", call_params("touch_readme")));
        auto const heard = on_b.next(*get);
        EXPECT_TRUE(is_notification(heard, "notifications/resources/updated")) << heard;
    }
    on_b.expect_schema_valid();
}

TEST_F(SharedSessions, AProcessKilledMidRunLeavesItsSessionsToTheOthers) {
    mcp_http on_a(process(0).ep());
    on_a.initialize(version);
    auto const countdown =
        legacy_request(2, "tools/call", with_progress(call_params("countdown", {{"n", 20}}), "t"));
    auto stream = on_a.open(countdown);
    ASSERT_TRUE(is_notification(on_a.next(*stream), "notifications/progress"));
    auto const resume_from = stream->last_event_id();
    process(0).signal(SIGKILL);
    stream->close();

    mcp_http on_b(process(1).ep(), on_a);
    EXPECT_EQ(call_text(call(on_b, 3, "echo", {{"text", "still open"}})), "still open");
    // What a logged before it died is there to resume; the call itself died with it, and the stream says so
    // once a's liveness lapses (seconds): its last message answers the call with an error.
    on_b.log().record_sent(countdown);
    auto resumed = on_b.open_spec(stream_spec(on_b, {{"Last-Event-ID", resume_from}}));
    ASSERT_EQ(resumed->status(), 200u);
    auto const rest = on_b.rest(*resumed);
    ASSERT_FALSE(rest.empty());
    // What a logged after the event seen, if anything (the kill may come first), then the answer.
    for (std::size_t i = 0; i + 1 < rest.size(); ++i)
        EXPECT_TRUE(is_notification(rest[i], "notifications/message") ||
                    is_notification(rest[i], "notifications/progress"))
            << rest[i];
    ASSERT_TRUE(is_response_to(rest.back(), 2)) << rest.back();
    EXPECT_EQ(code_of(rest.back()), -32603) << rest.back();
    EXPECT_NE(json::serialize(rest.back()).find("stopped before answering"), std::string::npos)
        << rest.back();
}

TEST_F(SharedSessions, AProcessDrainedWithSigtermExitsCleanlyAndItsSessionsGoOn) {
    mcp_http on_a(process(0).ep());
    on_a.initialize(version);
    EXPECT_EQ(
        code_of(on_a.post(legacy_request(2, "resources/subscribe", {{"uri", "duet://demo/readme"}})).json()),
        0);
    process(0).signal(SIGTERM);
    EXPECT_EQ(process(0).wait_exit(), 0) << process(0).stderr_text();
    mcp_http on_b(process(1).ep(), on_a);
    EXPECT_EQ(call_text(call(on_b, 3, "echo", {{"text", "after the drain"}})), "after the drain");
    for (int i : {1, 2}) {
        process(i).signal(SIGTERM);
        EXPECT_EQ(process(i).wait_exit(), 0) << process(i).stderr_text();
    }
}

TEST_F(SharedSessions, WhileRedisIsAwayLegacyRequestsGet503AndModernOnesAreServed) {
    mcp_http on_a(process(0).ep());
    on_a.initialize(version);
    redis_->kill();
    bool refused = false;
    for (int attempt = 0; attempt < 100 && !refused; ++attempt) {
        auto const r = on_a.post(legacy_request(2, "ping"));
        refused = r.status == 503;
        if (refused)
            EXPECT_NE(r.body.find("session store cannot be reached"), std::string::npos) << r.body;
        else
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_TRUE(refused);
    mcp_http modern(process(1).ep());
    auto const echoed =
        modern.post(modern_request(3, "tools/call", call_params("echo", {{"text", "modern"}}))).json();
    EXPECT_EQ(code_of(echoed), 0) << echoed;
}

} // namespace
