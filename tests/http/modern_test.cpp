// Modern (2026-07-28) requests over Streamable HTTP (DIGEST §7, §9; ERA-POLICY "HTTP routing of one POST"):
// served statelessly, answered with JSON unless the handler streams (then SSE, the response last), a listen
// as an open SSE stream whose first event is the acknowledgement, and never a session: no Mcp-Session-Id is
// minted or echoed, even when the request carries one.
#include "http/mcp_http.hpp"
#include "http/servers.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"

#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

namespace {

namespace json = boost::json;
using namespace duet::test;
using namespace duet::test::http;

// DIGEST §9: "request OK → 200 with application/json or text/event-stream"; nothing streamed → JSON.
TEST(HttpModern, PlainCallIsAnsweredWithJson) {
    inproc_server s;
    mcp_http c(s.ep());
    auto const r = c.post(modern_request(1, "tools/call", call_params("echo", {{"text", "hi"}})));
    EXPECT_EQ(r.status, 200u) << r.body;
    EXPECT_EQ(r.header("Content-Type"), "application/json");
    EXPECT_FALSE(r.has_header("Mcp-Session-Id"));
    auto const m = r.json();
    ASSERT_TRUE(is_response_to(m, 1)) << m;
    expect_modern_result(m, false);
    EXPECT_EQ(first_text(result_of(m)), "hi");
    c.expect_schema_valid();
}

// DIGEST §9: request-related notifications go on an SSE response, then the response, which ends it; DIGEST §7
// encourages `X-Accel-Buffering: no` so proxies pass events on at once.
TEST(HttpModern, StreamedProgressIsAnsweredWithSseAndTheResponseLast) {
    inproc_server s;
    mcp_http c(s.ep());
    json::object params = call_params("countdown", {{"n", 3}});
    params["_meta"] = modern_meta({}, {{"progressToken", "p1"}});
    auto const r = c.post(modern_request(2, "tools/call", params));
    EXPECT_EQ(r.status, 200u) << r.body;
    ASSERT_TRUE(r.is_sse()) << r.header("Content-Type").value_or("(none)");
    EXPECT_EQ(r.header("X-Accel-Buffering"), "no");
    EXPECT_FALSE(r.has_header("Mcp-Session-Id"));
    auto const messages = r.messages();
    ASSERT_EQ(messages.size(), 4u) << r.body; // three ticks, then the response
    double last_progress = 0;
    for (std::size_t i = 0; i + 1 < messages.size(); ++i) {
        ASSERT_TRUE(is_notification(messages[i], "notifications/progress")) << messages[i];
        auto const& p = messages[i].at("params").as_object();
        EXPECT_EQ(p.at("progressToken"), "p1");
        EXPECT_GT(p.at("progress").to_number<double>(), last_progress);
        last_progress = p.at("progress").to_number<double>();
    }
    ASSERT_TRUE(is_response_to(messages.back(), 2)) << messages.back();
    expect_modern_result(messages.back(), false);
    EXPECT_EQ(first_text(result_of(messages.back())), "liftoff after 3 steps");
    c.expect_schema_valid();
}

// DIGEST §7: a listen is an SSE stream that stays open; its first message is the acknowledgement, later ones
// carry params._meta.subscriptionId = the listen's id; draining ends it with its result.
TEST(HttpModern, ListenAcknowledgesFirstThenTagsToolsAddedAtRuntime) {
    inproc_server s;
    mcp_http c(s.ep());
    auto stream = c.open(
        modern_request("L1", "subscriptions/listen", {{"notifications", {{"toolsListChanged", true}}}}));
    EXPECT_EQ(stream->status(), 200u);
    EXPECT_EQ(stream->header("Content-Type"), "text/event-stream");
    EXPECT_EQ(stream->header("X-Accel-Buffering"), "no");
    EXPECT_FALSE(stream->header("Mcp-Session-Id"));

    auto const ack = c.next(*stream);
    ASSERT_TRUE(is_notification(ack, "notifications/subscriptions/acknowledged")) << ack;
    EXPECT_EQ(subscription_id_of(ack), "L1");
    EXPECT_EQ(ack.at("params").at("notifications"), (json::object{{"toolsListChanged", true}}));

    add_runtime_tool(s.srv(), "late_tool");
    auto const changed = c.next(*stream);
    ASSERT_TRUE(is_notification(changed, "notifications/tools/list_changed")) << changed;
    EXPECT_EQ(subscription_id_of(changed), "L1");

    // The stream stayed open meanwhile; other requests see the new tool.
    auto const list = c.post(modern_request(2, "tools/list")).json();
    EXPECT_NE(json::serialize(list).find("late_tool"), std::string::npos) << list;

    s.stop(); // draining ends the listen with its result
    auto const rest = c.rest(*stream);
    ASSERT_FALSE(rest.empty());
    ASSERT_TRUE(is_response_to(rest.back(), "L1")) << rest.back();
    expect_modern_result(rest.back(), false);
    EXPECT_EQ(result_of(rest.back()).at("_meta").at(key_subscription_id), "L1");
    c.expect_schema_valid();
}

// ERA-POLICY: a modern request never reads or changes the session; a stale Mcp-Session-Id is ignored, never
// echoed, and no modern request mints one (not even a modern `initialize`, which is -32601).
TEST(HttpModern, NoSessionIdIsMintedOrEchoedEvenWhenAStaleOneIsSent) {
    inproc_server s;
    mcp_http legacy(s.ep());
    legacy.initialize("2025-11-25");
    ASSERT_TRUE(legacy.session_id());

    mcp_http c(s.ep());
    for (auto const& sent : {std::string("0123456789abcdef0123456789abcdef"), *legacy.session_id()}) {
        auto const r = c.post(modern_request(1, "tools/list"), {{"Mcp-Session-Id", sent}});
        EXPECT_EQ(r.status, 200u) << r.body;
        EXPECT_FALSE(r.has_header("Mcp-Session-Id")) << "echoed " << sent;
        expect_modern_result(r.json(), true);
    }
    auto const plain = c.post(modern_request(2, "server/discover"));
    EXPECT_EQ(plain.status, 200u) << plain.body;
    EXPECT_FALSE(plain.has_header("Mcp-Session-Id"));

    auto const init = c.post(modern_request(3, "initialize",
                                            {{"protocolVersion", "2025-11-25"},
                                             {"capabilities", json::object{}},
                                             {"clientInfo", {{"name", "x"}, {"version", "1"}}}}));
    EXPECT_EQ(init.status, 404u) << init.body;
    EXPECT_EQ(code_of(init.json()), -32601);
    EXPECT_FALSE(init.has_header("Mcp-Session-Id"));

    // The legacy session was not touched by any of it.
    auto const still = legacy.post(legacy_request(4, "tools/list"));
    EXPECT_EQ(still.status, 200u) << still.body;
    expect_legacy_result(still.json());
    c.expect_schema_valid();
    legacy.expect_schema_valid();
}

} // namespace
