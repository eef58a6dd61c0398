// `duet gateway --metrics-port 0`: what it forwards is counted per upstream (by outcome; an unnamed
// upstream's label is empty), beside the requests its clients sent, and promtool accepts the text; the config
// file's gateway.metricsPort does the same as the flag. A forwarded request is counted before its answer
// leaves, so a reply read means it is counted.
#include "gateway/gateway_process.hpp"
#include "http/mcp_http.hpp"
#include "http/prometheus_text.hpp"
#include "stdio/messages.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {
namespace gateway_metrics_suite {

using namespace duet::test;
using namespace duet::test::gateway;
using namespace duet::test::http;

TEST(GatewayMetrics, ForwardedRequestsAreCountedPerUpstreamByOutcome) {
    gateway_process gw(demo_upstream("--modern-only"), {"--metrics-port", "0"});
    auto const metrics = metrics_endpoint_in(gw.stderr_text());
    ASSERT_FALSE(metrics.host.empty());
    mcp_http c(gw.ep());
    EXPECT_EQ(c.post(modern_request(1, "tools/call", call_params("echo", {{"text", "a"}}))).status, 200u);
    EXPECT_EQ(c.post(modern_request(2, "tools/call", call_params("echo", {{"text", "b"}}))).status, 200u);
    EXPECT_EQ(c.post(modern_request(3, "prompts/get", {{"name", "no-such-prompt"}})).status, 200u);

    auto const text = scrape(metrics);
    EXPECT_EQ(promtool_check(text), "");
    auto const ok = sample(text, R"(duet_gateway_upstream_requests_total{upstream="",outcome="ok"})");
    EXPECT_EQ(ok, 2) << text;
    EXPECT_EQ(sample(text, R"(duet_gateway_upstream_requests_total{upstream="",outcome="error"})"), 1);
    EXPECT_EQ(sample(text, R"(duet_gateway_upstream_up{upstream=""})"), 1);
    EXPECT_EQ(sample(text, R"(duet_gateway_upstream_requests_in_flight{upstream=""})"), 0);
    EXPECT_EQ(sample(text, R"(duet_requests_total{method="tools/call",era="modern",outcome="ok"})"), 2);
    EXPECT_EQ(sample(text, R"(duet_tool_calls_total{tool="echo",outcome="ok"})"), 2);
}

TEST(GatewayMetrics, TheConfigFileTurnsMetricsOnByName) {
    auto const dir = std::string(testing::TempDir());
    auto const file = dir + "/gateway-metrics.json";
    {
        std::ofstream out(file);
        out << R"({"mcpServers": {"demo": {"command": ")" << DUET_BINARY
            << R"(", "args": ["serve", "--stdio"]}}, "gateway": {"metricsPort": 0}})";
    }
    gateway_process gw(std::vector<std::string>{"--config", file});
    auto const metrics = metrics_endpoint_in(gw.stderr_text());
    ASSERT_FALSE(metrics.host.empty());
    mcp_http c(gw.ep());
    EXPECT_EQ(c.post(modern_request(1, "tools/call", call_params("echo", {{"text", "a"}}))).status, 200u);
    auto const text = scrape(metrics);
    EXPECT_EQ(sample(text, R"(duet_gateway_upstream_requests_total{upstream="demo",outcome="ok"})"), 1)
        << text;
    std::remove(file.c_str());
}

} // namespace gateway_metrics_suite
} // namespace
