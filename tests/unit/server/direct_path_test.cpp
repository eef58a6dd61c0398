// The direct path (server::answer_now, tool::direct): a request whose handler completes without suspending is
// answered with no coroutine at all, a plain function marked plain_run::inline_on_io included. It must be
// indistinguishable on the wire from the coroutine path: the same bytes in the same order, notifications
// before the answer, errors and cancellation handled the same.
#include <duet/jsonrpc/codec.hpp>
#include <duet/protocol/shaping.hpp>
#include <duet/server/connection.hpp>
#include <duet/server/protocol_error.hpp>
#include <duet/server/server.hpp>

#include "stdio/messages.hpp"
#include "unit/server/test_server.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace json = boost::json;
using namespace duet::test;
using duet::server::plain_run;
using duet::server::request_context;
using duet::server::server;
using duet::server::tool;
using duet::server::tool_result;

// What each `echo` does, whichever way it is registered: progress, a log line, then the text.
tool_result echo_body(json::object const& args, request_context& ctx) {
    ctx.report_progress(1, 2, "half");
    ctx.log(duet::protocol::log_level::info, json::string("echoing"));
    return tool_result::text(args.at("text").as_string());
}

tool_result needs_sampling_body(json::object const&, request_context& ctx) {
    ctx.require(duet::protocol::client_capability::sampling);
    return tool_result::text("unreachable");
}

tool_result refuses_body(json::object const&, request_context&) {
    throw duet::server::protocol_error(duet::protocol::invalid_params("Invalid params: no thanks"));
}

tool_result throws_body(json::object const&, request_context&) {
    throw std::runtime_error(secret_detail);
}

tool echo_definition(plain_run where) {
    return tool{.name = "echo",
                .input_schema = {{"type", "object"},
                                 {"properties", {{"text", {{"type", "string"}}}}},
                                 {"required", {"text"}}},
                .run_plain = where};
}

// The same four tools as plain functions run inline (the direct path) or as coroutines (the coroutine path).
void add_tools(server& srv, bool direct) {
    using body = tool_result (*)(json::object const&, request_context&);
    auto add = [&](tool t, body f) {
        if (direct) {
            t.run_plain = plain_run::inline_on_io;
            srv.add_tool(std::move(t), f);
        } else {
            srv.add_tool(
                std::move(t),
                [f](json::object const& args, request_context& ctx) -> boost::asio::awaitable<tool_result> {
                    co_return f(args, ctx);
                });
        }
    };
    add(echo_definition(plain_run::inline_on_io), echo_body);
    add(tool{.name = "needs_sampling"}, needs_sampling_body);
    add(tool{.name = "refuses"}, refuses_body);
    add(tool{.name = "throws"}, throws_body);
}

// Feeds `frames` to one connection in order and returns every line it wrote, after `expected` lines.
std::vector<std::string> transcript_of(server& srv, std::vector<json::object> const& frames,
                                       std::size_t expected) {
    boost::asio::io_context io;
    std::vector<std::string> lines;
    auto conn = duet::server::connection::create(srv, io.get_executor(),
                                                 [&](std::string line) { lines.push_back(std::move(line)); });
    for (auto const& f : frames)
        conn->receive(json::serialize(f));
    auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (lines.size() < expected && std::chrono::steady_clock::now() < deadline)
        io.run_for(std::chrono::milliseconds(10));
    conn->finish([] {});
    io.run_for(std::chrono::milliseconds(50));
    return lines;
}

std::vector<json::object> every_kind_of_call() {
    json::object progress_meta{{"progressToken", "p1"}};
    json::object legacy_echo = call_params("echo", {{"text", "hi"}});
    legacy_echo["_meta"] = progress_meta;
    json::object modern_echo = call_params("echo", {{"text", "hi"}});
    modern_echo["_meta"] = modern_meta({}, {{"progressToken", "p2"}, {key_log_level, "debug"}});
    return {
        initialize_request(1, "2025-11-25"),
        initialized_notification(),
        legacy_request(2, "tools/call", legacy_echo),
        modern_request(3, "tools/call", modern_echo),
        legacy_request(4, "tools/call", call_params("needs_sampling")),
        modern_request(5, "tools/call", call_params("needs_sampling")),
        legacy_request(6, "tools/call", call_params("refuses")),
        modern_request(7, "tools/call", call_params("throws")),
        modern_request(8, "tools/call", call_params("nope")),
        modern_request(9, "tools/call", call_params("echo", {{"text", 42}})),
        legacy_request(10, "tools/list"),
        modern_request(11, "server/discover"),
        modern_request(12, "tools/call", call_params("echo", {{"text", "last"}})),
    };
}

