// A legacy session's request whose answer is ready at once (connection::answer_now on the session's strand,
// entered from the socket's thread when it is free) is answered with plain JSON, with no stream and no watch
// on the peer; what its handler writes before that answer still reaches the client on the POST's resumable
// stream, in order and before the answer, and a handler that ends its stream at once is resumed as any other
// (DIGEST §9 "Resumability"). Many sockets sharing one session get each their own answer, with two I/O
// threads (strands) and with one (none).
#include "http/mcp_http.hpp"
#include "http/servers.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"

#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace json = boost::json;
using namespace duet;
using namespace duet::test;
using namespace duet::test::http;

// Plain functions run inline on the I/O thread: the answer is ready when answer_now returns.
void add_immediate_tools(server::server& srv) {
    srv.add_tool(server::tool{.name = "chatty",
                              .description = "Reports progress and logs, then answers",
                              .run_plain = server::plain_run::inline_on_io},
                 [](json::object const&, server::request_context& ctx) {
                     ctx.report_progress(1, 2, "half way");
                     ctx.log(protocol::log_level::warning, json::string("chatty says so"), "chatty");
                     return server::tool_result::text("said it all");
                 });
    srv.add_tool(server::tool{.name = "closes",
                              .description = "Ends its stream, then answers at once",
                              .run_plain = server::plain_run::inline_on_io},
                 [](json::object const&, server::request_context& ctx) {
                     ctx.close_sse_stream();
                     return server::tool_result::text("answered on the resumed stream");
                 });
}

TEST(HttpSessionDirect, AnAnswerReadyAtOnceIsPlainJson) {
    inproc_server s;
    mcp_http c(s.ep());
    c.initialize("2025-11-25");
    auto const r = c.post(legacy_request(1, "tools/call", call_params("echo", {{"text", "at once"}})));
    ASSERT_EQ(r.status, 200u) << r.body;
    EXPECT_EQ(r.header("Content-Type"), "application/json");
    EXPECT_EQ(first_text(result_of(r.json())), "at once");
    c.expect_schema_valid();
}

TEST(HttpSessionDirect, WhatAnImmediateHandlerWritesComesFirstOnTheStream) {
    inproc_server s;
    add_immediate_tools(s.srv());
    mcp_http c(s.ep());
    c.initialize("2025-11-25");
    ASSERT_EQ(c.post(legacy_request("lvl", "logging/setLevel", {{"level", "info"}})).status, 200u);
    auto const r = c.post(legacy_request("chat", "tools/call", with_progress(call_params("chatty"), "p1")));
    ASSERT_EQ(r.status, 200u) << r.body;
    ASSERT_TRUE(r.is_sse()) << r.body;
    auto const messages = r.messages();
    ASSERT_EQ(messages.size(), 3u) << r.body;
    EXPECT_TRUE(is_notification(messages[0], "notifications/progress")) << messages[0];
    EXPECT_TRUE(is_notification(messages[1], "notifications/message")) << messages[1];
    ASSERT_TRUE(is_response_to(messages[2], "chat")) << messages[2];
    EXPECT_EQ(first_text(result_of(messages[2])), "said it all");
    for (auto const& e : r.events())
        EXPECT_FALSE(e.id.empty()) << "a session's stream is resumable: every event has an id: " << e.data;
    c.expect_schema_valid();
}

// Below the session's log level nothing is written: the same handler's answer is then plain JSON.
TEST(HttpSessionDirect, AnImmediateHandlerWhoseMessagesAreFilteredAnswersWithJson) {
    inproc_server s;
    add_immediate_tools(s.srv());
    mcp_http c(s.ep());
    c.initialize("2025-11-25");
    ASSERT_EQ(c.post(legacy_request("lvl", "logging/setLevel", {{"level", "error"}})).status, 200u);
    auto const r = c.post(legacy_request("quiet", "tools/call", call_params("chatty")));
    ASSERT_EQ(r.status, 200u) << r.body;
    EXPECT_EQ(r.header("Content-Type"), "application/json") << r.body;
    EXPECT_EQ(first_text(result_of(r.json())), "said it all");
    c.expect_schema_valid();
}

