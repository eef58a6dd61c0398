// `duet gateway` as a process, in front of `duet serve --stdio` restricted to one era, reached over
// Streamable HTTP by a client of the other era: results shaped for the client's era, a question of the
// upstream parked as an input_required round and answered on the retry, flat tool arguments, an upstream that
// cannot be reached.
#include "gateway/announcing_upstream.hpp"
#include "gateway/gateway_process.hpp"
#include "http/mcp_http.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "unit/server/mrtr_support.hpp"

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace json = boost::json;
using namespace duet::test;
using namespace duet::test::http;
using namespace duet::test::gateway;

TEST(Gateway, ModernClientSeesALegacyUpstreamAsModern) {
    gateway_process gw("--legacy-only");
    mcp_http c(gw.ep());
    auto const discover = only_message(c.post(modern_request(1, "server/discover")));
    expect_modern_result(discover, /*cacheable=*/true);
    EXPECT_TRUE(result_of(discover).at("capabilities").as_object().contains("tools")) << discover;
    auto const list = only_message(c.post(modern_request(2, "tools/list")));
    expect_modern_result(list, /*cacheable=*/true);
    bool has_echo = false;
    auto const listed = result_of(list);
    for (auto const& t : listed.at("tools").as_array())
        has_echo = has_echo || t.at("name") == "echo";
    EXPECT_TRUE(has_echo) << list;
    auto const call =
        only_message(c.post(modern_request(3, "tools/call", call_params("echo", {{"text", "hi"}}))));
    expect_modern_result(call, /*cacheable=*/false);
    EXPECT_EQ(first_text(result_of(call)), "hi");
    c.expect_schema_valid();
}

TEST(Gateway, LegacyClientSeesAModernUpstreamAsLegacy) {
    gateway_process gw("--modern-only");
    mcp_http c(gw.ep());
    auto const init = only_message(c.initialize("2025-11-25"));
    auto const r = result_of(init);
    EXPECT_EQ(r.at("protocolVersion"), "2025-11-25");
    EXPECT_EQ(r.at("serverInfo").at("name"), "duet-demo") << init;
    auto const call =
        only_message(c.post(legacy_request(1, "tools/call", call_params("echo", {{"text", "hi"}}))));
    expect_legacy_result(call);
    EXPECT_EQ(first_text(result_of(call)), "hi");
    c.expect_schema_valid();
}

// A legacy session of a legacy upstream has an upstream session of its own: the upstream's question is a
// real request to this session's client, on the stream of the call that caused it.
TEST(Gateway, LegacySessionOfALegacyUpstreamIsAskedDirectly) {
    gateway_process gw("--legacy-only");
    mcp_http c(gw.ep());
    c.initialize("2025-11-25", all_caps());
    auto stream = c.open(legacy_request(1, "tools/call", call_params("ask_name")));
    ASSERT_NE(stream, nullptr);
    json::value ask = c.next(*stream);
    while (ask.is_object() && !is_server_request(ask, "elicitation/create"))
        ask = c.next(*stream);
    ASSERT_TRUE(is_server_request(ask, "elicitation/create")) << ask;
    c.post(client_response(ask.at("id"), accepted("name", "Grace")));
    json::value done = c.next(*stream);
    while (done.is_object() && !is_response_to(done, 1))
        done = c.next(*stream);
    expect_legacy_result(done);
    EXPECT_EQ(first_text(result_of(done)), "Hello, Grace!") << done;
    c.expect_schema_valid();
}

TEST(Gateway, UpstreamQuestionIsParkedAsAnInputRoundAndAnsweredOnRetry) {
    gateway_process gw("--legacy-only");
    mcp_http c(gw.ep());
    auto const caps = all_caps();
    auto const params = call_params("ask_name");
    auto const first =
        expect_input_required(only_message(c.post(modern_request(1, "tools/call", params, caps))));
    // The demo server's own key for the question, named in the legacy request's _meta.
    ASSERT_EQ(keys_of(first), std::vector<std::string>{"name"}) << json::value(first);
    auto const& question = first.at("inputRequests").at("name").as_object();
    EXPECT_FALSE(question.at("params").as_object().contains("_meta")) << json::value(first);
    EXPECT_EQ(question.at("method"), "elicitation/create");
    auto const& schema = question.at("params").at("requestedSchema").at("properties").as_object();
    ASSERT_FALSE(schema.empty());
    auto const field = std::string(schema.begin()->key());
    auto const done = only_message(c.post(
        modern_request(2, "tools/call", retry(params, {{"name", accepted(field, "Ada")}}, first), caps)));
    expect_modern_result(done, /*cacheable=*/false);
    EXPECT_NE(first_text(result_of(done)).find("Ada"), std::string::npos) << done;
    c.expect_schema_valid();
}

