// What happens around a handler (STYLE rule 7, DIGEST §10, §12): an unexpected exception is a sanitized
// -32603 and the connection keeps serving; protocol_error passes through exactly; a cancelled request is
// never answered; progress follows its token; modern requests cannot ask the client anything; end of input
// waits for running handlers.
#include <duet/server/server.hpp>

#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "unit/server/harness.hpp"
#include "unit/server/test_server.hpp"

#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

namespace json = boost::json;
using namespace duet::test;
using duet::server::server;

class ConnectionHandlerFailure : public testing::TestWithParam<char const*> {};

// STYLE rule 7: the dispatcher is the one catch point; an unexpected exception becomes -32603 "Internal
// error" with nothing of the exception in it, and the next request is served.
TEST_P(ConnectionHandlerFailure, ThrowingHandlerIsSanitizedInternalErrorAndServingGoesOn) {
    server srv(test_options());
    add_test_features(srv);
    harness h(srv);
    h.send(modern_request(1, "tools/call", call_params(GetParam())));
    auto const r = h.response(1);
    expect_error(r, -32603);
    auto const e = error_of(r);
    EXPECT_EQ(e.at("message"), "Internal error");
    EXPECT_FALSE(e.contains("data")) << r;
    EXPECT_EQ(json::serialize(r).find("hunter2"), std::string::npos) << r;
    h.send(initialize_request(2, "2025-11-25"));
    h.response(2);
    h.send(legacy_request(3, "tools/call", call_params(GetParam())));
    auto const legacy = h.response(3);
    expect_error(legacy, -32603);
    EXPECT_EQ(json::serialize(legacy).find("hunter2"), std::string::npos) << legacy;
    h.send(legacy_request(4, "tools/call", call_params("echo", {{"text", "alive"}})));
    EXPECT_EQ(first_text(result_of(h.response(4))), "alive");
    h.send(modern_request(5, "tools/call", call_params("echo", {{"text", "alive"}})));
    EXPECT_EQ(first_text(result_of(h.response(5))), "alive");
}

INSTANTIATE_TEST_SUITE_P(Handlers, ConnectionHandlerFailure, testing::Values("throws", "throws_co"),
                         [](auto const& p) {
                             return std::string(p.param) == "throws" ? "Plain" : "Coroutine";
                         });

// A handler that throws duet::server::protocol_error chooses the exact error the client gets.
TEST(ConnectionHandler, ProtocolErrorIsPassedThroughExactly) {
    server srv(test_options());
    add_test_features(srv);
    harness h(srv);
    h.send(modern_request("x", "tools/call", call_params("refuses")));
    auto const r = h.response("x");
    EXPECT_EQ(
        r.at("error"),
        (json::object{{"code", -32602}, {"message", "Widget out of range"}, {"data", {{"widget", 3}}}}));
}

// DIGEST §10: after notifications/cancelled the request gets no response at all; the handler sees cancelled()
// and its progress stops; the connection goes on.
TEST(ConnectionHandler, CancelledRequestIsNeverAnswered) {
    server srv(test_options());
    add_test_features(srv);
    harness h(srv);
    json::object params = call_params("until_cancelled");
    params["_meta"] = modern_meta({}, {{"progressToken", 5}});
    h.send(modern_request(5, "tools/call", params));
    auto const started =
        h.wait_for([](json::value const& m) { return is_notification(m, "notifications/progress"); });
    ASSERT_TRUE(started);
    EXPECT_EQ(h.messages()[*started].at("params").at("progressToken"), 5);
    h.send(cancelled_notification(5));
    h.send(modern_request(6, "tools/call", call_params("echo", {{"text", "next"}})));
    EXPECT_EQ(first_text(result_of(h.response(6))), "next");
    // End of input waits for the cancelled handler to return; its result is dropped.
    ASSERT_TRUE(h.finish());
    for (auto const& m : h.messages())
        EXPECT_FALSE(is_response_to(m, 5)) << m;
    // The id is free again once the handler returned.
}

