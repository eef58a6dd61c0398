// Requests one after another on one kept-alive connection get the answers they get each on a connection of
// its own. The modern requests of one socket share one server::connection (modern_responses.hpp,
// modern_slot), which must carry nothing from one request to the next: an id used again, a handler that
// waits, a refusal, and a legacy session's and a sessionless request in between change no answer, and no
// modern answer names a session (ERA-POLICY).
#include "http/mcp_http.hpp"
#include "http/raw_socket.hpp"
#include "http/servers.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

namespace json = boost::json;
using namespace duet;
using namespace duet::test;
using namespace duet::test::http;

unsigned status_of(std::string const& response) {
    return response.size() > 12 ? static_cast<unsigned>(std::stoul(response.substr(9, 3))) : 0u;
}

TEST(HttpKeepAlive, EveryRequestOnOneConnectionGetsTheAnswerItGetsAlone) {
    inproc_server s;
    mcp_http session(s.ep());
    session.initialize("2025-11-25");
    mcp_http sessionless(s.ep());

    auto stale = sessionless.spec_for(modern_request(5, "tools/list"));
    set_header(stale, "Mcp-Session-Id", *session.session_id());
    std::vector<request_spec> const specs{
        sessionless.spec_for(modern_request(1, "tools/call", call_params("echo", {{"text", "first"}}))),
        // The same id again, on a handler that waits before it answers.
        sessionless.spec_for(modern_request(1, "tools/call", call_params("countdown", {{"n", 2}}))),
        sessionless.spec_for(modern_request(1, "tools/call", call_params("echo", {{"text", "again"}}))),
        sessionless.spec_for(modern_request(2, "tools/call", call_params("no_such_tool"))),
        session.spec_for(
            legacy_request("in-session", "tools/call", call_params("echo", {{"text", "legacy"}}))),
        sessionless.spec_for(legacy_request("sessionless", "ping")),
        stale,
        sessionless.spec_for(modern_request(3, "tools/call", call_params("add", {{"a", 2}, {"b", 3}}))),
    };

    raw_socket kept(s.ep().port);
    ASSERT_TRUE(kept.connected());
    for (std::size_t i = 0; i < specs.size(); ++i) {
        auto const alone = exchange(s.ep(), specs[i]);
        ASSERT_TRUE(kept.send(raw_request(s.ep(), specs[i])));
        auto const shared = kept.read_response();
        ASSERT_FALSE(shared.empty()) << "request " << i << " got no answer on the kept-alive connection";
        EXPECT_EQ(status_of(shared), alone.status) << "request " << i << ": " << shared;
        EXPECT_EQ(body_of(shared), alone.body) << "request " << i;
        if (i != 4) {
            EXPECT_EQ(shared.find("Mcp-Session-Id"), std::string::npos) << "request " << i << ": " << shared;
        }
    }
}

} // namespace

// An answer far larger than the kernel buffers between the two sockets: the server's first non-blocking send
// takes part of it (support/send_now.hpp) and async_write carries the rest, which must arrive whole and in
// order.
TEST(HttpKeepAlive, AnAnswerTheSocketCannotTakeAtOnceArrivesWholeInOrder) {
    inproc_server s;
    std::string text;
    for (std::size_t i = 0; text.size() < (16u << 20); ++i)
        text += std::to_string(i) + ',';
    s.srv().add_tool(
        server::tool{.name = "big", .description = "A large numbered text"},
        [&text](json::object const&, server::request_context&) { return server::tool_result::text(text); });
    mcp_http c(s.ep());
    auto const r = c.post(modern_request(1, "tools/call", call_params("big")));
    ASSERT_EQ(r.status, 200u);
    EXPECT_TRUE(first_text(result_of(r.json())) == text)
        << "the answer's text differs (" << r.body.size() << " bytes of body)";
    auto const next = c.post(modern_request(2, "tools/call", call_params("echo", {{"text", "after"}})));
    EXPECT_EQ(first_text(result_of(next.json())), "after");
}