TEST(Gateway, FlatToolArgumentsAreRefusedUnlessLenient) {
    {
        gateway_process gw("--legacy-only");
        mcp_http c(gw.ep());
        json::object params{{"name", "echo"}, {"payload", {{"text", "flat"}}}};
        auto const refused = only_message(c.post(modern_request(1, "tools/call", params)));
        expect_error(refused, -32602);
    }
    gateway_process gw("--legacy-only", {"--lenient-args"});
    mcp_http c(gw.ep());
    json::object params{{"name", "echo"}, {"payload", {{"text", "flat"}}}};
    auto const call = only_message(c.post(modern_request(1, "tools/call", params)));
    EXPECT_EQ(first_text(result_of(call)), "flat") << call;
}

TEST(Gateway, EachForwardedRequestIsLoggedOnStderr) {
    gateway_process gw("--legacy-only");
    mcp_http c(gw.ep());
    c.post(modern_request(1, "tools/list"));
    auto const deadline = std::chrono::steady_clock::now() + wait_limit;
    std::string log;
    while (std::chrono::steady_clock::now() < deadline) {
        log = gw.stderr_text();
        if (log.find("tools/list") != std::string::npos)
            break;
        ::usleep(20000);
    }
    EXPECT_NE(log.find("tools/list modern(2026-07-28) -> legacy(2025-11-25)"), std::string::npos) << log;
    EXPECT_NE(log.find("status=ok"), std::string::npos) << log;
}

// The upstream dies mid-call: the call fails at once with -32603 naming the upstream (never a hang), and the
// next call is served by a child started again.
TEST(Gateway, UpstreamThatDiesFailsItsCallAndIsStartedAgain) {
    auto const node = pinned_node();
    if (node.empty())
        GTEST_SKIP() << "Node is not installed in tests/interop (run scripts/bootstrap)";
    gateway_process gw("stdio:" + node + " " DUET_SOURCE_DIR "/tests/gateway/crashing_upstream.mjs",
                       {"--era", "legacy"});
    mcp_http c(gw.ep());
    auto const before = only_message(c.post(modern_request(1, "tools/call", call_params("pid"))));
    auto const first_pid = first_text(result_of(before));
    EXPECT_FALSE(first_pid.empty()) << before;
    auto const crashed = only_message(c.post(modern_request(2, "tools/call", call_params("crash"))));
    expect_error(crashed, -32603);
    EXPECT_NE(error_of(crashed).at("message").as_string().find("crashing_upstream.mjs"), std::string::npos)
        << crashed;
    auto const after = only_message(c.post(modern_request(3, "tools/call", call_params("pid"))));
    auto const second_pid = first_text(result_of(after));
    EXPECT_FALSE(second_pid.empty()) << after;
    EXPECT_NE(second_pid, first_pid) << "the dead child served again?";
}

// Requirement: SIGTERM drains. A call in flight through the gateway is still answered, then the gateway
// closes its upstream (the stdio child exits) and exits 0. The upstream side shares the HTTP server's
// io_context, so it must go on through the drain and be closed after it.
TEST(Gateway, SigtermAnswersTheCallInFlightThenEndsItsUpstreamAndExitsZero) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    announcing_upstream up;
    gateway_process gw(up.upstream(true), {"--era", "modern"});
    mcp_http c(gw.ep());
    auto const first = only_message(c.post(modern_request(1, "tools/call", call_params("pid"))));
    auto const upstream_pid = std::stoi(first_text(result_of(first)));

    // `gather` waiting for company it never gets answers "PID alone" after wait_ms.
    json::value slow;
    std::thread caller([&] {
        mcp_http c2(gw.ep());
        slow = only_message(c2.post(modern_request(
            2, "tools/call", call_params("gather", {{"count", 99}, {"wait_ms", 3000}, {"tag", "slow"}}))));
    });
    EXPECT_TRUE(up.wait_for("gather slow")) << up.log_text(); // the call is at the upstream
    EXPECT_EQ(gw.stop(), 0) << gw.stderr_text();
    caller.join();
    EXPECT_EQ(first_text(result_of(slow)), std::to_string(upstream_pid) + " alone") << slow;

    // Gone, or a zombie nobody reaped yet (the gateway, its parent, exited first).
    auto const running = [upstream_pid] {
        std::ifstream stat("/proc/" + std::to_string(upstream_pid) + "/stat");
        std::string pid, comm, state;
        return static_cast<bool>(stat >> pid >> comm >> state) && state != "Z";
    };
    auto const deadline = std::chrono::steady_clock::now() + wait_limit;
    while (running() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_FALSE(running()) << "the upstream child outlived the gateway";
}

