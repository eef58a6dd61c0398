// --log-format json and --log-level on `duet serve` and `duet gateway`: every stderr line is one JSON object;
// at debug each request answered is an event (with its trace id); the gateway's per-request line is a
// "forwarded" event naming the upstream, the outcome, the latency and the trace; a higher level hides what is
// below it.
#include "gateway/gateway_process.hpp"
#include "http/mcp_http.hpp"
#include "http/servers.hpp"
#include "stdio/messages.hpp"

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {
namespace log_format_suite {

using namespace duet::test;
using namespace duet::test::http;

constexpr char const* traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

// Every stderr line as JSON; a test failure for a line that is not one object.
std::vector<boost::json::object> json_lines(std::string const& text) {
    std::vector<boost::json::object> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        boost::system::error_code ec;
        auto v = boost::json::parse(line, ec);
        if (ec || !v.is_object()) {
            ADD_FAILURE() << "not a JSON object: " << line;
            continue;
        }
        out.push_back(v.as_object());
    }
    return out;
}

// The lines of `event` (and `method`, when given), waiting up to a few seconds for them to be written.
template<typename Source>
std::vector<boost::json::object> events(Source const& process, std::string const& event,
                                        std::string const& method, std::size_t at_least) {
    std::vector<boost::json::object> found;
    auto const give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    do {
        found.clear();
        for (auto& line : json_lines(process.stderr_text()))
            if (auto const* e = line.if_contains("event"); e && e->is_string() && e->get_string() == event) {
                auto const* m = line.if_contains("method");
                if (method.empty() || (m && m->is_string() && m->get_string() == method))
                    found.push_back(line);
            }
        if (found.size() >= at_least)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    } while (std::chrono::steady_clock::now() < give_up);
    return found;
}

boost::json::object traced_echo(int id) {
    auto r = modern_request(id, "tools/call", call_params("echo", {{"text", "hi"}}));
    r["params"].as_object()["_meta"].as_object()["traceparent"] = traceparent;
    return r;
}

TEST(LogFormat, ServeAtDebugLogsEveryRequestAsAJsonEvent) {
    child_server server({"--log-format", "json", "--log-level", "debug"});
    mcp_http c(server.ep());
    EXPECT_EQ(c.post(traced_echo(1)).status, 200u);
    EXPECT_EQ(c.post(modern_request(2, "tools/call", call_params("no-such-tool"))).status, 200u);
    auto const calls = events(server, "request", "tools/call", 2);
    ASSERT_EQ(calls.size(), 2u) << server.stderr_text();
    EXPECT_EQ(calls[0].at("level"), "debug");
    EXPECT_EQ(calls[0].at("era"), "modern");
    EXPECT_EQ(calls[0].at("outcome"), "ok");
    EXPECT_EQ(calls[0].at("trace_id"), "4bf92f3577b34da6a3ce929d0e0e4736");
    EXPECT_TRUE(calls[0].at("latency_ms").is_number());
    EXPECT_EQ(calls[1].at("outcome"), "error");
    EXPECT_FALSE(calls[1].contains("trace_id"));
    EXPECT_EQ(events(server, "started", "", 1).size(), 1u);
}

TEST(LogFormat, ALegacySessionsRequestsNameTheirSession) {
    child_server server({"--log-format", "json", "--log-level", "debug"});
    mcp_http c(server.ep());
    c.initialize("2025-11-25");
    ASSERT_TRUE(c.session_id());
    EXPECT_EQ(c.post(legacy_request(2, "tools/call", call_params("echo", {{"text", "old"}}))).status, 200u);
    EXPECT_EQ(c.post(traced_echo(3)).status, 200u);
    auto const calls = events(server, "request", "tools/call", 2);
    ASSERT_EQ(calls.size(), 2u) << server.stderr_text();
    EXPECT_EQ(calls[0].at("era"), "legacy");
    EXPECT_EQ(calls[0].at("session").as_string(), *c.session_id());
    EXPECT_EQ(calls[1].at("era"), "modern");
    EXPECT_FALSE(calls[1].contains("session")) << "a modern request belongs to no session";
    auto const opened = events(server, "request", "initialize", 1);
    ASSERT_EQ(opened.size(), 1u);
    EXPECT_EQ(opened[0].at("session").as_string(), *c.session_id());
}

TEST(LogFormat, ServeAtInfoLogsNoRequestAndAtWarningNotEvenItsStart) {
    child_server info({"--log-format", "json"});
    mcp_http c(info.ep());
    EXPECT_EQ(c.post(traced_echo(1)).status, 200u);
    EXPECT_EQ(events(info, "started", "", 1).size(), 1u);
    EXPECT_TRUE(events(info, "request", "", 0).empty());

    child_server quiet({"--log-format", "json", "--log-level", "warning"});
    mcp_http q(quiet.ep());
    EXPECT_EQ(q.post(traced_echo(1)).status, 200u);
    EXPECT_EQ(quiet.stderr_text(), "");
}

TEST(LogFormat, TheGatewaysForwardedLineIsAJsonEvent) {
    gateway::gateway_process gw(gateway::demo_upstream("--modern-only"), {"--log-format", "json"});
    mcp_http c(gw.ep());
    EXPECT_EQ(c.post(traced_echo(1)).status, 200u);
    auto const forwarded = events(gw, "forwarded", "tools/call", 1);
    ASSERT_EQ(forwarded.size(), 1u) << gw.stderr_text();
    auto const& e = forwarded[0];
    EXPECT_EQ(e.at("level"), "info");
    EXPECT_EQ(e.at("component"), "duet gateway");
    EXPECT_EQ(e.at("outcome"), "ok");
    EXPECT_EQ(e.at("trace_id"), "4bf92f3577b34da6a3ce929d0e0e4736");
    EXPECT_TRUE(e.at("latency_ms").is_number());
    EXPECT_TRUE(e.contains("upstream"));
    EXPECT_FALSE(events(gw, "gateway", "", 1).empty()) << "its own lines are JSON too";
}

TEST(LogFormat, TheGatewayAtErrorLogsNoForwardedRequest) {
    gateway::gateway_process gw(gateway::demo_upstream("--modern-only"), {"--log-level", "error"});
    mcp_http c(gw.ep());
    EXPECT_EQ(c.post(traced_echo(1)).status, 200u);
    EXPECT_EQ(c.post(traced_echo(2)).status, 200u);
    std::this_thread::sleep_for(std::chrono::milliseconds(200)); // past the log's 20 ms gathering
    EXPECT_EQ(gw.stderr_text().find("tools/call"), std::string::npos) << gw.stderr_text();
}

TEST(LogFormat, ABadLogFormatIsAUsageError) {
    auto const bad = run_duet_to_exit({"serve", "--log-format", "yaml"});
    EXPECT_NE(bad.exit_code, 0) << bad.err;
    EXPECT_NE(bad.err.find("--log-format"), std::string::npos) << bad.err;
}

} // namespace log_format_suite
} // namespace
