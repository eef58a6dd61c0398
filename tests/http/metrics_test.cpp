// `duet serve --metrics-port 0`: the scrape endpoint serves the Prometheus text that `promtool check metrics`
// (Prometheus's own parser and linter) accepts, and its counters move by exactly the traffic sent: requests
// by method, era and outcome, tool calls by tool, HTTP responses and bytes, legacy sessions.
#include "http/mcp_http.hpp"
#include "http/prometheus_text.hpp"
#include "http/servers.hpp"
#include "stdio/messages.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace {
namespace metrics_suite {

using namespace duet::test;
using namespace duet::test::http;

TEST(HttpMetrics, CountersMoveByTheTrafficSentAndPromtoolAcceptsTheText) {
    child_server server({"--metrics-port", "0"});
    auto const metrics = metrics_endpoint_in(server.stderr_text());
    ASSERT_FALSE(metrics.host.empty());
    auto const before = scrape(metrics);
    EXPECT_EQ(promtool_check(before), "");

    mcp_http modern(server.ep());
    EXPECT_EQ(modern.post(modern_request(1, "tools/call", call_params("echo", {{"text", "hi"}}))).status,
              200u);
    EXPECT_EQ(modern.post(modern_request(2, "tools/call", call_params("echo", {{"text", "again"}}))).status,
              200u);
    EXPECT_EQ(modern.post(modern_request(3, "tools/call", call_params("no-such-tool"))).status, 200u);
    EXPECT_EQ(modern.post(modern_request(4, "tools/list")).status, 200u);

    mcp_http legacy(server.ep());
    legacy.initialize("2025-11-25");
    EXPECT_EQ(legacy.post(legacy_request(5, "tools/call", call_params("echo", {{"text", "old"}}))).status,
              200u);

    auto const after = scrape(metrics);
    EXPECT_EQ(promtool_check(after), "");
    auto moved = [&](std::string const& series) {
        return sample(after, series) - sample(before, series);
    };
    EXPECT_EQ(moved(R"(duet_requests_total{method="tools/call",era="modern",outcome="ok"})"), 2);
    EXPECT_EQ(moved(R"(duet_requests_total{method="tools/call",era="modern",outcome="error"})"), 1);
    EXPECT_EQ(moved(R"(duet_requests_total{method="tools/list",era="modern",outcome="ok"})"), 1);
    EXPECT_EQ(moved(R"(duet_requests_total{method="initialize",era="legacy",outcome="ok"})"), 1);
    EXPECT_EQ(moved(R"(duet_requests_total{method="tools/call",era="legacy",outcome="ok"})"), 1);
    EXPECT_EQ(moved(R"(duet_tool_calls_total{tool="echo",outcome="ok"})"), 3);
    EXPECT_EQ(moved(R"(duet_tool_calls_total{tool="other",outcome="error"})"), 1)
        << "an unknown name is not a label";
    EXPECT_EQ(after.find("no-such-tool"), std::string::npos);
    EXPECT_EQ(moved(R"(duet_request_duration_seconds_count{method="tools/call",era="modern"})"), 3);
    // Six POSTs answered 200 (the modern four, initialize and the legacy call) and one 202 (initialized).
    EXPECT_EQ(moved(R"(duet_http_responses_total{code="2xx"})"), 7);
    EXPECT_GT(moved("duet_http_request_bytes_total"), 0);
    EXPECT_GT(moved("duet_http_response_bytes_total"), 0);
    EXPECT_EQ(sample(after, "duet_http_legacy_sessions_open"), 1);
}

TEST(HttpMetrics, TheScrapePortAnswersOnlyItsPath) {
    child_server server({"--metrics-port", "0"});
    auto const metrics = metrics_endpoint_in(server.stderr_text());
    ASSERT_FALSE(metrics.host.empty());
    EXPECT_EQ(exchange(metrics, request_spec{.method = "GET", .target = "/other"}).status, 404u);
    auto const post = exchange(metrics, request_spec{.method = "POST", .body = "x"});
    EXPECT_EQ(post.status, 405u);
    EXPECT_EQ(post.header("Allow").value_or(""), "GET, HEAD");
    // The MCP port does not serve metrics: they are on their own port only.
    EXPECT_NE(exchange(server.ep(), request_spec{.method = "GET", .target = "/metrics"}).status, 200u);
}

TEST(HttpMetrics, NoMetricsPortMeansNoEndpoint) {
    child_server server;
    EXPECT_EQ(server.stderr_text().find("metrics at"), std::string::npos);
}

TEST(HttpMetrics, PromtoolRefusesBrokenText) {
    EXPECT_NE(promtool_check("duet_x{ 1\n"), ""); // the check itself can fail
}

} // namespace metrics_suite
} // namespace