TEST(Gateway, AnUnreachableUpstreamIsReportedAtStart) {
    child_process child({DUET_BINARY, "gateway", "--port", "0", "--upstream", "stdio:/nonexistent/server"},
                        child_process::input::null);
    EXPECT_EQ(child.wait_exit(wait_limit), 3);
    EXPECT_NE(child.stderr_text().find("cannot reach the upstream"), std::string::npos)
        << child.stderr_text();
}

TEST(Gateway, ABadUpstreamArgumentIsAUsageError) {
    child_process child({DUET_BINARY, "gateway", "--upstream", "ftp://example"}, child_process::input::null);
    EXPECT_EQ(child.wait_exit(wait_limit), 2);
}

} // namespace

namespace {

// Two upstreams named on one gateway: each at /mcp/NAME, each request reaching its own upstream (the log
// line names it), each endpoint with its own legacy sessions.
TEST(GatewayNamedUpstreams, EachIsServedAtItsOwnPath) {
    gateway_process gw(std::vector<std::string>{"--upstream", "old=" + demo_upstream("--legacy-only"),
                                                "--upstream", "new=" + demo_upstream("--modern-only")});
    ASSERT_TRUE(gw.url().ends_with("/mcp/old")) << gw.url();
    auto new_ep = gw.ep();
    new_ep.path = "/mcp/new";
    mcp_http old_side(gw.ep());
    mcp_http new_side(new_ep);

    auto const call = json::object{{"name", "echo"}, {"arguments", {{"text", "old"}}}};
    EXPECT_EQ(first_text(result_of(only_message(old_side.post(modern_request(1, "tools/call", call))))),
              "old");
    EXPECT_TRUE(gw.wait_for_log("tools/call modern(2026-07-28) -> legacy(2025-11-25) upstream=old="))
        << gw.stderr_text();
    auto const call2 = json::object{{"name", "echo"}, {"arguments", {{"text", "new"}}}};
    EXPECT_EQ(first_text(result_of(only_message(new_side.post(modern_request(2, "tools/call", call2))))),
              "new");
    EXPECT_TRUE(gw.wait_for_log("tools/call modern(2026-07-28) -> modern(2026-07-28) upstream=new="))
        << gw.stderr_text();

    // A session opened at one endpoint is unknown at the other.
    old_side.initialize("2025-11-25");
    auto spec = new_side.spec_for(legacy_request(3, "tools/list"), old_side.session_headers());
    auto const elsewhere = new_side.send(spec, legacy_request(3, "tools/list"));
    EXPECT_EQ(elsewhere.status, 404u) << elsewhere.body;
    auto const here = only_message(old_side.post(legacy_request(4, "tools/list")));
    expect_legacy_result(here);
    old_side.expect_schema_valid();
    new_side.expect_schema_valid();
}

TEST(GatewayNamedUpstreams, AnUnknownPathIsNotFoundNamingTheServedOnes) {
    gateway_process gw(std::vector<std::string>{"--upstream", "one=" + demo_upstream("--legacy-only")});
    ASSERT_TRUE(gw.url().ends_with("/mcp/one")) << gw.url();
    auto ep = gw.ep();
    ep.path = "/mcp"; // not served: the one upstream is named
    mcp_http c(ep);
    auto const r = c.post(modern_request(1, "tools/list"));
    EXPECT_EQ(r.status, 404u);
    EXPECT_NE(r.body.find("no MCP endpoint at /mcp; served here: /mcp/one"), std::string::npos) << r.body;
}

TEST(GatewayNamedUpstreams, BadNamesAreUsageErrorsBeforeAnythingStarts) {
    // Each upstream command is unreachable: reaching for it would exit 3, not 2.
    std::string const nowhere = "stdio:/nonexistent/server";
    struct row {
        std::vector<std::string> upstreams;
        std::string says;
    };
    std::vector<row> const rows{
        {{"a=" + nowhere, "a=" + nowhere}, "two upstreams named \"a\""},
        {{"a/b=" + nowhere}, "\"a/b\" is not an upstream name"},
        {{"=" + nowhere}, "\"\" is not an upstream name"},
        {{"a=" + nowhere, nowhere}, "several upstreams must each be named"},
        {{"a=ftp://example"}, "a: "},
    };
    for (auto const& r : rows) {
        std::vector<std::string> argv{DUET_BINARY, "gateway", "--port", "0"};
        for (auto const& u : r.upstreams) {
            argv.push_back("--upstream");
            argv.push_back(u);
        }
        child_process child(argv, child_process::input::null);
        EXPECT_EQ(child.wait_exit(wait_limit), 2) << r.says;
        EXPECT_NE(child.stderr_text().find(r.says), std::string::npos) << child.stderr_text();
    }
}

} // namespace
