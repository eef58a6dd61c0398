// The metrics registry's counting and its Prometheus text: what each record adds, where a label value comes
// from a bounded set, gauges and collectors living as long as their registrations, and the text's escaping.
#include <duet/metrics/registry.hpp>
#include <duet/protocol/method_table.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace metrics_registry_test {

using namespace std::chrono_literals;
using duet::metrics::era_label;
using duet::metrics::outcome;
using duet::metrics::registry;
using duet::protocol::find_method;

// The value of the sample whose line starts with `series` (name and labels, as rendered); -1 when absent.
double sample(std::string const& text, std::string const& series) {
    auto const at = text.find("\n" + series + " ");
    if (at == std::string::npos)
        return -1;
    return std::stod(text.substr(at + series.size() + 2));
}

TEST(MetricsRegistry, RequestsAreCountedByMethodEraAndOutcome) {
    registry r;
    auto const* call = find_method("tools/call");
    r.request_done(call, era_label::modern, outcome::ok, 200us);
    r.request_done(call, era_label::modern, outcome::ok, 300us);
    r.request_done(call, era_label::legacy, outcome::tool_error, 1ms);
    r.request_done(nullptr, era_label::none, outcome::error, 10us);
    auto const text = r.render();
    EXPECT_EQ(sample(text, R"(duet_requests_total{method="tools/call",era="modern",outcome="ok"})"), 2);
    EXPECT_EQ(sample(text, R"(duet_requests_total{method="tools/call",era="legacy",outcome="tool_error"})"),
              1);
    EXPECT_EQ(sample(text, R"(duet_requests_total{method="other",era="none",outcome="error"})"), 1);
    // Series never recorded are not written.
    EXPECT_EQ(sample(text, R"(duet_requests_total{method="tools/list",era="modern",outcome="ok"})"), -1);
}

TEST(MetricsRegistry, LatencyBucketsAreCumulativeWithSumAndCount) {
    registry r;
    auto const* list = find_method("tools/list");
    r.request_done(list, era_label::modern, outcome::ok, 50us);       // <= 0.0001
    r.request_done(list, era_label::modern, outcome::ok, 700us);      // <= 0.001
    r.request_done(list, era_label::modern, outcome::ok, 2min);       // +Inf only
    r.request_done(list, era_label::modern, outcome::cancelled, 1ms); // counted, not timed
    auto const text = r.render();
    std::string const base = R"(duet_request_duration_seconds_bucket{method="tools/list",era="modern",le=")";
    EXPECT_EQ(sample(text, base + R"(0.0001"})"), 1);
    EXPECT_EQ(sample(text, base + R"(0.0005"})"), 1);
    EXPECT_EQ(sample(text, base + R"(0.001"})"), 2);
    EXPECT_EQ(sample(text, base + R"(60"})"), 2);
    EXPECT_EQ(sample(text, base + R"(+Inf"})"), 3);
    EXPECT_EQ(sample(text, R"(duet_request_duration_seconds_count{method="tools/list",era="modern"})"), 3);
    EXPECT_NEAR(sample(text, R"(duet_request_duration_seconds_sum{method="tools/list",era="modern"})"),
                120.00075, 1e-9);
    EXPECT_EQ(sample(text, R"(duet_requests_total{method="tools/list",era="modern",outcome="cancelled"})"),
              1);
}

TEST(MetricsRegistry, ToolNamesComeFromToolsThatAnsweredAndAreBounded) {
    registry r;
    r.tool_called("echo", outcome::ok);
    r.tool_called("echo", outcome::error);    // known now: keeps its name
    r.tool_called("made-up", outcome::error); // never answered: other
    r.tool_called("", outcome::ok);           // no name: other
    for (std::size_t i = 0; i < registry::max_tools + 5; ++i)
        r.tool_called("tool" + std::to_string(i), outcome::ok);
    auto const text = r.render();
    EXPECT_EQ(sample(text, R"(duet_tool_calls_total{tool="echo",outcome="ok"})"), 1);
    EXPECT_EQ(sample(text, R"(duet_tool_calls_total{tool="echo",outcome="error"})"), 1);
    EXPECT_EQ(sample(text, R"(duet_tool_calls_total{tool="made-up",outcome="error"})"), -1);
    EXPECT_EQ(sample(text, R"(duet_tool_calls_total{tool="other",outcome="error"})"), 1);
    // echo took one of max_tools names; the six calls past the bound, and the nameless one, are other.
    EXPECT_EQ(sample(text, R"(duet_tool_calls_total{tool="other",outcome="ok"})"), 7);
    EXPECT_EQ(sample(text, R"(duet_tool_calls_total{tool="tool198",outcome="ok"})"), 1);
    EXPECT_EQ(sample(text, R"(duet_tool_calls_total{tool="tool199",outcome="ok"})"), -1);
}

