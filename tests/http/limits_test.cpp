// Limits with clear answers (http_server.hpp "Safety"): oversized headers 431, sessions beyond the limit 503,
// listen streams beyond the limit 503 (a listen whose client went away frees its slot at once, not at the
// next keep-alive write), each answered as a JSON-RPC error. Body size (413) and Accept (406) are pinned in
// status_test.cpp, the replay bound of session streams in resume_test.cpp.
#include "http/mcp_http.hpp"
#include "http/servers.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"

#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

namespace {

namespace json = boost::json;
using namespace duet;
using namespace duet::test;
using namespace duet::test::http;
using steady = std::chrono::steady_clock;

TEST(HttpLimits, HeadersOverTheLimitAre431) {
    transport::http_options o;
    o.max_header_bytes = 2048;
    inproc_server s(o);
    mcp_http c(s.ep());
    auto const small = c.post(modern_request(1, "tools/list"), {{"X-Padding", std::string(512, 'a')}});
    EXPECT_EQ(small.status, 200u) << small.body;
    auto const big = c.post(modern_request(2, "tools/list"), {{"X-Padding", std::string(4096, 'a')}});
    EXPECT_EQ(big.status, 431u) << big.body;
    EXPECT_EQ(code_of(big.json()), -32600) << big.body;
    c.expect_schema_valid();
}

TEST(HttpLimits, SessionsBeyondTheLimitAre503UntilOneEnds) {
    transport::http_options o;
    o.max_sessions = 2;
    inproc_server s(o);
    mcp_http a(s.ep());
    mcp_http b(s.ep());
    a.initialize("2025-11-25");
    b.initialize("2025-11-25");

    mcp_http third(s.ep());
    auto const refused = third.post(initialize_request("full", "2025-11-25"));
    EXPECT_EQ(refused.status, 503u) << refused.body;
    EXPECT_FALSE(refused.has_header("Mcp-Session-Id"));
    EXPECT_TRUE(is_response_to(refused.json(), "full")) << refused.body;
    EXPECT_EQ(code_of(refused.json()), -32603);

    request_spec del;
    del.method = "DELETE";
    del.headers = a.session_headers();
    EXPECT_EQ(exchange(s.ep(), del).status, 200u);
    third.initialize("2025-11-25");
    EXPECT_TRUE(third.session_id());
    third.expect_schema_valid();
}

TEST(HttpLimits, ListenStreamsBeyondTheLimitAre503) {
    transport::http_options o;
    o.max_listen_streams = 1;
    inproc_server s(o);
    mcp_http c(s.ep());
    auto first = c.open(listen_request("first"));
    ASSERT_EQ(first->status(), 200u);
    ASSERT_TRUE(is_notification(c.next(*first), "notifications/subscriptions/acknowledged"));
    auto const second = c.post(listen_request("second"));
    EXPECT_EQ(second.status, 503u) << second.body;
    EXPECT_TRUE(is_response_to(second.json(), "second")) << second.body;
    // Other modern requests are not limited by it.
    EXPECT_EQ(c.post(modern_request(3, "tools/list")).status, 200u);
    s.stop();
    c.rest(*first);
    c.expect_schema_valid();
}

// Item 5 of the issue: the server notices a listen's client closing its connection while the stream is idle
// (keep-alive comments far apart here), so the slot is free for the next listen at once.
TEST(HttpLimits, AListenWhoseClientLeftFreesItsSlotAtOnce) {
    transport::http_options o;
    o.max_listen_streams = 1;
    o.keepalive = std::chrono::minutes(10);
    inproc_server s(o);
    mcp_http c(s.ep());
    {
        auto gone = c.open(listen_request("gone"));
        ASSERT_EQ(gone->status(), 200u);
        ASSERT_TRUE(is_notification(c.next(*gone), "notifications/subscriptions/acknowledged"));
        gone->close();
    }
    // The server learns of the close asynchronously: a listen racing it may still get 503, never more than
    // briefly (the bound is a hang guard, far below the keep-alive interval).
    auto const deadline = steady::now() + http_wait;
    std::unique_ptr<response_stream> next;
    int attempt = 0;
    while (steady::now() < deadline) {
        next = c.open(listen_request(json::string("next-" + std::to_string(attempt++))));
        if (next->status() == 200u)
            break;
        EXPECT_EQ(next->status(), 503u);
        c.rest(*next);
    }
    ASSERT_EQ(next->status(), 200u);
    EXPECT_TRUE(is_notification(c.next(*next), "notifications/subscriptions/acknowledged"));
    s.stop();
    c.rest(*next);
    c.expect_schema_valid();
}

} // namespace
