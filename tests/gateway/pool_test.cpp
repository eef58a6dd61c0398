// How `duet gateway` spreads requests over stdio children: modern requests share a small pool (at most
// --pool-size children per capability set, each carrying several requests at once where that is sound, see
// multiplex_test.cpp), each legacy session of a legacy upstream gets a child of its own, started as the
// session begins and ended with it (or shares the pool with --share-sessions), and session methods are logged
// like requests.
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

std::string pid_answer(mcp_http& c, int id, std::string const& tool) {
    auto const r = only_message(c.post(modern_request(id, "tools/call", call_params(tool))));
    return first_text(result_of(r));
}

TEST(GatewayPool, ModernRequestsShareASmallPool) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    announcing_upstream up;
    gateway_process gw(up.upstream(false), {"--era", "legacy", "--pool-size", "2"});
    ASSERT_TRUE(up.wait_for("started")); // the control child

    // Six slow calls at once: two children serve them all.
    std::vector<std::unique_ptr<mcp_http>> clients;
    for (int i = 0; i < 6; ++i)
        clients.push_back(std::make_unique<mcp_http>(gw.ep()));
    std::vector<std::string> pids(clients.size());
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < clients.size(); ++i)
        threads.emplace_back([&, i] { pids[i] = pid_answer(*clients[i], int(i), "slow_pid"); });
    for (auto& t : threads)
        t.join();
    // (At most: on a loaded machine the calls may not all overlap, and fewer children suffice.)
    std::set<std::string> const serving(pids.begin(), pids.end());
    EXPECT_LE(serving.size(), 2u) << "children that served: " << serving.size();
    EXPECT_FALSE(serving.contains("")) << "a call failed";
    auto const started = up.pids_that("started").size();
    EXPECT_LE(started, 3u) << up.log_text(); // control + the pool of two

    // Later calls reuse them.
    mcp_http c(gw.ep());
    EXPECT_TRUE(serving.contains(pid_answer(c, 10, "pid")));
    EXPECT_EQ(up.pids_that("started").size(), started) << up.log_text();
    for (auto& client : clients)
        client->expect_schema_valid();
}

// Each legacy session its own child, started at initialize and ended with the session; both logged.
TEST(GatewayPool, EachLegacySessionHasAChildOfItsOwn) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    announcing_upstream up;
    gateway_process gw(up.upstream(false), {"--era", "legacy"});
    ASSERT_TRUE(up.wait_for("started"));
    mcp_http a(gw.ep());
    mcp_http b(gw.ep());
    a.initialize("2025-11-25");
    b.initialize("2025-06-18");
    ASSERT_TRUE(up.wait_for("started", 3)) << "a child per session, started as it begins: " << up.log_text();
    auto const call = legacy_request(1, "tools/call", call_params("pid"));
    auto const pid_a = first_text(result_of(only_message(a.post(call))));
    auto const pid_b = first_text(result_of(only_message(b.post(call))));
    EXPECT_NE(pid_a, pid_b);
    EXPECT_EQ(
        first_text(result_of(only_message(a.post(legacy_request(2, "tools/call", call_params("pid")))))),
        pid_a)
        << "the session's calls go to its own child";
    EXPECT_TRUE(gw.wait_for_log("initialize legacy(2025-11-25) -> legacy(2025-11-25) upstream="))
        << gw.stderr_text();
    EXPECT_TRUE(gw.wait_for_log("initialize legacy(2025-06-18) -> legacy(2025-11-25) upstream="))
        << gw.stderr_text();

    // DELETE ends the session, its child and the log's account of it.
    request_spec del;
    del.method = "DELETE";
    del.headers = a.session_headers();
    auto const deleted = exchange(gw.ep(), del);
    EXPECT_EQ(deleted.status, 200u) << deleted.body;
    EXPECT_TRUE(gw.wait_for_log("session-end legacy(2025-11-25) -> legacy(2025-11-25) upstream="))
        << gw.stderr_text();
    a.expect_schema_valid();
    b.expect_schema_valid();
}

// A legacy session's own child dies mid-call: that call fails with -32603 naming the upstream (never a hang)
// and the session's next call is served by a child started again for it.
TEST(GatewayPool, ASessionsChildThatDiesIsStartedAgainForIt) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    announcing_upstream up;
    gateway_process gw(up.upstream(false), {"--era", "legacy"});
    mcp_http c(gw.ep());
    c.initialize("2025-11-25");
    auto const before =
        first_text(result_of(only_message(c.post(legacy_request(1, "tools/call", call_params("pid"))))));
    auto const crashed = only_message(c.post(legacy_request(2, "tools/call", call_params("crash"))));
    expect_error(crashed, -32603);
    EXPECT_NE(error_of(crashed).at("message").as_string().find("announcing_upstream.mjs"), std::string::npos)
        << crashed;
    auto const after =
        first_text(result_of(only_message(c.post(legacy_request(3, "tools/call", call_params("pid"))))));
    EXPECT_FALSE(after.empty());
    EXPECT_NE(after, before) << "the dead child served again?";
    c.expect_schema_valid();
}

TEST(GatewayPool, SharedSessionsUseThePool) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    announcing_upstream up;
    gateway_process gw(up.upstream(false), {"--era", "legacy", "--share-sessions"});
    mcp_http a(gw.ep());
    a.initialize("2025-11-25");
    auto const pid_a =
        first_text(result_of(only_message(a.post(legacy_request(1, "tools/call", call_params("pid"))))));
    mcp_http b(gw.ep());
    b.initialize("2025-11-25");
    auto const pid_b =
        first_text(result_of(only_message(b.post(legacy_request(1, "tools/call", call_params("pid"))))));
    EXPECT_EQ(pid_a, pid_b) << "one pooled child serves both sessions in turn";
    EXPECT_EQ(up.pids_that("started").size(), 2u) << up.log_text(); // control + one pooled
    EXPECT_TRUE(gw.wait_for_log("initialize legacy(2025-11-25) -> legacy(2025-11-25)")) << gw.stderr_text();
}

TEST(GatewayPool, AModernUpstreamServesLegacySessionsFromThePool) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    announcing_upstream up;
    gateway_process gw(up.upstream(true), {"--era", "modern"});
    mcp_http a(gw.ep());
    a.initialize("2025-11-25");
    EXPECT_TRUE(gw.wait_for_log("initialize legacy(2025-11-25) -> modern(2026-07-28)")) << gw.stderr_text();
    auto const pid_a =
        first_text(result_of(only_message(a.post(legacy_request(1, "tools/call", call_params("pid"))))));
    EXPECT_FALSE(pid_a.empty());
    EXPECT_EQ(up.pids_that("started").size(), 2u) << "a modern server keeps no sessions: " << up.log_text();
    a.expect_schema_valid();
}

} // namespace