TEST(MetricsRegistry, GaugesOfOneNameAndLabelsAddUpAndLeaveWithTheirRegistration) {
    registry r;
    double a = 2, b = 3;
    auto first = r.add_gauge("duet_things_open", "Things.", "", [&] { return a; });
    std::optional<registry::registration> second =
        r.add_gauge("duet_things_open", "Things.", "", [&] { return b; });
    auto third = r.add_gauge("duet_things_open", "Things.", R"(kind="x")", [] { return 7.0; });
    auto text = r.render();
    EXPECT_EQ(sample(text, "duet_things_open"), 5);
    EXPECT_EQ(sample(text, R"(duet_things_open{kind="x"})"), 7);
    EXPECT_EQ(text.find("# TYPE duet_things_open gauge"), text.rfind("# TYPE duet_things_open gauge"))
        << "one family, written once";
    second.reset();
    text = r.render();
    EXPECT_EQ(sample(text, "duet_things_open"), 2);
}

TEST(MetricsRegistry, CollectorsAreAskedAtEachScrapeWhileRegistered) {
    registry r;
    int asked = 0;
    std::optional<registry::registration> kept = r.add_collector([&] {
        ++asked;
        return std::vector<duet::metrics::family>{
            {"duet_gateway_upstream_up", "Up.", "gauge", {{R"(upstream="a")", 1}, {R"(upstream="b")", 0}}}};
    });
    auto const text = r.render();
    EXPECT_EQ(asked, 1);
    EXPECT_EQ(sample(text, R"(duet_gateway_upstream_up{upstream="a"})"), 1);
    EXPECT_EQ(sample(text, R"(duet_gateway_upstream_up{upstream="b"})"), 0);
    kept.reset();
    EXPECT_EQ(r.render().find("duet_gateway_upstream_up"), std::string::npos);
    EXPECT_EQ(asked, 1);
}

TEST(MetricsRegistry, ARegistrationMayOutliveItsRegistry) {
    registry::registration kept;
    {
        registry r;
        kept = r.add_gauge("duet_x", "X.", "", [] { return 1.0; });
    }
    SUCCEED(); // destroying `kept` now touches nothing that is gone (ASan would say)
}

TEST(MetricsRegistry, LabelValuesAreEscaped) {
    registry r;
    r.tool_called("say \"hi\"\\now\nplease", outcome::ok);
    auto const text = r.render();
    EXPECT_NE(text.find(R"(duet_tool_calls_total{tool="say \"hi\"\\now\nplease",outcome="ok"} 1)"),
              std::string::npos)
        << text;
}

TEST(MetricsRegistry, ALabelForAnotherPartsFamilyIsEscapedTheSameWay) {
    EXPECT_EQ(duet::metrics::label("upstream", "a\"b\\c\nd"), R"(upstream="a\"b\\c\nd")");
    EXPECT_EQ(duet::metrics::label("outcome", "ok"), R"(outcome="ok")");
}

TEST(MetricsRegistry, HttpCountersAndProcessFiguresAreWritten) {
    registry r;
    r.http().connections_open.fetch_add(2);
    r.http().responded(200);
    r.http().responded(503);
    r.http().responded(99); // not a status: not counted
    auto const text = r.render();
    EXPECT_EQ(sample(text, "duet_http_connections_open"), 2);
    EXPECT_EQ(sample(text, R"(duet_http_responses_total{code="2xx"})"), 1);
    EXPECT_EQ(sample(text, R"(duet_http_responses_total{code="5xx"})"), 1);
    EXPECT_GT(sample(text, "process_resident_memory_bytes"), 0);
    EXPECT_GT(sample(text, "process_open_fds"), 0);
    EXPECT_GT(sample(text, "process_start_time_seconds"), 1.7e9);
}

} // namespace metrics_registry_test