TEST(DirectPath, InlineAndCoroutineHandlersAnswerTheSameBytes) {
    server inline_srv(test_options());
    add_tools(inline_srv, true);
    server coroutine_srv(test_options());
    add_tools(coroutine_srv, false);
    auto const frames = every_kind_of_call();
    // initialize, then: 2 progress + log + answer, 3 progress + log + answer, and 4..12 one answer each.
    std::size_t const expected = 1 + 3 + 3 + 9;
    auto const direct = transcript_of(inline_srv, frames, expected);
    auto const coroutine = transcript_of(coroutine_srv, frames, expected);
    ASSERT_EQ(direct.size(), expected);
    EXPECT_EQ(direct, coroutine);
    // The notifications precede their request's answer, and nothing leaks the exception's text.
    EXPECT_NE(direct[1].find("notifications/progress"), std::string::npos) << direct[1];
    EXPECT_NE(direct[2].find("notifications/message"), std::string::npos) << direct[2];
    EXPECT_NE(direct[3].find("\"id\":2"), std::string::npos) << direct[3];
    for (auto const& line : direct)
        EXPECT_EQ(line.find(secret_detail), std::string::npos) << line;
}

// A modern result's serverInfo is appended from the server's pre-serialized copy
// (jsonrpc::response::result_tail) rather than copied into each result: the bytes are those of the result
// shaped with the copy.
TEST(DirectPath, ModernServerInfoIsTheBytesOfTheCopy) {
    server srv(test_options());
    add_tools(srv, true);
    auto const lines = transcript_of(srv,
                                     {modern_request(1, "tools/call", call_params("echo", {{"text", "hi"}})),
                                      modern_request(2, "tools/list")},
                                     2);
    ASSERT_EQ(lines.size(), 2u);
    auto const expected = [&](int id, std::string_view answer, duet::protocol::method_id m) {
        auto result = json::parse(answer).as_object();
        duet::protocol::cache_hints hints;
        if (auto const* ttl = result.if_contains("ttlMs"))
            hints.ttl_ms = ttl->to_number<std::int64_t>();
        if (auto const* scope = result.if_contains("cacheScope"); scope && *scope == "public")
            hints.scope = duet::protocol::cache_scope::public_cache;
        result.erase("resultType");
        result.erase("ttlMs");
        result.erase("cacheScope");
        result.erase("_meta");
        duet::protocol::shape_result(result, {.era = duet::protocol::era::modern,
                                              .version = duet::protocol::version::v2026_07_28,
                                              .method = m,
                                              .hints = hints,
                                              .server_info = &srv.server_info()});
        return duet::jsonrpc::serialize(
            duet::jsonrpc::response{duet::jsonrpc::request_id{id}, std::move(result)});
    };
    auto const result_text = [](std::string const& line) {
        return json::serialize(json::parse(line).at("result"));
    };
    EXPECT_EQ(lines[0], expected(1, result_text(lines[0]), duet::protocol::method_id::tools_call));
    EXPECT_EQ(lines[1], expected(2, result_text(lines[1]), duet::protocol::method_id::tools_list));
    EXPECT_NE(lines[0].find(R"("_meta":{"io.modelcontextprotocol/serverInfo":{"name":"duet-demo")"),
              std::string::npos)
        << lines[0];
}

// A modern handler that cannot go on without a capability fails with -32021 on the direct path too, and the
// direct path leaves nothing behind: the same id may be used again at once.
TEST(DirectPath, InlineHandlerErrorsLeaveNoRequestInFlight) {
    server srv(test_options());
    add_tools(srv, true);
    auto const lines =
        transcript_of(srv,
                      {modern_request(1, "tools/call", call_params("needs_sampling")),
                       modern_request(1, "tools/call", call_params("echo", {{"text", "again"}}))},
                      2);
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_NE(lines[0].find("-32021"), std::string::npos) << lines[0];
    EXPECT_NE(lines[1].find("again"), std::string::npos) << lines[1];
}

