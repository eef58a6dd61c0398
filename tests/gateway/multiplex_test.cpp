// Several calls at once over one pooled upstream connection, and what must stay with each call: a pooled
// connection carries concurrent calls where everything the upstream sends about a call can be told apart
// (a modern upstream; a legacy one whose session declares no elicitation, sampling or roots and which
// offers no logging), and one call at a time elsewhere; over stdio at most one call per connection hears
// log lines, so every line reaches the request that asked for it (upstream_pool.hpp, the rule).
//
// The upstream's `gather` tool answers "PID together" only once `count` gather calls are in flight in the
// same process at once, so a call that answers "together" proves the overlap without any timing.
#include "gateway/announcing_upstream.hpp"
#include "gateway/gateway_process.hpp"
#include "http/mcp_http.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace json = boost::json;
using namespace duet::test;
using namespace duet::test::http;
using namespace duet::test::gateway;

json::object gather_args(int count, int wait_ms, std::string const& tag = {}) {
    json::object a{{"count", count}, {"wait_ms", wait_ms}};
    if (!tag.empty())
        a["tag"] = tag;
    return a;
}

/// A modern downstream tools/call of `gather`; `log_level` set: the request asks for log lines.
json::object gather_call(int id, json::object args, std::string const& log_level = {},
                         json::object capabilities = {}) {
    json::object extra;
    if (!log_level.empty())
        extra[key_log_level] = log_level;
    json::object params = call_params("gather", std::move(args));
    params["_meta"] = modern_meta(std::move(capabilities), std::move(extra));
    return modern_request(id, "tools/call", std::move(params));
}

/// What one downstream request got: its answer's text and the data of the log lines on its stream.
struct heard {
    std::string text;
    std::vector<std::string> lines;
};

heard call(mcp_http& c, json::object const& request) {
    auto const r = c.post(request);
    heard h;
    for (auto const& m : r.messages()) {
        auto const& o = m.as_object();
        if (o.contains("result"))
            h.text = first_text(o.at("result").as_object());
        else if (auto const* method = o.if_contains("method"); method && *method == "notifications/message")
            h.lines.emplace_back(o.at("params").at("data").as_string());
    }
    return h;
}

/// `requests` sent at once, each on a client of its own.
std::vector<heard> all_at_once(endpoint ep, std::vector<json::object> const& requests) {
    std::vector<std::unique_ptr<mcp_http>> clients;
    for (std::size_t i = 0; i < requests.size(); ++i)
        clients.push_back(std::make_unique<mcp_http>(ep));
    std::vector<heard> got(requests.size());
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < requests.size(); ++i)
        threads.emplace_back([&, i] { got[i] = call(*clients[i], requests[i]); });
    for (auto& t : threads)
        t.join();
    for (auto& c : clients)
        c->expect_schema_valid();
    return got;
}

class GatewayMultiplex : public ::testing::TestWithParam<bool> {}; // modern upstream?

// Four calls at once through a pool of one child: it carries all four together.
TEST_P(GatewayMultiplex, ConcurrentCallsShareOnePooledChild) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    announcing_upstream up;
    bool const modern = GetParam();
    gateway_process gw(up.upstream(modern), {"--era", modern ? "modern" : "legacy", "--pool-size", "1"});
    ASSERT_TRUE(up.wait_for("started")); // the control child
    std::vector<json::object> requests;
    for (int i = 0; i < 4; ++i)
        requests.push_back(gather_call(i, gather_args(4, 20000)));
    auto const got = all_at_once(gw.ep(), requests);
    std::set<std::string> answers;
    for (auto const& h : got)
        answers.insert(h.text);
    ASSERT_EQ(answers.size(), 1u) << "one child, all together: " << *answers.begin();
    EXPECT_TRUE(answers.begin()->ends_with(" together")) << *answers.begin();
    EXPECT_EQ(up.pids_that("started").size(), 2u) << up.log_text(); // control + the pool of one
}

INSTANTIATE_TEST_SUITE_P(Gateway, GatewayMultiplex, ::testing::Values(false, true),
                         [](auto const& p) { return p.param ? "ModernUpstream" : "LegacyUpstream"; });

// A legacy upstream session that declares elicitation may be asked questions nothing ties to one call
// (stdio): its connection carries one call at a time, so two calls never meet in the child.
TEST(GatewayMultiplexRule, ALegacySessionThatCanBeAskedCarriesOneCallAtATime) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    announcing_upstream up;
    gateway_process gw(up.upstream(false), {"--era", "legacy", "--pool-size", "1"});
    ASSERT_TRUE(up.wait_for("started"));
    json::object const asks{{"elicitation", json::object{}}};
    auto const got = all_at_once(gw.ep(), {gather_call(1, gather_args(2, 1500), "", asks),
                                           gather_call(2, gather_args(2, 1500), "", asks)});
    for (auto const& h : got)
        EXPECT_TRUE(h.text.ends_with(" alone")) << h.text;
    EXPECT_EQ(got[0].text, got[1].text) << "the pool of one served both, in turn";
}

// Over stdio nothing says which call a log line is about: a call that hears log lines shares its child only
// with calls that hear none, and each request gets exactly its own lines.
TEST(GatewayMultiplexRule, LogLinesReachOnlyTheRequestThatAskedForThem) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    announcing_upstream up;
    gateway_process gw(up.upstream(true), {"--era", "modern", "--pool-size", "1"});
    ASSERT_TRUE(up.wait_for("started"));

    // One call that logs and one that does not: together on the one child; only the first hears lines.
    auto const mixed = all_at_once(gw.ep(), {gather_call(1, gather_args(2, 20000, "A"), "debug"),
                                             gather_call(2, gather_args(2, 20000, "B"))});
    EXPECT_TRUE(mixed[0].text.ends_with(" together")) << mixed[0].text;
    EXPECT_TRUE(mixed[1].text.ends_with(" together")) << mixed[1].text;
    EXPECT_EQ(mixed[0].lines, (std::vector<std::string>{"A starts", "A ends"}));
    EXPECT_TRUE(mixed[1].lines.empty()) << mixed[1].lines.front();

    // Two calls that log: never on one child at once, each hears its own lines only.
    auto const logging = all_at_once(gw.ep(), {gather_call(3, gather_args(2, 1500, "C"), "debug"),
                                               gather_call(4, gather_args(2, 1500, "D"), "info")});
    EXPECT_TRUE(logging[0].text.ends_with(" alone")) << logging[0].text;
    EXPECT_TRUE(logging[1].text.ends_with(" alone")) << logging[1].text;
    EXPECT_EQ(logging[0].lines, (std::vector<std::string>{"C starts", "C ends"}));
    EXPECT_EQ(logging[1].lines, (std::vector<std::string>{"D starts", "D ends"}));
}

} // namespace
