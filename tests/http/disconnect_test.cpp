// A client that closes its connection mid-request (DIGEST §9): for a modern request that is the cancellation
// ("closing the response stream cancels the request"), noticed while the handler runs, whether the answer was
// to be JSON (nothing written yet) or SSE (between events); for a legacy request it is not (the client sends
// notifications/cancelled), and the request runs on for a resumption (resume_test.cpp).
#include <duet/server/content.hpp>

#include "http/mcp_http.hpp"
#include "http/raw_socket.hpp"
#include "http/servers.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "support/wait.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <future>

namespace {

namespace json = boost::json;
using namespace duet;
using namespace duet::test;
using namespace duet::test::http;

// What a handler that waits to be cancelled tells the test.
struct cancel_probe {
    std::promise<void> started;
    std::promise<void> cancelled;
    std::atomic<bool> was_started{false};
    std::atomic<bool> was_cancelled{false};
};

boost::asio::awaitable<server::tool_result> wait_for_cancel(std::shared_ptr<cancel_probe> probe,
                                                            server::request_context& ctx) {
    ctx.report_progress(1); // an SSE response when the request asked for progress, JSON otherwise
    if (!probe->was_started.exchange(true))
        probe->started.set_value();
    boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
    auto const give_up = std::chrono::steady_clock::now() + http_wait;
    while (!ctx.cancelled() && std::chrono::steady_clock::now() < give_up) {
        timer.expires_after(std::chrono::milliseconds(5));
        co_await timer.async_wait(boost::asio::use_awaitable);
    }
    if (ctx.cancelled() && !probe->was_cancelled.exchange(true))
        probe->cancelled.set_value();
    co_return server::tool_result::text("stopped");
}

std::shared_ptr<cancel_probe> add_waiting_tool(server::server& srv) {
    auto probe = std::make_shared<cancel_probe>();
    srv.add_tool(
        server::tool{.name = "wait_for_cancel", .description = "Runs until cancelled"},
        [probe](json::object const&, server::request_context& ctx) { return wait_for_cancel(probe, ctx); });
    return probe;
}

bool ready(std::future<void>& f) {
    return f.wait_for(http_wait) == std::future_status::ready;
}

// Item 2 of the issue: no byte of a JSON answer is written while the handler runs, yet the close is seen.
TEST(HttpDisconnect, ClosingAModernJsonRequestCancelsItsHandler) {
    inproc_server s;
    auto probe = add_waiting_tool(s.srv());
    auto started = probe->started.get_future();
    auto cancelled = probe->cancelled.get_future();
    mcp_http c(s.ep());
    response_stream pending(
        s.ep(), c.spec_for(modern_request("w", "tools/call", call_params("wait_for_cancel"))), false);
    ASSERT_TRUE(ready(started));
    pending.close();
    EXPECT_TRUE(ready(cancelled)) << "the handler was not cancelled";
}

TEST(HttpDisconnect, ClosingAModernSseStreamCancelsItsHandler) {
    inproc_server s;
    auto probe = add_waiting_tool(s.srv());
    auto cancelled = probe->cancelled.get_future();
    mcp_http c(s.ep());
    json::object params = call_params("wait_for_cancel");
    params["_meta"] = modern_meta({}, {{"progressToken", "w"}});
    auto call = c.open(modern_request("w", "tools/call", params));
    ASSERT_EQ(call->header("Content-Type"), "text/event-stream");
    EXPECT_TRUE(is_notification(c.next(*call), "notifications/progress"));
    call->close();
    EXPECT_TRUE(ready(cancelled)) << "the handler was not cancelled";
    c.expect_schema_valid();
}

// The server stays healthy for everyone else: the same tool, called and left alone, is not cancelled by
// another client's departure.
TEST(HttpDisconnect, AnotherClientsCloseCancelsOnlyItsOwnRequest) {
    inproc_server s;
    mcp_http c(s.ep());
    response_stream leaving(
        s.ep(), c.spec_for(modern_request("gone", "tools/call", call_params("countdown", {{"n", 20}}))),
        false);
    auto const r = c.post(modern_request("stays", "tools/call", call_params("countdown", {{"n", 2}})));
    leaving.close();
    EXPECT_EQ(r.status, 200u) << r.body;
    EXPECT_EQ(first_text(result_of(r.messages().back())), "liftoff after 2 steps");
    c.expect_schema_valid();
}

// The watch reads nothing and decides nothing on data: a client that sends its next request on the same
// connection while the answer to the first is still being prepared (HTTP/1.1 pipelining) is present, so the
// first request runs to its answer and the second is answered after it.
TEST(HttpDisconnect, APipelinedRequestWhileAnAnswerWaitsIsNotADisconnect) {
    inproc_server s;
    auto probe = add_waiting_tool(s.srv());
    auto started = probe->started.get_future();
    struct hold_state {
        std::atomic<bool> release{false};
        std::atomic<int> turns{0}; // the handler's waits, each a turn of the server's event loop
        std::atomic<bool> stopped{false};
    };
    auto hold = std::make_shared<hold_state>();
    s.srv().add_tool(
        server::tool{.name = "hold", .description = "Answers once the test lets it"},
        [probe, hold](json::object const&,
                      server::request_context& ctx) -> boost::asio::awaitable<server::tool_result> {
            if (!probe->was_started.exchange(true))
                probe->started.set_value();
            boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
            auto const give_up = std::chrono::steady_clock::now() + http_wait;
            while (!hold->release && !ctx.cancelled() && std::chrono::steady_clock::now() < give_up) {
                timer.expires_after(std::chrono::milliseconds(5));
                co_await timer.async_wait(boost::asio::use_awaitable);
                ++hold->turns;
            }
            hold->stopped = true;
            co_return server::tool_result::text(ctx.cancelled() ? "cancelled" : "released");
        });
    mcp_http c(s.ep());
    raw_socket kept(s.ep().port);
    ASSERT_TRUE(kept.connected());
    ASSERT_TRUE(
        kept.send(raw_request(s.ep(), c.spec_for(modern_request(1, "tools/call", call_params("hold"))))));
    ASSERT_TRUE(ready(started));
    ASSERT_TRUE(kept.send(raw_request(
        s.ep(), c.spec_for(modern_request(2, "tools/call", call_params("echo", {{"text", "second"}}))))));
    // On loopback the bytes are in the server's socket once send() returns; a timer's expiry and a socket's
    // readiness are both learnt from one poll of the reactor, so after a few more turns of the handler the
    // watch has seen the second request, and would have cancelled the first if it took data for a close.
    int const sent_at = hold->turns;
    ASSERT_TRUE(wait_until([&] { return hold->turns >= sent_at + 4 || hold->stopped; }, http_wait));
    hold->release = true;

    auto const first = kept.read_response();
    ASSERT_FALSE(first.empty()) << "no answer to the first request";
    auto const first_answer = json::parse(body_of(first));
    EXPECT_EQ(first_answer.at("id"), 1);
    EXPECT_EQ(first_text(result_of(first_answer)), "released");
    auto const second = kept.read_response();
    ASSERT_FALSE(second.empty()) << "no answer to the pipelined request";
    auto const second_answer = json::parse(body_of(second));
    EXPECT_EQ(second_answer.at("id"), 2);
    EXPECT_EQ(first_text(result_of(second_answer)), "second");
}

} // namespace
