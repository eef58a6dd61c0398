// Three `duet gateway --store` processes in front of one upstream (#28): a legacy client's session opened on
// one gateway is served by the others, a question the upstream asks through one is answered through
// another, and a modern client is served by any of them. Real processes: the upstream a `duet serve`, a
// redis-server on loopback. A task one gateway holds is followed through the others.
#include "gateway/gateway_process.hpp"
#include "http/mcp_http.hpp"
#include "http/servers.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "support/redis_server.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

namespace {

using namespace duet;
using namespace duet::test;
using namespace duet::test::http;
using duet::test::gateway::gateway_process;
namespace json = boost::json;

class ScaledGateway : public ::testing::Test {
protected:
    void SetUp() override {
        if (auto why = test::redis_server::missing(); !why.empty())
            GTEST_SKIP() << why;
        redis_ = std::make_unique<test::redis_server>();
        upstream_ = std::make_unique<child_server>();
        for (auto& g : gateways_)
            g = std::make_unique<gateway_process>(
                upstream_->url(),
                std::vector<std::string>{"--store", redis_->url(), "--store-prefix",
                                         "scaled-gateway:" + std::to_string(::getpid()) + ':'});
    }
    gateway_process& gateway(int i) { return *gateways_[i]; }

    std::unique_ptr<test::redis_server> redis_;
    std::unique_ptr<child_server> upstream_;
    std::unique_ptr<gateway_process> gateways_[3];
};

TEST_F(ScaledGateway, ALegacySessionOpenedOnOneGatewayIsServedByTheOthers) {
    mcp_http on_a(gateway(0).ep());
    on_a.initialize("2025-11-25");
    mcp_http on_b(gateway(1).ep(), on_a);
    mcp_http on_c(gateway(2).ep(), on_a);
    auto const b =
        on_b.post(legacy_request(2, "tools/call", call_params("echo", {{"text", "via b"}}))).json();
    EXPECT_EQ(call_text(b), "via b");
    auto const c =
        on_c.post(legacy_request(3, "tools/call", call_params("echo", {{"text", "via c"}}))).json();
    EXPECT_EQ(call_text(c), "via c");
}

TEST_F(ScaledGateway, TheUpstreamsQuestionAskedThroughOneGatewayIsAnsweredThroughAnother) {
    mcp_http on_a(gateway(0).ep());
    on_a.initialize("2025-11-25", {{"elicitation", json::object{}}});
    auto asking = on_a.open(legacy_request(2, "tools/call", call_params("ask_name")));
    auto const question = on_a.next_server_request(*asking, "elicitation/create");
    ASSERT_TRUE(is_server_request(question, "elicitation/create")) << question;
    mcp_http on_c(gateway(2).ep(), on_a);
    auto const accepted =
        on_c.post(client_response(question.at("id"), {{"action", "accept"}, {"content", {{"name", "Ada"}}}}));
    EXPECT_EQ(accepted.status, 202u);
    auto const rest = on_a.rest(*asking);
    ASSERT_FALSE(rest.empty());
    EXPECT_EQ(call_text(rest.back()), "Hello, Ada!");
}

TEST_F(ScaledGateway, AModernClientIsServedByAnyGateway) {
    for (int i = 0; i < 3; ++i) {
        mcp_http c(gateway(i).ep());
        auto const r =
            c.post(modern_request(i, "tools/call", call_params("echo", {{"text", "modern"}}))).json();
        EXPECT_EQ(call_text(r), "modern") << "gateway " << i;
    }
}

// A task the gateway holds for a modern client lives in Redis: its tasks/get through another gateway finds it
// and follows it to the upstream's result, as a load balancer would send it.
TEST_F(ScaledGateway, ATaskHeldByOneGatewayIsFollowedThroughAnother) {
    json::object const caps{{"extensions", json::object{{"io.modelcontextprotocol/tasks", json::object{}}}}};
    mcp_http on_a(gateway(0).ep());
    auto const made =
        on_a.post(modern_request(1, "tools/call", call_params("long_job", {{"seconds", 2}}), caps)).json();
    auto const* result = made.as_object().if_contains("result");
    ASSERT_TRUE(result && result->is_object()) << made;
    ASSERT_EQ(result->as_object().at("resultType"), "task") << made;
    std::string const id(result->as_object().at("taskId").as_string());

    std::string status;
    json::object last;
    auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (int n = 2; std::chrono::steady_clock::now() < deadline; ++n) {
        mcp_http on_b(gateway(1 + n % 2).ep()); // the other two, in turn
        auto const got =
            on_b.post(modern_request(n, "tasks/get", {{"taskId", id}}, caps), {{"Mcp-Name", id}}).json();
        auto const* task = got.as_object().if_contains("result");
        ASSERT_TRUE(task && task->is_object()) << "gateway " << 1 + n % 2 << ": " << got;
        last = task->as_object();
        status = std::string(last.at("status").as_string());
        if (status != "working")
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    ASSERT_EQ(status, "completed") << json::value(last);
    EXPECT_EQ(call_text(json::object{{"result", last.at("result")}}), "done after 2 s") << json::value(last);
}

// What cannot scale is said, not left to be found: a legacy upstream's per-client state lives in one process.
TEST(ScaledGatewayStart, ALegacyUpstreamBehindAStoreIsNamedOnStderrWithWhatNeedsStickiness) {
    if (auto why = test::redis_server::missing(); !why.empty())
        GTEST_SKIP() << why;
    test::redis_server redis;
    gateway_process gw("--legacy-only", {"--store", redis.url()});
    EXPECT_TRUE(gw.wait_for_log("speaks the legacy era")) << gw.stderr_text();
    EXPECT_TRUE(gw.wait_for_log("sticky on the client")) << gw.stderr_text();
}

} // namespace
