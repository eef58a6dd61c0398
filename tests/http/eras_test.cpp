// Both eras on one endpoint at once (ERA-POLICY "Consequences": an HTTP endpoint serves modern requests and
// legacy sessions side by side), several SSE streams in flight together, and the drain on SIGTERM of the real
// binary: requests in flight complete, streams end, the process exits 0.
#include "http/mcp_http.hpp"
#include "http/servers.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"

#include <gtest/gtest.h>

#include <signal.h>

namespace {

namespace json = boost::json;
using namespace duet::test;
using namespace duet::test::http;

json::object modern_countdown(json::value id, int n, json::value token) {
    json::object params = call_params("countdown", {{"n", n}});
    params["_meta"] = modern_meta({}, {{"progressToken", std::move(token)}});
    return modern_request(std::move(id), "tools/call", params);
}

json::object legacy_countdown(json::value id, int n, json::value token) {
    json::object params = call_params("countdown", {{"n", n}});
    params["_meta"] = json::object{{"progressToken", std::move(token)}};
    return legacy_request(std::move(id), "tools/call", params);
}

// The progress notifications of a finished stream all carry `token`; the last message answers `id`.
void expect_countdown(std::vector<json::value> const& messages, json::value const& id,
                      json::value const& token, int n) {
    ASSERT_FALSE(messages.empty());
    int progress = 0;
    for (std::size_t i = 0; i + 1 < messages.size(); ++i) {
        if (is_notification(messages[i], "notifications/progress")) {
            EXPECT_EQ(messages[i].at("params").at("progressToken"), token) << messages[i];
            ++progress;
        } else {
            EXPECT_TRUE(is_notification(messages[i], "notifications/message")) << messages[i];
        }
    }
    EXPECT_EQ(progress, n);
    ASSERT_TRUE(is_response_to(messages.back(), id)) << messages.back();
    EXPECT_EQ(first_text(result_of(messages.back())), "liftoff after " + std::to_string(n) + " steps");
}

// One endpoint, one moment: a legacy session (its GET stream, a streamed call) and modern requests (a listen,
// a streamed call carrying the session's id) each get their own era's behaviour and shapes.
TEST(HttpEras, BothErasAreServedOnOneEndpointAtOnce) {
    inproc_server s;
    mcp_http legacy(s.ep());
    legacy.initialize("2025-06-18");
    ASSERT_TRUE(legacy.session_id());
    mcp_http modern(s.ep());

    auto get = legacy.open_spec(stream_spec(legacy));
    ASSERT_EQ(get->status(), 200u);
    auto listen = modern.open(listen_request(7));
    ASSERT_TRUE(is_notification(modern.next(*listen), "notifications/subscriptions/acknowledged"));

    auto legacy_call = legacy.open(legacy_countdown("l", 3, "legacy"));
    auto modern_call =
        modern.open(modern_countdown("m", 3, "modern"), {{"Mcp-Session-Id", *legacy.session_id()}});
    EXPECT_FALSE(modern_call->header("Mcp-Session-Id"));
    auto const legacy_messages = legacy.rest(*legacy_call);
    auto const modern_messages = modern.rest(*modern_call);
    expect_countdown(legacy_messages, "l", "legacy", 3);
    expect_countdown(modern_messages, "m", "modern", 3);
    expect_legacy_result(legacy_messages.back());
    expect_modern_result(modern_messages.back(), false);

    // One change, announced to each in its era's form.
    add_runtime_tool(s.srv(), "late_tool");
    auto const untagged = legacy.next(*get);
    EXPECT_TRUE(is_notification(untagged, "notifications/tools/list_changed")) << untagged;
    EXPECT_TRUE(subscription_id_of(untagged).is_null()) << untagged;
    auto const tagged = modern.next(*listen);
    EXPECT_TRUE(is_notification(tagged, "notifications/tools/list_changed")) << tagged;
    EXPECT_EQ(subscription_id_of(tagged), 7);

    s.stop();
    auto const ended = modern.rest(*listen);
    ASSERT_FALSE(ended.empty());
    EXPECT_TRUE(is_response_to(ended.back(), 7)) << ended.back();
    legacy.rest(*get);
    legacy.expect_schema_valid();
    modern.expect_schema_valid();
}

// Several SSE responses open at once: each carries only its own request's messages and ends with its own
// response; several listens each get their own acknowledgement, notifications and result.
TEST(HttpStreams, SeveralSseStreamsRunConcurrently) {
    inproc_server s;
    mcp_http c(s.ep());
    std::vector<std::unique_ptr<response_stream>> listens;
    for (int i = 0; i < 3; ++i) {
        listens.push_back(c.open(listen_request(json::string("listen-" + std::to_string(i)))));
        auto const ack = c.next(*listens.back());
        ASSERT_TRUE(is_notification(ack, "notifications/subscriptions/acknowledged")) << ack;
    }
    std::vector<std::unique_ptr<response_stream>> calls;
    for (int i = 0; i < 4; ++i)
        calls.push_back(c.open(modern_countdown(i, 2 + i, json::string("token-" + std::to_string(i)))));
    for (int i = 3; i >= 0; --i) {
        EXPECT_EQ(calls[i]->status(), 200u);
        expect_countdown(c.rest(*calls[i]), i, json::value(json::string("token-" + std::to_string(i))),
                         2 + i);
    }

    add_runtime_tool(s.srv(), "late_tool");
    for (int i = 0; i < 3; ++i) {
        auto const changed = c.next(*listens[i]);
        EXPECT_TRUE(is_notification(changed, "notifications/tools/list_changed")) << changed;
        EXPECT_EQ(subscription_id_of(changed), json::value(json::string("listen-" + std::to_string(i))));
    }
    s.stop();
    for (int i = 0; i < 3; ++i) {
        auto const rest = c.rest(*listens[i]);
        ASSERT_FALSE(rest.empty());
        EXPECT_TRUE(is_response_to(rest.back(), json::value(json::string("listen-" + std::to_string(i)))))
            << rest.back();
    }
    c.expect_schema_valid();
}

// http_server.hpp: SIGTERM drains: the listener closes, requests in flight complete (progress and all), open
// streams end, and the process exits 0.
TEST(HttpDrain, SigtermLetsACountdownInFlightFinishThenExitsZero) {
    child_server srv;
    mcp_http modern(srv.ep());
    mcp_http legacy(srv.ep());
    legacy.initialize("2025-11-25");
    auto get = legacy.open_spec(stream_spec(legacy));
    ASSERT_EQ(get->status(), 200u);

    auto call = modern.open(modern_countdown("drain", 20, "d"));
    ASSERT_EQ(call->status(), 200u);
    auto const first = modern.next(*call);
    ASSERT_TRUE(is_notification(first, "notifications/progress")) << first; // in flight
    srv.signal(SIGTERM);

    auto messages = modern.rest(*call);
    messages.insert(messages.begin(), first);
    expect_countdown(messages, "drain", "d", 20);
    EXPECT_TRUE(legacy.rest(*get).empty());
    EXPECT_TRUE(get->ended());
    EXPECT_EQ(srv.wait_exit(), 0) << srv.stderr_text();
    modern.expect_schema_valid();
    legacy.expect_schema_valid();
}

} // namespace
