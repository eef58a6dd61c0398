// The route step's seam (server::admit, connection::answer_now): a transport that routes requests itself
// admits each one once, by the session it routed it to, and the connection carries that verdict out without
// admitting the request again (ERA-POLICY "Admission of one request"; README, "One HTTP POST"). And the
// kinds of connection such a transport makes (connection_options' presets).
#include <duet/jsonrpc/codec.hpp>
#include <duet/protocol/errors.hpp>
#include <duet/server/connection.hpp>
#include <duet/server/server.hpp>

#include "stdio/messages.hpp"
#include "unit/server/test_server.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace {

namespace json = boost::json;
using namespace duet::test;
using duet::server::connection;
using duet::server::request_context;
using duet::server::server;
using duet::server::tool_result;

duet::jsonrpc::request parsed(json::object const& message) {
    auto r = duet::jsonrpc::parse_message(message);
    EXPECT_TRUE(r);
    return std::get<duet::jsonrpc::request>(std::move(*r));
}

// A server whose `count` tool counts the times its handler ran.
struct counting_server {
    std::shared_ptr<std::atomic<int>> runs = std::make_shared<std::atomic<int>>(0);
    server srv{test_options()};
    counting_server() {
        auto t = plain_tool("count");
        t.run_plain = duet::server::plain_run::inline_on_io; // answered at once, on the caller's strand
        srv.add_tool(std::move(t), [runs = runs](json::object const&, request_context&) {
            ++*runs;
            return tool_result::text("counted");
        });
    }
};

// Answers one admitted request on a connection that runs on the caller's strand, as HTTP's modern slot does.
std::optional<connection::answer> answer_on_serial_connection(server& srv,
                                                              duet::server::admitted_request ad) {
    boost::asio::io_context io;
    auto serial = boost::asio::make_strand(io);
    auto conn = connection::create(
        srv, serial, [](std::string) {}, duet::server::connection_options::modern_requests());
    std::optional<connection::answer> got;
    boost::asio::post(serial, [&] {
        auto now = conn->answer_now(std::move(ad), nullptr, nullptr, [&](connection::answer h) { got = h; });
        if (now)
            got = std::move(now);
    });
    io.run_for(std::chrono::seconds(5));
    return got;
}

TEST(AdmittedRequest, ServerAdmitReadsTheSessionTheTransportNames) {
    counting_server s; // it offers tools
    auto& srv = s.srv;
    auto const request = legacy_request(1, "tools/list");

    auto outside = srv.admit(parsed(request), {}, nullptr);
    ASSERT_FALSE(outside.verdict) << "a legacy request outside any session is refused";
    EXPECT_EQ(outside.verdict.error().error, duet::protocol::missing_protocol_version(true, true));

    auto inside = srv.admit(parsed(request), {.legacy = duet::protocol::version::v2025_06_18}, nullptr);
    ASSERT_TRUE(inside.verdict);
    EXPECT_EQ(inside.verdict->era, duet::protocol::era::legacy);
    EXPECT_EQ(inside.verdict->version, duet::protocol::version::v2025_06_18);
    EXPECT_EQ(inside.request.method, "tools/list") << "the request travels with its verdict";
    ASSERT_TRUE(inside.capabilities);
}

TEST(AdmittedRequest, ModernRequestIsAdmittedWhateverSessionIsNamed) {
    counting_server s;
    auto& srv = s.srv;
    auto const request = modern_request(1, "tools/list");
    auto a = srv.admit(parsed(request), {.legacy = duet::protocol::version::v2025_06_18}, nullptr);
    ASSERT_TRUE(a.verdict);
    EXPECT_EQ(a.verdict->era, duet::protocol::era::modern);
}

// The capabilities a request was admitted by stay with it: a tool registered afterwards does not change the
// snapshot it is served by.
TEST(AdmittedRequest, KeepsTheCapabilitiesItWasAdmittedBy) {
    server srv(test_options());
    auto a = srv.admit(parsed(modern_request(1, "tools/list")), {}, nullptr);
    ASSERT_TRUE(a.capabilities);
    EXPECT_FALSE(a.capabilities->tools);
    srv.add_tool(plain_tool("later"),
                 [](json::object const&, request_context&) { return tool_result::text(""); });
    EXPECT_FALSE(a.capabilities->tools);
    EXPECT_TRUE(srv.capabilities()->tools);
}