// SEP-1699: a handler that ends its stream and answers at once. The POST carries the priming event only; the
// answer waits in the stream for the client's GET with that event's id.
TEST(HttpSessionDirect, AnImmediateHandlerThatEndsItsStreamIsResumedWithGet) {
    inproc_server s(polling_options(std::chrono::milliseconds(100)));
    add_immediate_tools(s.srv());
    mcp_http c(s.ep());
    c.initialize("2025-11-25");
    auto call = c.open(legacy_request("poll", "tools/call", call_params("closes")));
    ASSERT_EQ(call->status(), 200u);
    ASSERT_EQ(call->header("Content-Type"), "text/event-stream");
    EXPECT_TRUE(c.rest(*call).empty()) << "the stream carried messages before it closed";
    EXPECT_TRUE(call->ended());
    ASSERT_FALSE(call->last_event_id().empty());

    auto resumed = c.open_spec(stream_spec(c, {{"Last-Event-ID", call->last_event_id()}}));
    ASSERT_EQ(resumed->status(), 200u) << resumed->finish().body;
    auto const rest = c.rest(*resumed);
    ASSERT_EQ(rest.size(), 1u);
    ASSERT_TRUE(is_response_to(rest[0], "poll")) << rest[0];
    EXPECT_EQ(first_text(result_of(rest[0])), "answered on the resumed stream");
    c.expect_schema_valid();
}

// `sockets` threads, each sending `per_socket` calls in a row on connections of their own (the body from
// `call(socket, i, id)`); how many were answered with their own id and the text sent, the call's id.
int own_answers(inproc_server& s, mcp_http const& opener, int sockets, int per_socket,
                std::function<json::object(int, int, std::string const&)> const& call) {
    std::atomic<int> good{0};
    std::vector<std::thread> clients;
    for (int k = 0; k < sockets; ++k)
        clients.emplace_back([&, k] {
            for (int i = 0; i < per_socket; ++i) {
                auto const id = "s" + std::to_string(k) + "-" + std::to_string(i);
                auto const r = exchange(s.ep(), opener.spec_for(call(k, i, id)));
                if (r.status != 200u || r.messages().size() != 1)
                    continue;
                auto const m = r.messages().front();
                if (is_response_to(m, json::string(id)) && first_text(result_of(m)) == id)
                    ++good;
            }
        });
    for (auto& t : clients)
        t.join();
    return good.load();
}

// Sockets sharing one session, each with requests in a row: every answer is its own request's, whichever
// socket's thread served it (requests of one session may run concurrently; its state stays whole).
TEST(HttpSessionDirect, ManySocketsOfOneSessionEachGetTheirOwnAnswers) {
    transport::http_options options;
    options.io_threads = 2;
    inproc_server s(options);
    mcp_http opener(s.ep());
    opener.initialize("2025-11-25");
    auto const good = own_answers(s, opener, 4, 25, [](int, int, std::string const& id) {
        return legacy_request(json::string(id), "tools/call", call_params("echo", {{"text", id}}));
    });
    EXPECT_EQ(good, 4 * 25);
    EXPECT_EQ(opener.post(legacy_request("after", "ping")).status, 200u);
}

// One I/O thread runs the server without strands (http_options::io_threads = 1): sockets of one session, a
// tool that runs on the blocking pool and comes back to the I/O thread, and stateless modern requests, all at
// once, each get their own answer, and the session is whole afterwards.
TEST(HttpSessionDirect, OneIoThreadServesSessionsPoolToolsAndModernRequestsAtOnce) {
    transport::http_options options;
    options.io_threads = 1;
    inproc_server s(options);
    // A plain function on the blocking pool (the default): its answer crosses back to the I/O thread.
    s.srv().add_tool(server::tool{.name = "pooled", .description = "Echoes on the blocking pool"},
                     [](json::object const& args, server::request_context&) {
                         return server::tool_result::text(args.at("text").as_string());
                     });
    mcp_http opener(s.ep());
    opener.initialize("2025-11-25");
    auto const good = own_answers(s, opener, 6, 20, [](int k, int i, std::string const& id) {
        auto const params = call_params(i % 2 == 0 ? "echo" : "pooled", {{"text", id}});
        return k % 3 == 0 ? modern_request(json::string(id), "tools/call", params)
                          : legacy_request(json::string(id), "tools/call", params);
    });
    EXPECT_EQ(good, 6 * 20);
    EXPECT_EQ(opener.post(legacy_request("after", "ping")).status, 200u);
}

} // namespace