// Frames are handled in order: a cancellation that follows its request at once still finds it in flight.
TEST(ConnectionHandler, CancellationRightAfterTheRequestIsHonoured) {
    server srv(test_options());
    add_test_features(srv);
    harness h(srv);
    h.send(modern_request("now", "tools/call", call_params("until_cancelled")));
    h.send(cancelled_notification("now"));
    ASSERT_TRUE(h.finish());
    for (auto const& m : h.messages())
        EXPECT_FALSE(is_response_to(m, "now")) << m;
}

// A cancellation that names no running request changes nothing.
TEST(ConnectionHandler, CancellingAnUnknownIdIsIgnored) {
    server srv(test_options());
    add_test_features(srv);
    harness h(srv);
    h.send(cancelled_notification(404));
    h.send(notification("notifications/cancelled", {{"requestId", json::array{}}}));
    h.send(modern_request(1, "tools/list"));
    expect_modern_result(h.response(1), true);
}

// JSON-RPC ids are unique among outstanding requests: a second request with a running id is refused.
TEST(ConnectionHandler, DuplicateInFlightIdIsInvalidRequest) {
    server srv(test_options());
    add_test_features(srv);
    harness h(srv);
    json::object params = call_params("until_cancelled");
    params["_meta"] = modern_meta({}, {{"progressToken", "t"}});
    h.send(modern_request(1, "tools/call", params));
    ASSERT_TRUE(
        h.wait_for([](json::value const& m) { return is_notification(m, "notifications/progress"); }));
    h.send(modern_request(1, "tools/list"));
    auto const dup = h.response(1);
    expect_error(dup, -32600);
    h.send(cancelled_notification(1));
    ASSERT_TRUE(h.finish());
    std::size_t answers = 0;
    for (auto const& m : h.messages())
        answers += is_response_to(m, 1);
    EXPECT_EQ(answers, 1u);
}

// Modern requests are stateless: a handler cannot send a request to the client (DIGEST §1: no ServerRequest).
TEST(ConnectionHandler, ModernRequestCannotAskTheClient) {
    server srv(test_options());
    srv.add_tool(plain_tool("ask"),
                 [](json::object const&,
                    duet::server::request_context& ctx) -> boost::asio::awaitable<duet::server::tool_result> {
                     // Named arguments: GCC 12 may destroy a coroutine's temporary arguments early
                     // (request_context.hpp).
                     std::string const method = "roots/list";
                     json::value const params = json::object{};
                     auto r = co_await ctx.async_request_client(method, params);
                     if (r)
                         co_return duet::server::tool_result::text("asked");
                     co_return duet::server::tool_result::error(
                         r.error().local == duet::server::peer_errc::not_in_this_era ? "not in this era"
                                                                                     : "other");
                 });
    harness h(srv);
    h.send(modern_request(1, "tools/call", call_params("ask"), {{"roots", json::object{}}}));
    auto const r = result_of(h.response(1));
    EXPECT_EQ(first_text(r), "not in this era");
    for (auto const& m : h.messages())
        EXPECT_FALSE(is_server_request(m, "roots/list")) << m;
}

// A legacy session's request to the client fails with connection_closed at end of input, so the handler ends
// and the connection finishes.
TEST(ConnectionHandler, EndOfInputFailsAPendingClientRequest) {
    server srv(test_options());
    add_roots_asking_tool(srv);
    harness h(srv);
    h.send(initialize_request(1, "2025-11-25", {{"roots", json::object{}}}));
    h.response(1);
    h.send(initialized_notification());
    h.send(legacy_request(2, "tools/call", call_params("ask")));
    ASSERT_TRUE(h.wait_for([](json::value const& m) { return is_server_request(m, "roots/list"); }));
    ASSERT_TRUE(h.finish());
    auto const r = result_of(h.response(2));
    EXPECT_TRUE(is_error_result(r)) << json::value(r);
}

