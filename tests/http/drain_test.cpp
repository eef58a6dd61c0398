// Draining (http_server.hpp run(): SIGINT/SIGTERM or stop()): the listener closes, keep-alive connections
// that wait for a next request close at once (they have nothing to finish and must not hold the drain until
// its deadline), requests in flight finish with their answers, streams end, and the process exits 0.
#include "http/mcp_http.hpp"
#include "http/servers.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"

#include <gtest/gtest.h>

#include <signal.h>

#include <thread>

namespace {

namespace json = boost::json;
using namespace duet;
using namespace duet::test;
using namespace duet::test::http;

// Item 3 of the issue. The drain deadline is far beyond the wait, so only closing the idle connection at the
// start of the drain passes.
TEST(HttpDrain, IdleKeepAliveConnectionsCloseWhenTheDrainStarts) {
    transport::http_options o;
    o.drain_deadline = std::chrono::minutes(3);
    inproc_server s(o);
    mcp_http c(s.ep());
    auto spec = c.spec_for(modern_request(1, "tools/list"));
    set_header(spec, "Connection", "keep-alive");
    response_stream idle(s.ep(), spec);
    auto const r = idle.finish();
    ASSERT_EQ(r.status, 200u) << r.body;
    ASSERT_NE(r.header("Connection"), "close");

    std::thread stopper([&] { s.stop(); });
    EXPECT_TRUE(idle.server_closes(http_wait));
    stopper.join();
}

// The whole process on SIGTERM with a legacy call streaming, a session's GET stream and an idle keep-alive
// connection: the call ends with its response, the stream ends, the idle connection closes, exit status 0.
TEST(HttpDrain, SigtermFinishesALegacyCallInFlightAndClosesIdleConnections) {
    child_server srv;
    mcp_http legacy(srv.ep());
    legacy.initialize("2025-11-25");
    auto get = legacy.open_spec(stream_spec(legacy));
    ASSERT_EQ(get->status(), 200u);

    auto spec = legacy.spec_for(legacy_request("idle", "ping"));
    set_header(spec, "Connection", "keep-alive");
    response_stream idle(srv.ep(), spec);
    ASSERT_EQ(idle.finish().status, 200u);

    json::object params = call_params("countdown", {{"n", 10}});
    params["_meta"] = json::object{{"progressToken", "drain"}};
    auto call = legacy.open(legacy_request("call", "tools/call", params));
    ASSERT_EQ(call->status(), 200u);
    auto const first = legacy.next(*call);
    ASSERT_TRUE(is_notification(first, "notifications/progress")) << first; // in flight
    srv.signal(SIGTERM);

    EXPECT_TRUE(idle.server_closes(http_wait));
    auto const rest = legacy.rest(*call);
    ASSERT_FALSE(rest.empty());
    ASSERT_TRUE(is_response_to(rest.back(), "call")) << rest.back();
    EXPECT_EQ(first_text(result_of(rest.back())), "liftoff after 10 steps");
    EXPECT_TRUE(legacy.rest(*get).empty());
    EXPECT_TRUE(get->ended());
    EXPECT_EQ(srv.wait_exit(), 0) << srv.stderr_text();
    legacy.expect_schema_valid();
}

} // namespace
