// The server's two I/O bounds (http_options): idle_timeout bounds the read of a request, from when the
// server starts waiting for it to its last byte (a request trickled in byte by byte is cut all the same), and
// read_timeout bounds each write of a response. Neither runs while nothing is read or written: a handler
// slower than both still answers, an SSE stream quiet for longer than read_timeout stays open, and a
// kept-alive connection waits idle_timeout for its next request whatever the last write's bound was.
//
// Raw sockets, so that the test decides exactly when each byte goes out and sees when the server closes.
// Lower bounds are measured from before the server's timer can have started (before the connection or the
// request); upper bounds are the overall wait, far beyond every bound here even on a loaded machine.
#include <duet/server/content.hpp>

#include "http/mcp_http.hpp"
#include "http/raw_socket.hpp"
#include "http/servers.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "support/wait.hpp"

#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <thread>

namespace {

namespace json = boost::json;
using namespace duet;
using namespace duet::test;
using namespace duet::test::http;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

// How long a test waits for a bound of a few hundred milliseconds to act: only a broken one takes this long.
constexpr std::chrono::milliseconds bounded_wait = 10s;

// The bytes of a kept-alive POST of `message` with the headers its era needs.
std::string raw_post(inproc_server& s, json::value const& message) {
    return raw_request(s.ep(), mcp_http(s.ep()).spec_for(message));
}

std::chrono::milliseconds since(steady::time_point t0) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - t0);
}

TEST(HttpTimeouts, AConnectionThatSendsNothingIsClosedAfterTheIdleTimeout) {
    transport::http_options o;
    o.idle_timeout = 300ms;
    o.read_timeout = 20s;
    inproc_server s(o);
    auto const t0 = steady::now();
    raw_socket c(s.ep().port);
    ASSERT_TRUE(c.connected());
    EXPECT_TRUE(c.closed_within(http_wait));
    EXPECT_GE(since(t0), 300ms);
}

// The bound is on the whole request, not on each read: bytes that keep coming do not extend it. A new
// connection's head is bounded by header_timeout (a kept-alive one's by idle_timeout, hardening_test.cpp).
TEST(HttpTimeouts, ARequestTrickledInIsCutAtTheHeaderTimeoutFromItsStart) {
    transport::http_options o;
    o.header_timeout = 400ms;
    o.idle_timeout = 400ms;
    o.read_timeout = 20s;
    inproc_server s(o);
    auto const t0 = steady::now();
    raw_socket c(s.ep().port);
    ASSERT_TRUE(c.connected());
    ASSERT_TRUE(c.send("POST " + s.ep().path + " HTTP/1.1\r\nX-Slow: "));
    bool closed = false;
    std::string ignored;
    // A byte every 50 ms, far within the bound each: only the bound on the whole request can cut it.
    while (!closed && since(t0) < bounded_wait) {
        if (!c.send("a"))
            closed = true;
        else
            closed = c.read_some(ignored, 50ms) == raw_socket::got::closed;
    }
    EXPECT_TRUE(closed) << "a request that keeps trickling in was never cut";
    EXPECT_GE(since(t0), 400ms);
    EXPECT_TRUE(ignored.empty()) << ignored;
}

// After a response, the next request gets idle_timeout to arrive, not what was left of the write's bound.
TEST(HttpTimeouts, AKeptAliveConnectionWaitsTheIdleTimeoutForItsNextRequest) {
    transport::http_options o;
    o.read_timeout = 150ms;
    o.idle_timeout = 20s;
    inproc_server s(o);
    raw_socket c(s.ep().port);
    ASSERT_TRUE(c.connected());
    ASSERT_TRUE(c.send(raw_post(s, modern_request(1, "tools/list"))));
    auto const first = c.read_response();
    ASSERT_TRUE(first.starts_with("HTTP/1.1 200")) << first;

    std::string early;
    EXPECT_EQ(c.read_some(early, 600ms), raw_socket::got::nothing) << early;
    ASSERT_TRUE(c.send(raw_post(s, modern_request(2, "tools/list"))));
    auto const second = c.read_response();
    EXPECT_TRUE(second.starts_with("HTTP/1.1 200")) << second;
}

