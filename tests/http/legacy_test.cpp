// Legacy sessions over Streamable HTTP (DIGEST §9 "Legacy", §11; ERA-POLICY "HTTP routing of one POST"):
// initialize mints a random Mcp-Session-Id that later requests must carry (missing: 400 -32602 by ERA-POLICY
// step 9; unknown: 404); the version header may be absent but not garbage; after a counter-offer the session
// decides the version whatever the header says; DELETE ends the session; GET opens its one standalone SSE
// stream, resumable with Last-Event-ID; answers to server requests are POSTed and accepted with 202;
// 2025-03-26 sessions alone take batches.
#include "http/mcp_http.hpp"
#include "http/servers.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <algorithm>

namespace {

namespace json = boost::json;
using namespace duet::test;
using namespace duet::test::http;

request_spec delete_spec(mcp_http const& c) {
    request_spec spec;
    spec.method = "DELETE";
    spec.headers = c.session_headers();
    return spec;
}

bool is_session_id(std::string const& id) {
    return id.size() == 32 && std::all_of(id.begin(), id.end(), [](char ch) {
               return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
           });
}

// DIGEST §9: the server sets Mcp-Session-Id on the initialize response; Duet's are 128 random bits in hex.
TEST(HttpLegacy, InitializeMintsARandomSessionIdEachTime) {
    inproc_server s;
    mcp_http a(s.ep());
    mcp_http b(s.ep());
    auto const ra = a.initialize("2025-11-25");
    auto const rb = b.initialize("2025-06-18");
    EXPECT_EQ(ra.status, 200u) << ra.body;
    EXPECT_EQ(ra.header("Content-Type"), "application/json");
    ASSERT_TRUE(a.session_id() && b.session_id());
    EXPECT_TRUE(is_session_id(*a.session_id())) << *a.session_id();
    EXPECT_TRUE(is_session_id(*b.session_id())) << *b.session_id();
    EXPECT_NE(*a.session_id(), *b.session_id());
    expect_legacy_result(ra.json());
    EXPECT_EQ(a.version(), "2025-11-25");
    EXPECT_EQ(b.version(), "2025-06-18");

    // A refused initialize opens nothing.
    mcp_http c(s.ep());
    auto const bad = c.post(legacy_request(1, "initialize", {{"protocolVersion", "2025-11-25"}}));
    EXPECT_EQ(bad.status, 400u) << bad.body;
    EXPECT_EQ(code_of(bad.json()), -32602);
    EXPECT_FALSE(bad.has_header("Mcp-Session-Id"));
    a.expect_schema_valid();
    b.expect_schema_valid();
}

// ERA-POLICY step 9: no session and no `_meta` claim is -32602 with 400, naming the key and the versions,
// with or without a legacy version header.
TEST(HttpLegacy, RequestWithoutTheSessionIdIs400InvalidParams) {
    inproc_server s;
    mcp_http c(s.ep());
    c.initialize("2025-11-25");
    auto const with_session = c.post(legacy_request(1, "tools/list"));
    EXPECT_EQ(with_session.status, 200u) << with_session.body;

    c.forget_session();
    for (auto const& headers :
         {std::vector<header_field>{}, std::vector<header_field>{{"MCP-Protocol-Version", "2025-11-25"}}}) {
        auto const r = c.post(legacy_request(2, "tools/list"), headers);
        EXPECT_EQ(r.status, 400u) << r.body;
        auto const m = r.json();
        EXPECT_TRUE(is_response_to(m, 2)) << m;
        EXPECT_EQ(code_of(m), -32602);
        EXPECT_NE(json::serialize(m).find("io.modelcontextprotocol/protocolVersion"), std::string::npos) << m;
    }
    c.expect_schema_valid();
}

// DIGEST §9: an unknown or expired session gets 404 (the client then re-initializes).
TEST(HttpLegacy, UnknownSessionIdIs404) {
    inproc_server s;
    mcp_http c(s.ep());
    c.initialize("2025-11-25");
    std::vector<header_field> const stale{{"Mcp-Session-Id", "ffffffffffffffffffffffffffffffff"}};
    auto const request = c.post(legacy_request(1, "tools/list"), stale);
    EXPECT_EQ(request.status, 404u) << request.body;
    EXPECT_TRUE(is_response_to(request.json(), 1)) << request.body;
    auto const note = c.post(initialized_notification(), stale);
    EXPECT_EQ(note.status, 404u) << note.body;
    auto const get = exchange(s.ep(), stream_spec(c, stale));
    EXPECT_EQ(get.status, 404u) << get.body;
    c.expect_schema_valid();
}

// DIGEST §9: "If [MCP-Protocol-Version] is absent, assume 2025-03-26" may be relaxed: inside a session, the
// session knows its version.
TEST(HttpLegacy, VersionHeaderMayBeAbsentInASession) {
    inproc_server s;
    mcp_http c(s.ep());
    c.initialize("2025-11-25");
    auto spec = c.spec_for(legacy_request(2, "tools/list"));
    remove_header(spec, "MCP-Protocol-Version");
    auto const bare = c.send(spec, legacy_request(2, "tools/list"));
    EXPECT_EQ(bare.status, 200u) << bare.body;
    expect_legacy_result(bare.json());
    c.expect_schema_valid();
}

// DIGEST §9: "An invalid or unsupported value gets 400."
TEST(HttpLegacy, GarbageVersionHeaderIs400) {
    inproc_server s;
    mcp_http c(s.ep());
    c.initialize("2025-11-25");
    auto const r = c.post(legacy_request(1, "tools/list"), {{"MCP-Protocol-Version", "banana"}});
    EXPECT_EQ(r.status, 400u) << r.body;
    EXPECT_TRUE(is_response_to(r.json(), 1)) << r.body;
    EXPECT_NE(code_of(r.json()), 0);
    c.expect_schema_valid();
}

// ERA-POLICY "HTTP routing": after a counter-offer the client may keep sending its own (modern) version in
// the header; a session-bound request without `_meta` is served at the negotiated version, legacy-shaped.
TEST(HttpLegacy, ModernVersionHeaderAfterCounterOfferIsServedAtTheNegotiatedVersion) {
    inproc_server s;
    mcp_http c(s.ep());
    auto const init = c.initialize("2026-07-28");
    EXPECT_EQ(result_of(init.json()).at("protocolVersion"), "2025-11-25");
    ASSERT_TRUE(c.session_id());
    auto const r = c.post(legacy_request(1, "tools/list"), {{"MCP-Protocol-Version", "2026-07-28"}});
    EXPECT_EQ(r.status, 200u) << r.body;
    expect_legacy_result(r.json());
    EXPECT_FALSE(result_of(r.json()).contains("resultType"));
    c.expect_schema_valid();
}

// DIGEST §9: DELETE with the id ends the session; afterwards it is unknown (404).
TEST(HttpLegacy, DeleteEndsTheSession) {
    inproc_server s;
    mcp_http c(s.ep());
    c.initialize("2025-11-25");
    auto const del = exchange(s.ep(), delete_spec(c));
    EXPECT_GE(del.status, 200u);
    EXPECT_LT(del.status, 300u) << del.body;
    auto const after = c.post(legacy_request(1, "tools/list"));
    EXPECT_EQ(after.status, 404u) << after.body;
    EXPECT_EQ(exchange(s.ep(), delete_spec(c)).status, 404u);
    EXPECT_EQ(exchange(s.ep(), stream_spec(c)).status, 404u);
    c.expect_schema_valid();
}

// DIGEST §9: GET opens the session's standalone SSE stream; Duet allows one at a time (409 for a second), and
// ending the session ends the stream.
TEST(HttpLegacy, GetOpensTheStandaloneStreamAndASecondGetIs409) {
    inproc_server s;
    mcp_http c(s.ep());
    c.initialize("2025-11-25");
    auto first = c.open_spec(stream_spec(c));
    EXPECT_EQ(first->status(), 200u);
    EXPECT_EQ(first->header("Content-Type"), "text/event-stream");
    EXPECT_EQ(first->header("X-Accel-Buffering"), "no");

    auto const second = exchange(s.ep(), stream_spec(c));
    EXPECT_EQ(second.status, 409u) << second.body;

    // Session-level messages arrive on it.
    add_runtime_tool(s.srv(), "late_tool");
    auto const changed = c.next(*first);
    EXPECT_TRUE(is_notification(changed, "notifications/tools/list_changed")) << changed;
    EXPECT_TRUE(subscription_id_of(changed).is_null()) << changed;

    EXPECT_LT(exchange(s.ep(), delete_spec(c)).status, 300u);
    EXPECT_TRUE(c.rest(*first).empty());
    EXPECT_TRUE(first->ended());
    c.expect_schema_valid();
}

// DIGEST §9: a POST carrying a response to a server request gets 202; the request it answers then completes
// on its own stream.
TEST(HttpLegacy, ResponsesToServerRequestsArePostedAndAccepted202) {
    inproc_server s;
    mcp_http c(s.ep());
    c.initialize("2025-11-25", {{"elicitation", json::object{}}});
    auto call = c.open(legacy_request("ask", "tools/call", call_params("ask_name")));
    EXPECT_EQ(call->status(), 200u);
    EXPECT_EQ(call->header("Content-Type"), "text/event-stream");
    auto const asked = c.next(*call);
    ASSERT_TRUE(is_server_request(asked, "elicitation/create")) << asked;

    auto const answer =
        c.post(client_response(asked.at("id"), {{"action", "accept"}, {"content", {{"name", "Lin"}}}}));
    EXPECT_EQ(answer.status, 202u) << answer.body;
    EXPECT_TRUE(answer.body.empty()) << answer.body;

    auto const rest = c.rest(*call);
    ASSERT_FALSE(rest.empty());
    ASSERT_TRUE(is_response_to(rest.back(), "ask")) << rest.back();
    EXPECT_EQ(first_text(result_of(rest.back())), "Hello, Lin!");
    c.expect_schema_valid();
}

// DIGEST §9: resumability via event ids: a GET with Last-Event-ID replays what came after that event, even
// before the server noticed that the previous stream broke.
TEST(HttpLegacy, LastEventIdResumesAfterThatEvent) {
    inproc_server s;
    mcp_http c(s.ep());
    c.initialize("2025-11-25");
    auto first = c.open_spec(stream_spec(c));
    ASSERT_EQ(first->status(), 200u);
    std::vector<sse_event> seen;
    for (std::string const name : {"one", "two", "three"}) {
        add_runtime_tool(s.srv(), name);
        auto e = first->next();
        ASSERT_TRUE(e);
        EXPECT_FALSE(e->id.empty()) << e->data;
        c.log().record_received(e->data);
        seen.push_back(*e);
    }
    first->close(); // the stream "breaks"

    auto resumed = c.open_spec(stream_spec(c, {{"Last-Event-ID", seen[0].id}}));
    ASSERT_EQ(resumed->status(), 200u);
    for (std::size_t i = 1; i < seen.size(); ++i) {
        auto e = resumed->next();
        ASSERT_TRUE(e);
        EXPECT_EQ(e->id, seen[i].id);
        EXPECT_EQ(e->data, seen[i].data);
    }
    // New events continue after the replay.
    add_runtime_tool(s.srv(), "four");
    auto e = resumed->next();
    ASSERT_TRUE(e);
    c.log().record_received(e->data);
    EXPECT_TRUE(is_notification(json::parse(e->data), "notifications/tools/list_changed")) << e->data;
    EXPECT_NE(e->id, seen.back().id);
    c.expect_schema_valid();
}

// Legacy cancellation (DIGEST §9: the client sends notifications/cancelled) ends that request alone: the
// session keeps serving, server requests included.
TEST(HttpLegacy, CancelledRequestLeavesTheSessionUsable) {
    inproc_server s;
    mcp_http c(s.ep());
    c.initialize("2025-11-25", {{"elicitation", json::object{}}});
    json::object params = call_params("countdown", {{"n", 20}});
    params["_meta"] = json::object{{"progressToken", "t"}};
    auto counting = c.open(legacy_request("long", "tools/call", params));
    auto const tick = c.next(*counting);
    ASSERT_TRUE(is_notification(tick, "notifications/progress")) << tick;

    auto const cancel = c.post(cancelled_notification("long"));
    EXPECT_EQ(cancel.status, 202u) << cancel.body;
    for (auto const& m : c.rest(*counting))
        EXPECT_FALSE(is_response_to(m, "long")) << "a cancelled request was answered: " << m;

    auto call = c.open(legacy_request("ask", "tools/call", call_params("ask_name")));
    auto const asked = c.next(*call);
    ASSERT_TRUE(is_server_request(asked, "elicitation/create")) << asked;
    EXPECT_EQ(c.post(client_response(asked.at("id"), {{"action", "accept"}, {"content", {{"name", "Ada"}}}}))
                  .status,
              202u);
    auto const rest = c.rest(*call);
    ASSERT_FALSE(rest.empty());
    EXPECT_EQ(first_text(result_of(rest.back())), "Hello, Ada!");
    c.expect_schema_valid();
}

// DIGEST §11: batching exists in 2025-03-26 only (removed in 2025-06-18); elsewhere a batch is refused.
TEST(HttpLegacy, BatchesWorkOnlyInA20250326Session) {
    inproc_server s;
    mcp_http old(s.ep());
    old.initialize("2025-03-26");
    json::array const batch{
        legacy_request(1, "ping"), legacy_request(2, "tools/list"),
        notification("notifications/progress", {{"progressToken", "x"}, {"progress", 1}})};
    auto const r = old.post(batch);
    EXPECT_EQ(r.status, 200u) << r.body;
    auto const replies = r.json();
    ASSERT_TRUE(replies.is_array()) << replies;
    ASSERT_EQ(replies.as_array().size(), 2u) << replies;
    EXPECT_TRUE(is_response_to(replies.as_array()[0], 1)) << replies;
    EXPECT_TRUE(is_response_to(replies.as_array()[1], 2)) << replies;
    expect_legacy_result(replies.as_array()[1]);

    mcp_http newer(s.ep());
    newer.initialize("2025-11-25");
    auto const refused = newer.post(batch);
    EXPECT_EQ(refused.status, 400u) << refused.body;
    EXPECT_EQ(code_of(refused.json()), -32600);

    mcp_http none(s.ep());
    auto const sessionless = none.post(batch);
    EXPECT_EQ(sessionless.status, 400u) << sessionless.body;
    newer.expect_schema_valid();
}

} // namespace