// A handler that suspends still holds its id while it runs: a second request with that id is refused, and a
// cancellation silences it.
TEST(DirectPath, SuspendedHandlerHoldsItsIdUntilItEnds) {
    server srv(test_options());
    add_test_features(srv); // until_cancelled: progress once, then waits for its cancellation
    auto const lines = transcript_of(
        srv,
        {initialize_request(1, "2025-11-25"), initialized_notification(),
         legacy_request(2, "tools/call", {{"name", "until_cancelled"}, {"_meta", {{"progressToken", "t"}}}}),
         legacy_request(2, "tools/list"), cancelled_notification(2), legacy_request(3, "tools/list")},
        4);
    ASSERT_GE(lines.size(), 4u);
    std::string const all = [&] {
        std::string s;
        for (auto const& l : lines)
            s += l + "\n";
        return s;
    }();
    EXPECT_NE(all.find("already in flight"), std::string::npos) << all;
    EXPECT_NE(all.find("\"id\":3"), std::string::npos) << all;
    // The cancelled call never answers: its id appears only in the refusal of the duplicate.
    std::size_t answers_to_2 = 0;
    for (auto const& l : lines)
        if (l.find("\"id\":2") != std::string::npos)
            ++answers_to_2;
    EXPECT_EQ(answers_to_2, 1u) << all;
}

// answer_now (HTTP's one-request connections): on a serial connection called from its executor, an answer
// ready at once comes back there and then (`later` is not called), byte for byte what a coroutine handler's
// answer is when it reaches `later`.
TEST(DirectPath, AnswerNowReturnsAnAnswerReadyAtOnce) {
    server inline_srv(test_options());
    add_tools(inline_srv, true);
    server coroutine_srv(test_options());
    add_tools(coroutine_srv, false);
    boost::asio::io_context io;
    auto serial = boost::asio::make_strand(io);
    auto const options = duet::server::connection_options::modern_requests();
    std::vector<std::string> answers;
    for (server* srv : {&inline_srv, &coroutine_srv}) {
        auto conn = duet::server::connection::create(
            *srv, serial, [](std::string) {}, options);
        boost::asio::post(serial, [&, conn] {
            json::value const message =
                modern_request(1, "tools/call", call_params("echo", {{"text", "now"}}));
            auto r = duet::jsonrpc::parse_message(message);
            ASSERT_TRUE(r);
            auto request = std::get<duet::jsonrpc::request>(std::move(*r));
            bool const direct = srv == &inline_srv;
            auto now = conn->answer_now(srv->admit(std::move(request), {}, nullptr), nullptr, nullptr,
                                        [&, direct](duet::server::connection::answer h) {
                                            EXPECT_FALSE(direct) << "an answer ready at once went to later";
                                            ASSERT_TRUE(h.message.has_value());
                                            answers.push_back(duet::jsonrpc::serialize(*h.message));
                                        });
            EXPECT_EQ(now.has_value(), direct); // a coroutine handler goes on in the connection
            if (now) {
                ASSERT_TRUE(now->message.has_value());
                EXPECT_EQ(now->http_status, 200u);
                answers.push_back(duet::jsonrpc::serialize(*now->message));
            }
        });
        io.run_for(std::chrono::seconds(5));
        io.restart();
    }
    ASSERT_EQ(answers.size(), 2u);
    EXPECT_EQ(answers[0], answers[1]);
    EXPECT_NE(answers[0].find("\"now\""), std::string::npos) << answers[0];
}