// And it is closed once idle_timeout passes with no next request.
TEST(HttpTimeouts, AKeptAliveConnectionIsClosedAfterTheIdleTimeout) {
    transport::http_options o;
    o.read_timeout = 20s;
    o.idle_timeout = 300ms;
    inproc_server s(o);
    raw_socket c(s.ep().port);
    ASSERT_TRUE(c.connected());
    auto const t0 = steady::now(); // the server's wait for a next request begins after the answer to this one
    ASSERT_TRUE(c.send(raw_post(s, modern_request(1, "tools/list"))));
    auto const first = c.read_response();
    ASSERT_TRUE(first.starts_with("HTTP/1.1 200")) << first;
    EXPECT_TRUE(c.closed_within(bounded_wait)) << "a kept-alive connection waited past its idle timeout";
    EXPECT_GE(since(t0), 300ms);
}

// Nothing is read or written while the handler runs: no bound applies to it.
TEST(HttpTimeouts, AHandlerSlowerThanBothBoundsStillAnswers) {
    transport::http_options o;
    o.read_timeout = 100ms;
    o.idle_timeout = 100ms;
    inproc_server s(o);
    raw_socket c(s.ep().port);
    ASSERT_TRUE(c.connected());
    ASSERT_TRUE(c.send(raw_post(s, modern_request(1, "tools/call", call_params("countdown", {{"n", 8}})))));
    auto const r = c.read_response();
    ASSERT_TRUE(r.starts_with("HTTP/1.1 200")) << r;
    EXPECT_NE(r.find("liftoff after 8 steps"), std::string::npos) << r;
}

// Between events nothing is written: a stream quiet for longer than read_timeout stays open.
TEST(HttpTimeouts, AnSseStreamQuietForLongerThanTheReadTimeoutStaysOpen) {
    transport::http_options o;
    o.read_timeout = 100ms;
    o.idle_timeout = 100ms;
    o.keepalive = 10min;
    inproc_server s(o);
    mcp_http c(s.ep());
    auto listen = c.open(listen_request("quiet"));
    ASSERT_EQ(listen->status(), 200u);
    ASSERT_TRUE(is_notification(c.next(*listen), "notifications/subscriptions/acknowledged"));
    // The quiet itself is what the test does, not a guess at how long something takes: a longer one (a
    // loaded machine) only tests more.
    std::this_thread::sleep_for(5 * o.read_timeout);
    add_runtime_tool(s.srv(), "late");
    EXPECT_TRUE(is_notification(c.next(*listen), "notifications/tools/list_changed"));
    s.stop();
    c.rest(*listen);
}

// A write the client does not take is cut at read_timeout: the client never gets the whole answer.
TEST(HttpTimeouts, AResponseTheClientDoesNotReadIsCutAfterTheReadTimeout) {
    transport::http_options o;
    o.read_timeout = 300ms;
    o.idle_timeout = 20s;
    inproc_server s(o);
    constexpr std::size_t big = 16u << 20; // far over what the kernel buffers between the two sockets
    s.srv().add_tool(server::tool{.name = "big", .description = "A large text"},
                     [](json::object const&, server::request_context&) {
                         return server::tool_result::text(std::string(big, 'a'));
                     });
    raw_socket c(s.ep().port, 4096);
    ASSERT_TRUE(c.connected());
    ASSERT_TRUE(c.send(raw_post(s, modern_request(1, "tools/call", call_params("big")))));
    // Once the answer starts coming, the server's write is under way: stop reading until the server gives up.
    std::string first;
    ASSERT_EQ(c.read_some(first, http_wait), raw_socket::got::data);
    ASSERT_TRUE(wait_until([&] { return c.server_end_closed(); }, bounded_wait))
        << "the server waited past its write bound for a client that reads nothing";
    std::size_t got = first.size();
    EXPECT_TRUE(c.closed_within(http_wait, &got));
    EXPECT_LT(got, big);
}

} // namespace