// A client error answering the server's request reaches the handler as a remote failure.
TEST(ConnectionHandler, ClientErrorAnswerReachesTheHandler) {
    server srv(test_options());
    srv.add_tool(plain_tool("ask"),
                 [](json::object const&,
                    duet::server::request_context& ctx) -> boost::asio::awaitable<duet::server::tool_result> {
                     // Named arguments: GCC 12 may destroy a coroutine's temporary arguments early
                     // (request_context.hpp).
                     std::string const method = "roots/list";
                     json::value const params = json::object{};
                     auto r = co_await ctx.async_request_client(method, params);
                     if (r)
                         co_return duet::server::tool_result::text("answered");
                     co_return duet::server::tool_result::text(
                         r.error().remote ? std::to_string(r.error().remote->code) : std::string("local"));
                 });
    harness h(srv);
    h.send(initialize_request(1, "2025-11-25", {{"roots", json::object{}}}));
    h.response(1);
    h.send(initialized_notification());
    h.send(legacy_request(2, "tools/call", call_params("ask")));
    auto const asked = h.wait_for([](json::value const& m) { return is_server_request(m, "roots/list"); });
    ASSERT_TRUE(asked);
    auto const id = h.messages()[*asked].at("id");
    h.send(
        json::object{{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", -32601}, {"message", "no roots"}}}});
    EXPECT_EQ(first_text(result_of(h.response(2))), "-32601");
}

// connection_options::client_request_timeout is the default deadline of a request to the client: when it
// passes, the handler gets timed_out and the client is told with notifications/cancelled (cancellation goes
// both ways in legacy sessions).
TEST(ConnectionHandler, UnansweredClientRequestTimesOutByTheConnectionDefault) {
    server srv(test_options());
    srv.add_tool(plain_tool("ask"),
                 [](json::object const&,
                    duet::server::request_context& ctx) -> boost::asio::awaitable<duet::server::tool_result> {
                     // Named arguments: GCC 12 may destroy a coroutine's temporary arguments early
                     // (request_context.hpp).
                     std::string const method = "roots/list";
                     json::value const params = json::object{};
                     auto r = co_await ctx.async_request_client(method, params);
                     if (r)
                         co_return duet::server::tool_result::text("answered");
                     co_return duet::server::tool_result::text(
                         r.error().local == duet::server::peer_errc::timed_out ? "timed out"
                                                                               : r.error().to_string());
                 });
    duet::server::connection_options options;
    options.client_request_timeout = std::chrono::milliseconds(50);
    harness h(srv, options);
    h.send(initialize_request(1, "2025-11-25", {{"roots", json::object{}}}));
    h.response(1);
    h.send(initialized_notification());
    h.send(legacy_request(2, "tools/call", call_params("ask")));
    auto const asked = h.wait_for([](json::value const& m) { return is_server_request(m, "roots/list"); });
    ASSERT_TRUE(asked);
    auto const id = h.messages()[*asked].at("id");
    auto const answer =
        h.wait_for([](json::value const& m) { return is_response_to(m, 2); }, 0, std::chrono::seconds(30));
    ASSERT_TRUE(answer);
    EXPECT_EQ(first_text(result_of(h.messages()[*answer])), "timed out");
    auto const cancelled = h.wait_for([&](json::value const& m) {
        return is_notification(m, "notifications/cancelled") && m.at("params").at("requestId") == id;
    });
    ASSERT_TRUE(cancelled);
    EXPECT_LT(*cancelled, *answer);
    // A late answer is ignored.
    h.send(client_response(id, {{"roots", json::array{}}}));
    h.send(legacy_request(3, "ping"));
    h.response(3);
    if (auto* schemas = schemas_or_skip()) {
        EXPECT_GT(h.log().expect_schema_valid(*schemas), 0u);
    }
}

} // namespace
