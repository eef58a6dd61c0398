// `duet serve --metrics-port 0`: the scrape endpoint serves the Prometheus text that `promtool check metrics`
// (Prometheus's own parser and linter) accepts, and its counters move by exactly the traffic sent: requests
// by method, era and outcome, tool calls by tool, HTTP responses and bytes, legacy sessions.
#include "http/mcp_http.hpp"
#include "http/servers.hpp"
#include "stdio/messages.hpp"
#include "support/child_process.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <regex>
#include <string>
#include <vector>

namespace {
namespace metrics_suite {

using namespace duet::test;
using namespace duet::test::http;

// The metrics URL the server said on stderr.
endpoint metrics_endpoint_of(child_server const& s) {
    std::smatch m;
    auto const err = s.stderr_text();
    static std::regex const said("metrics at (http://[^ \n]+)");
    if (!std::regex_search(err, m, said)) {
        ADD_FAILURE() << "no metrics URL on stderr:\n" << err;
        return {};
    }
    return endpoint::parse(m[1].str());
}

std::string scrape(endpoint const& ep) {
    auto const r = exchange(ep, request_spec{.method = "GET"});
    EXPECT_EQ(r.status, 200u);
    EXPECT_EQ(r.header("Content-Type").value_or(""), "text/plain; version=0.0.4; charset=utf-8");
    return r.body;
}

double sample(std::string const& text, std::string const& series) {
    auto const at = text.find("\n" + series + " ");
    if (at == std::string::npos)
        return 0;
    return std::stod(text.substr(at + series.size() + 2));
}

// promtool's verdict on `text`: empty when it accepts it, else what it said.
std::string promtool_check(std::string const& text) {
    child_process promtool({"/usr/bin/promtool", "check", "metrics"}, child_process::input::pipe);
    if (!promtool.running())
        return "promtool did not start (scripts/bootstrap installs the prometheus package)";
    std::size_t written = 0;
    while (written < text.size()) {
        auto const n = ::write(promtool.in(), text.data() + written, text.size() - written);
        if (n <= 0)
            break;
        written += static_cast<std::size_t>(n);
    }
    promtool.close_in();
    int const status = promtool.wait_exit(http_wait);
    return status == 0 ? std::string() : "exit " + std::to_string(status) + ": " + promtool.stderr_text();
}

TEST(HttpMetrics, CountersMoveByTheTrafficSentAndPromtoolAcceptsTheText) {
    child_server server({"--metrics-port", "0"});
    auto const metrics = metrics_endpoint_of(server);
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
    auto const metrics = metrics_endpoint_of(server);
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
