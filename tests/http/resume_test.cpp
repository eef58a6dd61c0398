// Resumable SSE streams of legacy sessions (DIGEST §9 "Resumability via event ids, Last-Event-ID and retry
// polling"; SEP-1699, conformance scenario server-sse-polling): every event of a session stream carries an
// id; a GET with Last-Event-ID resumes the stream that event belongs to (the standalone one or a POST's) from
// a bounded replay buffer, and only that stream; a GET without it delivers only what comes from then on. At
// 2025-11-25 a stream opens with a priming event (an id and empty data) and a `retry` delay, and a handler
// may end its POST stream mid-call (request_context::close_sse_stream) for the client to resume it; older
// versions get neither (their clients choke on empty data), modern requests are never resumable.
#include <duet/server/content.hpp>

#include "http/mcp_http.hpp"
#include "http/servers.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

namespace {

namespace json = boost::json;
using namespace duet;
using namespace duet::test;
using namespace duet::test::http;

constexpr long retry_ms = 250;

// A tool in the manner of the conformance suite's test_reconnection: it ends its SSE stream at once, then
// reports progress and answers while the client is away.
void add_reconnecting_tool(server::server& srv) {
    srv.add_tool(
        server::tool{.name = "reconnect", .description = "Ends its stream, then answers"},
        [](json::object const&, server::request_context& ctx) -> boost::asio::awaitable<server::tool_result> {
            ctx.close_sse_stream();
            boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
            timer.expires_after(std::chrono::milliseconds(20));
            co_await timer.async_wait(boost::asio::use_awaitable);
            ctx.report_progress(1, 1, "still here");
            co_return server::tool_result::text("answered after the stream closed");
        });
}

request_spec get_spec(mcp_http const& c, std::optional<std::string> last_event_id = std::nullopt) {
    if (!last_event_id)
        return stream_spec(c);
    return stream_spec(c, {{"Last-Event-ID", *last_event_id}});
}

// A session that hears notifications/resources/updated for everything under duet://demo/readme.
void subscribe_to_readme(mcp_http& c) {
    auto const r = c.post(legacy_request("sub", "resources/subscribe", {{"uri", "duet://demo/readme"}}));
    ASSERT_EQ(r.status, 200u) << r.body;
}

std::string updated_uri(json::value const& m) {
    if (!is_notification(m, "notifications/resources/updated"))
        return "(not resources/updated: " + json::serialize(m) + ")";
    return std::string(m.at("params").at("uri").as_string());
}

// Item 4 of the issue: replay is for Last-Event-ID only; a fresh GET starts at the present.
TEST(HttpResume, GetWithoutLastEventIdDeliversOnlyNewEvents) {
    inproc_server s;
    mcp_http c(s.ep());
    c.initialize("2025-11-25");
    subscribe_to_readme(c);
    s.srv().notify_resource_updated("duet://demo/readme/before");
    auto get = c.open_spec(get_spec(c));
    ASSERT_EQ(get->status(), 200u);
    s.srv().notify_resource_updated("duet://demo/readme/after");
    EXPECT_EQ(updated_uri(c.next(*get)), "duet://demo/readme/after");
    c.expect_schema_valid();
}

// SEP-1699: at 2025-11-25 a POST answered with SSE opens with a priming event (an id, empty data) carrying
// the retry delay; every message after it has an id too.
TEST(HttpResume, PostStreamOpensWithAPrimingEventAndRetryAt20251125) {
    inproc_server s(polling_options(std::chrono::milliseconds(retry_ms)));
    mcp_http c(s.ep());
    c.initialize("2025-11-25");
    auto call = c.open(
        legacy_request("count", "tools/call", with_progress(call_params("countdown", {{"n", 2}}), "p")));
    ASSERT_EQ(call->status(), 200u);
    ASSERT_EQ(call->header("Content-Type"), "text/event-stream");
    auto const priming = call->next_event();
    ASSERT_TRUE(priming);
    EXPECT_TRUE(priming->priming()) << priming->data;
    EXPECT_FALSE(priming->id.empty());
    EXPECT_EQ(priming->retry, retry_ms);
    std::vector<std::string> ids{priming->id};
    json::value last;
    while (auto e = call->next_event()) {
        EXPECT_FALSE(e->priming());
        EXPECT_FALSE(e->id.empty()) << e->data;
        ids.push_back(e->id);
        last = c.log().record_received(e->data);
    }
    EXPECT_TRUE(is_response_to(last, "count")) << last;
    std::sort(ids.begin(), ids.end());
    EXPECT_EQ(std::unique(ids.begin(), ids.end()), ids.end()) << "event ids repeat";
    c.expect_schema_valid();
}

// The version rule: before 2025-11-25 clients treat empty data as a broken message, so neither POST nor GET
// streams send a priming event; events still carry ids (resumability exists since 2025-03-26).
TEST(HttpResume, OlderSessionsGetEventIdsButNoPrimingEvent) {
    inproc_server s(polling_options(std::chrono::milliseconds(retry_ms)));
    mcp_http c(s.ep());
    c.initialize("2025-06-18");
    auto get = c.open_spec(get_spec(c));
    ASSERT_EQ(get->status(), 200u);
    auto call = c.open(
        legacy_request("count", "tools/call", with_progress(call_params("countdown", {{"n", 2}}), "p")));
    ASSERT_EQ(call->status(), 200u);
    std::size_t events = 0;
    while (auto e = call->next_event()) {
        if (e->priming()) { // a bare retry delay is harmless; an id with empty data is a priming event
            EXPECT_TRUE(e->id.empty()) << "a priming event in a 2025-06-18 session";
            continue;
        }
        EXPECT_FALSE(e->id.empty()) << e->data;
        c.log().record_received(e->data);
        ++events;
    }
    EXPECT_EQ(events, 5u); // two progress notifications, two log messages, then the response

    add_runtime_tool(s.srv(), "late_tool");
    auto first = get->next_event();
    ASSERT_TRUE(first);
    if (first->priming()) {
        EXPECT_TRUE(first->id.empty()) << "a priming event on a 2025-06-18 GET stream";
        first = get->next_event();
        ASSERT_TRUE(first);
    }
    EXPECT_FALSE(first->id.empty());
    c.log().record_received(first->data);
    c.expect_schema_valid();
}

// SEP-1699 / server-sse-polling: the handler ends its POST stream right after the priming event; the client
// resumes with GET and that event's id and receives the rest, the response included; then the stream ends.
TEST(HttpResume, HandlerClosesThePostStreamAndTheClientResumesWithGet) {
    inproc_server s(polling_options(std::chrono::milliseconds(retry_ms)));
    add_reconnecting_tool(s.srv());
    mcp_http c(s.ep());
    c.initialize("2025-11-25");
    auto call = c.open(
        legacy_request("poll", "tools/call", with_progress(call_params("reconnect"), "poll-progress")));
    ASSERT_EQ(call->status(), 200u);
    ASSERT_EQ(call->header("Content-Type"), "text/event-stream");
    EXPECT_TRUE(c.rest(*call).empty()) << "the stream carried messages before it closed";
    EXPECT_TRUE(call->ended());
    ASSERT_FALSE(call->last_event_id().empty());
    EXPECT_EQ(call->retry(), retry_ms);

    auto resumed = c.open_spec(get_spec(c, call->last_event_id()));
    ASSERT_EQ(resumed->status(), 200u) << resumed->finish().body;
    auto const rest = c.rest(*resumed);
    ASSERT_EQ(rest.size(), 2u);
    EXPECT_TRUE(is_notification(rest[0], "notifications/progress")) << rest[0];
    ASSERT_TRUE(is_response_to(rest[1], "poll")) << rest[1];
    EXPECT_EQ(first_text(result_of(rest[1])), "answered after the stream closed");
    EXPECT_TRUE(resumed->ended());

    // Delivered in full, the stream is gone: resuming it again is refused, and the session goes on.
    auto const again = exchange(s.ep(), get_spec(c, call->last_event_id()));
    EXPECT_EQ(again.status, 400u) << again.body;
    EXPECT_EQ(c.post(legacy_request("after", "ping")).status, 200u);
    c.expect_schema_valid();
}

// close_sse_stream() applies to 2025-11-25 sessions only: a modern request and an older session get their
// answer on the POST as usual.
TEST(HttpResume, CloseSseStreamDoesNothingForModernRequestsAndOlderSessions) {
    inproc_server s(polling_options(std::chrono::milliseconds(retry_ms)));
    add_reconnecting_tool(s.srv());
    mcp_http modern(s.ep());
    auto const m = modern.post(modern_request("modern", "tools/call", call_params("reconnect")));
    EXPECT_EQ(m.status, 200u) << m.body;
    auto const answer = m.messages();
    ASSERT_FALSE(answer.empty());
    EXPECT_TRUE(is_response_to(answer.back(), "modern")) << answer.back();
    for (auto const& e : m.events())
        EXPECT_TRUE(e.id.empty()) << "a modern stream is not resumable: " << e.data;

    mcp_http older(s.ep());
    older.initialize("2025-06-18");
    auto const o = older.post(legacy_request("older", "tools/call", call_params("reconnect")));
    EXPECT_EQ(o.status, 200u) << o.body;
    ASSERT_FALSE(o.messages().empty());
    EXPECT_TRUE(is_response_to(o.messages().back(), "older")) << o.body;
    modern.expect_schema_valid();
    older.expect_schema_valid();
}

// A legacy POST stream that breaks is not a cancellation (DIGEST §9): the request runs on, and a GET with the
// last id seen picks the stream up where it broke, while the old connection may still look alive to the
// server.
TEST(HttpResume, BrokenPostStreamResumesFromTheLastEventSeen) {
    inproc_server s(polling_options(std::chrono::milliseconds(retry_ms)));
    mcp_http c(s.ep());
    c.initialize("2025-11-25");
    auto call = c.open(
        legacy_request("long", "tools/call", with_progress(call_params("countdown", {{"n", 5}}), "resume")));
    ASSERT_EQ(call->status(), 200u);
    auto const first = c.next(*call);
    ASSERT_TRUE(is_notification(first, "notifications/progress")) << first;
    auto const seen = call->last_event_id();
    call->close();

    auto resumed = c.open_spec(get_spec(c, seen));
    ASSERT_EQ(resumed->status(), 200u);
    auto const rest = c.rest(*resumed);
    std::vector<double> progress;
    for (auto const& m : rest)
        if (is_notification(m, "notifications/progress"))
            progress.push_back(m.at("params").at("progress").to_number<double>());
    EXPECT_EQ(progress, (std::vector<double>{2, 3, 4, 5}));
    ASSERT_FALSE(rest.empty());
    ASSERT_TRUE(is_response_to(rest.back(), "long")) << rest.back();
    EXPECT_EQ(first_text(result_of(rest.back())), "liftoff after 5 steps");
    c.expect_schema_valid();
}

// Resumption replays only the stream the id names: a POST stream's messages never show up on the standalone
// stream, nor the reverse (the spec forbids replaying another stream's messages).
TEST(HttpResume, ResumptionNeverReplaysAnotherStreamsMessages) {
    inproc_server s(polling_options(std::chrono::milliseconds(retry_ms)));
    mcp_http c(s.ep());
    c.initialize("2025-11-25");
    subscribe_to_readme(c);
    auto get = c.open_spec(get_spec(c));
    ASSERT_EQ(get->status(), 200u);
    ASSERT_TRUE(get->next_event()); // the priming event: the standalone stream's position
    auto const standalone_start = get->last_event_id();
    get->close();

    auto const call = c.post(
        legacy_request("count", "tools/call", with_progress(call_params("countdown", {{"n", 2}}), "p")));
    ASSERT_EQ(call.status, 200u);
    s.srv().notify_resource_updated("duet://demo/readme/news");

    auto resumed = c.open_spec(get_spec(c, standalone_start));
    ASSERT_EQ(resumed->status(), 200u);
    auto const news = c.next(*resumed);
    EXPECT_EQ(updated_uri(news), "duet://demo/readme/news");
    resumed->close();
    c.expect_schema_valid();
}

// Last-Event-ID that names nothing this session can resume (malformed, another stream number, an event not
// sent yet) is refused with 400, and the session goes on.
TEST(HttpResume, LastEventIdNamingNoResumableStreamIs400) {
    inproc_server s;
    mcp_http c(s.ep());
    c.initialize("2025-11-25");
    for (std::string const id : {"garbage", "7", "-1", "99-0", "0-999", "0-1x"}) {
        auto const r = exchange(s.ep(), get_spec(c, id));
        EXPECT_EQ(r.status, 400u) << id << ": " << r.body;
        EXPECT_EQ(code_of(r.json()), -32600) << id;
    }
    EXPECT_EQ(c.post(legacy_request(1, "ping")).status, 200u);
    c.expect_schema_valid();
}

// The replay buffer is bounded (http_options::replay_events), which bounds what a session holds for a client
// that is away. A resumption within it replays what was missed; one after more than that many events is
// refused in words (issue 27: never a silent gap), and the session serves on.
TEST(HttpResume, ResumingWithinTheReplayBufferReplaysWhatWasMissed) {
    transport::http_options o;
    o.replay_events = 3;
    inproc_server s(o);
    mcp_http c(s.ep());
    c.initialize("2025-11-25");
    subscribe_to_readme(c);
    auto get = c.open_spec(get_spec(c));
    ASSERT_TRUE(get->next_event());
    auto const start = get->last_event_id();
    get->close();
    for (int i = 1; i <= 3; ++i)
        s.srv().notify_resource_updated("duet://demo/readme/" + std::to_string(i));
    // Announcements reach the session on its own strand, after this thread returns; a request answered on
    // that strand comes after all three.
    ASSERT_EQ(c.post(legacy_request(99, "ping")).status, 200u);

    auto resumed = c.open_spec(get_spec(c, start));
    ASSERT_EQ(resumed->status(), 200u);
    for (int i = 1; i <= 3; ++i)
        EXPECT_EQ(updated_uri(c.next(*resumed)), "duet://demo/readme/" + std::to_string(i));
    resumed->close();
    c.expect_schema_valid();
}

TEST(HttpResume, ResumingPastTheReplayBufferIsRefusedSayingHowManyEventsWereLost) {
    transport::http_options o;
    o.replay_events = 3;
    inproc_server s(o);
    mcp_http c(s.ep());
    c.initialize("2025-11-25");
    subscribe_to_readme(c);
    auto get = c.open_spec(get_spec(c));
    ASSERT_TRUE(get->next_event());
    auto const start = get->last_event_id();
    get->close();
    for (int i = 1; i <= 5; ++i)
        s.srv().notify_resource_updated("duet://demo/readme/" + std::to_string(i));
    ASSERT_EQ(c.post(legacy_request(99, "ping")).status, 200u);

    auto const refused = exchange(s.ep(), get_spec(c, start));
    EXPECT_EQ(refused.status, 400u) << refused.body;
    EXPECT_EQ(code_of(refused.json()), -32600);
    EXPECT_NE(refused.body.find("2 events after this Last-Event-ID are no longer kept"), std::string::npos)
        << refused.body;
    EXPECT_EQ(c.post(legacy_request(100, "ping")).status, 200u);
    c.expect_schema_valid();
}

// A reader slower than its events (it reads nothing while the server's socket buffers fill, and the events
// come faster than they are written): once events it was never sent leave the replay buffer, its stream ends
// instead of skipping them, and every event it did get (maybe none) follows the one before. Resuming from the
// last one is then refused as above.
TEST(HttpResume, AStreamWhoseReaderFellBehindTheReplayBufferEndsWithoutAGap) {
    transport::http_options o;
    o.replay_events = 3;
    inproc_server s(o);
    mcp_http c(s.ep());
    c.initialize("2025-11-25");
    subscribe_to_readme(c);
    auto get = c.open_spec(get_spec(c));
    ASSERT_TRUE(get->next_event());
    // About 8 MiB, more than the loopback socket buffers of both sides hold while nobody reads.
    std::string const padding(4096, 'x');
    constexpr int published = 2000;
    for (int i = 1; i <= published; ++i)
        s.srv().notify_resource_updated("duet://demo/readme/" + std::to_string(i) + "/" + padding);
    ASSERT_EQ(c.post(legacy_request(99, "ping")).status, 200u);

    auto seq_of = [](std::string const& id) {
        return std::stoull(id.substr(id.find('-') + 1));
    };
    auto previous = seq_of(get->last_event_id());
    int received = 0;
    while (auto e = get->next()) {
        auto const seq = seq_of(get->last_event_id());
        ASSERT_EQ(seq, previous + 1) << "a gap after event " << previous;
        previous = seq;
        ++received;
    }
    EXPECT_TRUE(get->ended()) << "the stream should have ended";
    EXPECT_LT(received, published) << "the reader never fell behind: the test sent too little";

    auto const refused = exchange(s.ep(), get_spec(c, get->last_event_id()));
    EXPECT_EQ(refused.status, 400u) << refused.body;
    EXPECT_NE(refused.body.find("no longer kept"), std::string::npos) << refused.body;
}

} // namespace