TEST(AdmittedRequest, ConnectionCarriesOutARefusalWithoutRunningTheHandler) {
    counting_server s;
    auto ad = s.srv.admit(parsed(legacy_request(3, "tools/call", {{"name", "count"}})), {}, nullptr);
    ASSERT_FALSE(ad.verdict);
    auto const status = ad.verdict.error().http_status;
    auto got = answer_on_serial_connection(s.srv, std::move(ad));
    ASSERT_TRUE(got && got->message);
    auto const* e = std::get_if<duet::jsonrpc::error_response>(&*got->message);
    ASSERT_NE(e, nullptr) << duet::jsonrpc::serialize(*got->message);
    EXPECT_EQ(e->error, duet::protocol::missing_protocol_version(true, true));
    EXPECT_EQ(got->http_status, status);
    EXPECT_EQ(*s.runs, 0);
}

TEST(AdmittedRequest, ConnectionServesTheVerdictItIsGiven) {
    counting_server s;
    auto ad = s.srv.admit(
        parsed(modern_request(4, "tools/call", {{"name", "count"}, {"arguments", json::object{}}})), {},
        nullptr);
    ASSERT_TRUE(ad.verdict);
    auto got = answer_on_serial_connection(s.srv, std::move(ad));
    ASSERT_TRUE(got && got->message);
    auto const text = duet::jsonrpc::serialize(*got->message);
    EXPECT_NE(text.find("counted"), std::string::npos) << text;
    EXPECT_EQ(got->http_status, 200u);
    EXPECT_EQ(*s.runs, 1);
}

// A transport that names a legacy session the connection does not carry made a mistake: the request is
// refused with an internal error, never served outside the session (nor a crash).
TEST(AdmittedRequest, VerdictForASessionTheConnectionDoesNotCarryIsRefused) {
    counting_server s;
    auto ad = s.srv.admit(parsed(legacy_request(5, "tools/call", {{"name", "count"}})),
                          {.legacy = duet::protocol::version::v2025_06_18}, nullptr);
    ASSERT_TRUE(ad.verdict);
    auto got = answer_on_serial_connection(s.srv, std::move(ad));
    ASSERT_TRUE(got && got->message);
    auto const* e = std::get_if<duet::jsonrpc::error_response>(&*got->message);
    ASSERT_NE(e, nullptr) << duet::jsonrpc::serialize(*got->message);
    EXPECT_EQ(e->error.code, static_cast<int>(duet::protocol::errc::internal_error));
    EXPECT_EQ(*s.runs, 0);
}

// Of the kinds HTTP makes, a legacy session and a listen hear server events; the connection serving modern
// requests one after another never registers for them (it has no one to tell).
TEST(ConnectionKinds, OnlySessionsAndListensHearServerEvents) {
    server srv(test_options());
    boost::asio::io_context io;
    auto const before = srv.listener_count();
    auto requests = connection::create(
        srv, io.get_executor(), [](std::string) {}, duet::server::connection_options::modern_requests());
    EXPECT_EQ(srv.listener_count(), before);
    auto listen = connection::create(
        srv, io.get_executor(), [](std::string) {}, duet::server::connection_options::modern_listen());
    EXPECT_EQ(srv.listener_count(), before + 1);
    auto session = connection::create(
        srv, io.get_executor(), [](std::string) {},
        duet::server::connection_options::legacy_session("s-1", false));
    EXPECT_EQ(srv.listener_count(), before + 2);
}

TEST(ConnectionKinds, PresetsSayWhereStateLives) {
    auto const session = duet::server::connection_options::legacy_session("s-1", false);
    EXPECT_FALSE(session.executor_is_serial)
        << "a session's requests come on many sockets: a strand of its own";
    EXPECT_EQ(session.session_id, "s-1");
    EXPECT_TRUE(duet::server::connection_options::legacy_session("s-2", true).executor_is_serial)
        << "one I/O thread: its executor is already serial";
    EXPECT_TRUE(duet::server::connection_options::modern_requests().executor_is_serial);
    EXPECT_TRUE(duet::server::connection_options::modern_listen().executor_is_serial);
    EXPECT_TRUE(duet::server::connection_options{}.hears_server_events) << "the default: a stream of frames";
}

} // namespace
