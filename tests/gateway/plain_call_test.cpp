// The gateway's lean path for a plain call against the ways a call can take longer: the first call opens
// the pooled connection (async_acquire) while later ones take it ready, and a call whose upstream reports
// progress hands its handler steps before the outcome. Each must answer the same bytes (upstream_pool.cpp,
// ready_connection, and forwarded_call::wait); relayed progress still reaches a client that asked for it.
#include "gateway/gateway_process.hpp"
#include "http/mcp_http.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

namespace json = boost::json;
using namespace duet::test;
using namespace duet::test::http;
using namespace duet::test::gateway;

json::object call(std::string const& tool, json::object args, json::object extra_meta = {}) {
    json::object params = call_params(tool, std::move(args));
    params["_meta"] = modern_meta({}, std::move(extra_meta));
    return modern_request(7, "tools/call", std::move(params));
}

// Requirement: a forwarded call answers the same bytes whether its connection was opened for it or was ready.
TEST(GatewayPlainCall, TheFirstCallAndLaterOnesAnswerTheSameBytes) {
    gateway_process gw("--modern-only", {"--pool-size", "1"});
    mcp_http c(gw.ep());
    auto const first = c.post(call("echo", {{"text", "same"}}));
    ASSERT_EQ(first.status, 200u) << first.body;
    EXPECT_EQ(first_text(result_of(first.json())), "same") << first.body;
    for (int i = 0; i < 3; ++i) {
        auto const later = c.post(call("echo", {{"text", "same"}}));
        EXPECT_EQ(later.status, 200u);
        EXPECT_EQ(later.body, first.body);
    }
    c.expect_schema_valid();
}

// Requirement: a call whose upstream relays progress answers what it answers without a listener, and the
// progress reaches the client that asked for it, before the answer.
TEST(GatewayPlainCall, ACallThatRelaysProgressAnswersLikeOneThatDoesNot) {
    gateway_process gw("--modern-only");
    mcp_http c(gw.ep());
    auto const quiet = c.post(call("countdown", {{"n", 2}}));
    ASSERT_EQ(quiet.status, 200u) << quiet.body;
    auto const quiet_result = quiet.json();
    EXPECT_EQ(first_text(result_of(quiet_result)), "liftoff after 2 steps") << quiet.body;

    auto const heard = c.post(call("countdown", {{"n", 2}}, {{"progressToken", "p"}}));
    ASSERT_EQ(heard.status, 200u) << heard.body;
    auto const messages = heard.messages();
    ASSERT_FALSE(messages.empty()) << heard.body;
    int progress = 0;
    for (std::size_t i = 0; i + 1 < messages.size(); ++i) {
        auto const& m = messages[i].as_object();
        if (m.at("method") == "notifications/progress") {
            EXPECT_EQ(m.at("params").at("progressToken"), "p") << messages[i];
            ++progress;
        }
    }
    EXPECT_EQ(progress, 2) << heard.body;
    EXPECT_EQ(messages.back(), quiet_result);
    c.expect_schema_valid();
}

} // namespace