// A handler that waits: answer_now returns nothing, and `later` gets the answer on the connection's executor.
// The request's data (its arguments, read by the handler after it waited) outlives the call that started it.
TEST(DirectPath, AnswerNowHandsAWaitingHandlersAnswerToLater) {
    server srv(test_options());
    srv.add_tool(tool{.name = "waits",
                      .input_schema = {{"type", "object"}, {"properties", {{"text", {{"type", "string"}}}}}}},
                 [](json::object const& args, request_context&) -> boost::asio::awaitable<tool_result> {
                     boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
                     timer.expires_after(std::chrono::milliseconds(5));
                     co_await timer.async_wait(boost::asio::use_awaitable);
                     co_return tool_result::text(args.at("text").as_string());
                 });
    boost::asio::io_context io;
    for (bool serial : {true, false}) {
        auto ex = boost::asio::make_strand(io);
        duet::server::connection_options options;
        options.executor_is_serial = serial;
        auto conn = duet::server::connection::create(
            srv, ex, [](std::string) {}, options);
        std::optional<duet::server::connection::answer> got;
        boost::asio::post(ex, [&, conn] {
            json::value const message =
                modern_request(7, "tools/call", call_params("waits", {{"text", "waited for this"}}));
            auto r = duet::jsonrpc::parse_message(message);
            ASSERT_TRUE(r);
            auto request = std::get<duet::jsonrpc::request>(std::move(*r));
            auto now = conn->answer_now(srv.admit(std::move(request), {}, nullptr), nullptr, nullptr,
                                        [&](duet::server::connection::answer h) { got = std::move(h); });
            EXPECT_FALSE(now.has_value());
        });
        auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!got && std::chrono::steady_clock::now() < deadline)
            io.run_for(std::chrono::milliseconds(10));
        io.restart();
        ASSERT_TRUE(got.has_value()) << "serial " << serial;
        ASSERT_TRUE(got->message.has_value());
        auto const text = duet::jsonrpc::serialize(*got->message);
        EXPECT_NE(text.find("waited for this"), std::string::npos) << text;
        EXPECT_NE(text.find("\"id\":7"), std::string::npos) << text;
    }
}

// answer_now on a connection with a strand of its own (a legacy HTTP session, whose requests come on many
// sockets): called from another strand of its io_context while the connection's strand is free, the request
// is served there and then, and the answer comes back at once (`later` is not called).
TEST(DirectPath, AnswerNowEntersAFreeStrandOfTheConnectionsOwn) {
    server srv(test_options());
    add_tools(srv, true);
    boost::asio::io_context io;
    auto conn = duet::server::connection::create(srv, io.get_executor(), [](std::string) {});
    auto socket_strand = boost::asio::make_strand(io);
    std::optional<duet::server::connection::answer> now;
    bool later_called = false;
    boost::asio::post(socket_strand, [&, conn] {
        json::value const message =
            modern_request(1, "tools/call", call_params("echo", {{"text", "inline"}}));
        auto r = duet::jsonrpc::parse_message(message);
        ASSERT_TRUE(r);
        auto request = std::get<duet::jsonrpc::request>(std::move(*r));
        now = conn->answer_now(srv.admit(std::move(request), {}, nullptr), nullptr, nullptr,
                               [&](duet::server::connection::answer) { later_called = true; });
    });
    io.run_for(std::chrono::seconds(5));
    ASSERT_TRUE(now.has_value());
    EXPECT_FALSE(later_called);
    ASSERT_TRUE(now->message.has_value());
    auto const text = duet::jsonrpc::serialize(*now->message);
    EXPECT_NE(text.find("\"inline\""), std::string::npos) << text;
}

// When the connection's strand has work waiting, the request waits behind it (a session's messages keep their
// order): answer_now returns nothing and `later` gets the answer, after the earlier message was handled.
TEST(DirectPath, AnswerNowWaitsBehindWorkQueuedOnTheConnection) {
    server srv(test_options());
    add_tools(srv, true);
    boost::asio::io_context io;
    std::vector<std::string> order;
    auto conn = duet::server::connection::create(
        srv, io.get_executor(), [&](std::string line) { order.push_back("written " + line); });
    auto socket_strand = boost::asio::make_strand(io);
    std::optional<duet::server::connection::answer> now;
    boost::asio::post(socket_strand, [&, conn] {
        conn->receive(json::serialize(legacy_request("first", "ping")));
        json::value const message =
            modern_request(2, "tools/call", call_params("echo", {{"text", "second"}}));
        auto r = duet::jsonrpc::parse_message(message);
        ASSERT_TRUE(r);
        auto request = std::get<duet::jsonrpc::request>(std::move(*r));
        now = conn->answer_now(srv.admit(std::move(request), {}, nullptr), nullptr, nullptr,
                               [&](duet::server::connection::answer h) {
                                   ASSERT_TRUE(h.message.has_value());
                                   order.push_back("later " + duet::jsonrpc::serialize(*h.message));
                               });
    });
    io.run_for(std::chrono::seconds(5));
    EXPECT_FALSE(now.has_value());
    ASSERT_EQ(order.size(), 2u);
    EXPECT_TRUE(order[0].starts_with("written ") && order[0].find("\"first\"") != std::string::npos)
        << order[0];
    EXPECT_TRUE(order[1].starts_with("later ") && order[1].find("\"second\"") != std::string::npos)
        << order[1];
}

} // namespace
