// What a misbehaving upstream (tests/gateway/misbehaving_upstream.mjs) can cost `duet gateway`, and what a
// child may take from it. Each test has the gateway keep serving a well-behaved client within a bound, and
// checks that nothing leaks: the gateway's descriptors come back to what they were, and every child it let go
// is reaped.
//
//  - children inherit no descriptor of the gateway but their stdin, stdout and stderr, and only the
//    environment allowed (HOME, LOGNAME, PATH, SHELL, TERM, USER, LANG) and passed (--upstream-env);
//  - an answer over --max-upstream-message fails its call naming the upstream, and the child is replaced;
//  - a call the upstream never answers times out (--upstream-timeout), unless the upstream's progress for it
//    keeps coming; a call waiting for a busy pool gives up as long after, saying so; a child that never
//    reads fails its calls the same way and is replaced;
//  - a child's stderr reaches the gateway's log prefixed with the upstream's name, a long line cut, a flood
//    thinned, without slowing the gateway;
//  - legacy sessions with a child of their own are capped (--max-upstream-children): past it they share the
//    pool, or get 503 (--over-children refuse);
//  - calls parked for retries are capped (--max-parked-calls): one more drops the oldest, whose retry
//  replays.
#include "gateway/announcing_upstream.hpp"
#include "gateway/gateway_process.hpp"
#include "http/mcp_http.hpp"
#include "http/raw_socket.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "unit/server/mrtr_support.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace gateway_hardening {

namespace json = boost::json;
using namespace duet::test;
using namespace duet::test::http;
using namespace duet::test::gateway;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

std::string misbehaving_upstream() {
    return "stdio:" + pinned_node() + " " DUET_SOURCE_DIR "/tests/gateway/misbehaving_upstream.mjs";
}

// A modern tools/call through the gateway, and how long it took.
struct timed_answer {
    json::value message;
    milliseconds took{0};
};

timed_answer call_tool(mcp_http& c, int id, std::string const& tool, json::object arguments = {},
                       json::object params_extra = {}, json::object capabilities = {}) {
    auto params = call_params(tool, std::move(arguments));
    for (auto& kv : params_extra)
        params[kv.key()] = kv.value();
    auto const started = steady_clock::now();
    auto r =
        only_message(c.post(modern_request(id, "tools/call", std::move(params), std::move(capabilities))));
    return {std::move(r), std::chrono::duration_cast<milliseconds>(steady_clock::now() - started)};
}

std::string error_message(json::value const& response) {
    auto const* o = response.if_object();
    auto const* e = o ? o->if_contains("error") : nullptr;
    if (!e || !e->is_object())
        return {};
    auto const* m = e->get_object().if_contains("message");
    return m && m->is_string() ? std::string(m->get_string()) : std::string();
}

bool eventually(std::function<bool()> const& holds, milliseconds limit = milliseconds(15000)) {
    auto const deadline = steady_clock::now() + limit;
    while (!holds()) {
        if (steady_clock::now() >= deadline)
            return false;
        std::this_thread::sleep_for(milliseconds(50));
    }
    return true;
}

// What /proc/PID/fd says each open descriptor of a process is.
std::vector<std::string> descriptor_targets(pid_t pid) {
    std::vector<std::string> out;
    std::error_code ec;
    for (auto const& e : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
        std::error_code link_ec;
        auto target = std::filesystem::read_symlink(e.path(), link_ec);
        if (!link_ec)
            out.push_back(target.string());
    }
    return out;
}

std::size_t descriptor_count(pid_t pid) {
    return descriptor_targets(pid).size();
}

// The processes whose parent is `parent`, each with its state letter (Z: exited, not reaped).
std::vector<std::pair<pid_t, char>> children_of(pid_t parent) {
    std::vector<std::pair<pid_t, char>> out;
    std::error_code ec;
    for (auto const& e : std::filesystem::directory_iterator("/proc", ec)) {
        auto const name = e.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        std::ifstream in(e.path() / "stat");
        std::string stat;
        std::getline(in, stat);
        auto const close = stat.rfind(')'); // the command may hold spaces and parentheses
        if (close == std::string::npos || close + 4 > stat.size())
            continue;
        char const state = stat[close + 2];
        auto const ppid = std::atol(stat.c_str() + close + 4);
        if (ppid == parent)
            out.emplace_back(static_cast<pid_t>(std::stol(name)), state);
    }
    return out;
}

bool has_zombie_child(pid_t parent) {
    for (auto const& [pid, state] : children_of(parent))
        if (state == 'Z')
            return true;
    return false;
}

bool is_child(pid_t parent, std::string const& pid_text) {
    for (auto const& [pid, state] : children_of(parent))
        if (std::to_string(pid) == pid_text)
            return true;
    return false;
}

// The gateway's descriptors come back to `before` (or fewer: a client connection of the test's may have been
// closing when they were counted) and it holds no exited child: nothing leaked.
void expect_nothing_leaked(gateway_process const& gw, std::size_t before) {
    EXPECT_TRUE(eventually([&] { return descriptor_count(gw.pid()) <= before; }))
        << "descriptors before: " << before << ", now: " << descriptor_count(gw.pid());
    EXPECT_TRUE(eventually([&] { return !has_zombie_child(gw.pid()); })) << "an exited child was not reaped";
}

std::string pid_of(mcp_http& c, int id) {
    auto const r = call_tool(c, id, "pid");
    return first_text(result_of(r.message));
}

// ---- what a child inherits --------------------------------------------------------------------------------

TEST(GatewayChildren, InheritNoSocketOrPipeOfTheGateway) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    gateway_process gw(misbehaving_upstream(), {"--era", "legacy"});
    // A client connection held open while the child starts: the gateway holds it, and its listening socket.
    raw_socket held(gw.ep().port);
    mcp_http c(gw.ep());
    auto const r = call_tool(c, 1, "descriptors");
    auto const listed = json::parse(first_text(result_of(r.message)));
    std::set<std::string> gateway_side;
    for (auto const& t : descriptor_targets(gw.pid()))
        if (t.starts_with("socket:[") || t.starts_with("pipe:["))
            gateway_side.insert(t);
    ASSERT_FALSE(gateway_side.empty());
    std::size_t sockets_of_gateway = 0;
    for (auto const& t : gateway_side)
        sockets_of_gateway += t.starts_with("socket:[") ? 1 : 0;
    EXPECT_GE(sockets_of_gateway, 2u) << "the listening socket and the held connection, at least";
    for (auto const& d : listed.as_array()) {
        auto const fd = d.at("fd").to_number<int>();
        std::string const target(d.at("target").as_string());
        if (fd <= 2)
            continue; // its stdin, stdout and stderr: ours by design
        EXPECT_FALSE(gateway_side.contains(target))
            << "the child inherited descriptor " << fd << ": " << target;
    }
}

TEST(GatewayChildren, GetTheAllowedEnvironmentAndWhatIsPassedButNoOtherSecret) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    ::setenv("DUET_TEST_SECRET_TOKEN", "hunter2", 1);
    ::setenv("DUET_TEST_PASSED", "from-the-gateway", 1);
    gateway_process gw(misbehaving_upstream(), {"--era", "legacy", "--upstream-env", "DUET_TEST_PASSED",
                                                "--upstream-env", "DUET_TEST_SET=given"});
    ::unsetenv("DUET_TEST_SECRET_TOKEN");
    ::unsetenv("DUET_TEST_PASSED");
    mcp_http c(gw.ep());
    auto const r = call_tool(c, 1, "environment");
    auto const env = json::parse(first_text(result_of(r.message))).as_object();
    EXPECT_FALSE(env.contains("DUET_TEST_SECRET_TOKEN")) << env;
    EXPECT_EQ(env.at("DUET_TEST_PASSED"), "from-the-gateway") << env;
    EXPECT_EQ(env.at("DUET_TEST_SET"), "given") << env;
    ASSERT_TRUE(env.contains("PATH")) << env;
    EXPECT_EQ(std::string(env.at("PATH").as_string()), std::string(std::getenv("PATH")));
    std::set<std::string> const allowed{"HOME", "LOGNAME",          "PATH",         "SHELL", "TERM", "USER",
                                        "LANG", "DUET_TEST_PASSED", "DUET_TEST_SET"};
    for (auto const& kv : env)
        EXPECT_TRUE(allowed.contains(std::string(kv.key()))) << "the child got " << kv.key();
}

TEST(GatewayChildren, AnUpstreamEnvironmentEntryWithoutANameIsAUsageError) {
    child_process child({DUET_BINARY, "gateway", "--port", "0", "--upstream", "stdio:/nonexistent/server",
                         "--upstream-env", "=x"},
                        child_process::input::null);
    EXPECT_EQ(child.wait_exit(wait_limit), 2);
    EXPECT_NE(child.stderr_text().find("--upstream-env"), std::string::npos) << child.stderr_text();
}

// ---- what an upstream's answers may cost ------------------------------------------------------------------

TEST(GatewayUpstreamLimits, AnAnswerOverTheLimitFailsNamingTheUpstreamAndTheChildIsReplaced) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    gateway_process gw(misbehaving_upstream(), {"--era", "legacy"});
    mcp_http c(gw.ep());
    auto const first_pid = pid_of(c, 1);
    ASSERT_FALSE(first_pid.empty());
    auto const before = descriptor_count(gw.pid());

    auto const big = call_tool(c, 2, "big"); // 20 MiB, over the default 16 MiB
    expect_error(big.message, -32603);
    auto const said = error_message(big.message);
    EXPECT_NE(said.find("misbehaving_upstream.mjs"), std::string::npos) << said;
    EXPECT_NE(said.find("16777216 bytes"), std::string::npos) << said;
    EXPECT_LT(big.took, milliseconds(20000));

    auto const next = call_tool(c, 3, "pid");
    EXPECT_LT(next.took, milliseconds(10000));
    auto const second_pid = first_text(result_of(next.message));
    EXPECT_FALSE(second_pid.empty()) << next.message;
    EXPECT_NE(second_pid, first_pid) << "the child whose answer was left unread served again";
    EXPECT_TRUE(eventually([&] { return !is_child(gw.pid(), first_pid); })) << "the replaced child lingers";
    expect_nothing_leaked(gw, before);
}

TEST(GatewayUpstreamLimits, AnAnswerWithinALowerLimitStillComes) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    gateway_process gw(misbehaving_upstream(), {"--era", "legacy", "--max-upstream-message", "1MiB"});
    mcp_http c(gw.ep());
    auto const within = call_tool(c, 1, "big", {{"bytes", 512 * 1024}});
    EXPECT_EQ(first_text(result_of(within.message)).size(), 512u * 1024);
    auto const over = call_tool(c, 2, "big", {{"bytes", 2 * 1024 * 1024}});
    expect_error(over.message, -32603);
    EXPECT_NE(error_message(over.message).find("1048576 bytes"), std::string::npos) << over.message;
}

TEST(GatewayUpstreamLimits, ACallWithNoAnswerTimesOutAndTheNextIsServed) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    gateway_process gw(misbehaving_upstream(), {"--era", "legacy", "--upstream-timeout", "1"});
    mcp_http c(gw.ep());
    auto const first_pid = pid_of(c, 1);
    auto const before = descriptor_count(gw.pid());
    auto const hung = call_tool(c, 2, "hang");
    expect_error(hung.message, -32603);
    EXPECT_NE(error_message(hung.message).find("no answer within 1000 ms"), std::string::npos)
        << hung.message;
    EXPECT_NE(error_message(hung.message).find("misbehaving_upstream.mjs"), std::string::npos);
    EXPECT_GE(hung.took, milliseconds(900));
    EXPECT_LT(hung.took, milliseconds(10000));
    auto const next = call_tool(c, 3, "pid");
    EXPECT_LT(next.took, milliseconds(10000));
    EXPECT_NE(first_text(result_of(next.message)), first_pid) << "a timed-out child is never reused";
    expect_nothing_leaked(gw, before);
}

TEST(GatewayUpstreamLimits, TheUpstreamsProgressForACallExtendsItsTimeout) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    gateway_process gw(misbehaving_upstream(), {"--era", "legacy", "--upstream-timeout", "1"});
    mcp_http c(gw.ep());
    json::object const slow{{"total_ms", 2500}, {"every_ms", 200}};
    // The downstream client asks for progress: the upstream's progress restarts the wait, past 1 s.
    json::object with_token{{"_meta", modern_meta({}, {{"progressToken", "p1"}})}};
    auto const reported = call_tool(c, 1, "slow_progress", slow, with_token);
    EXPECT_NE(first_text(result_of(reported.message)).find("done after"), std::string::npos)
        << reported.message;
    // Without progress, the same call is over after 1 s.
    auto const silent = call_tool(c, 2, "slow_progress", slow);
    expect_error(silent.message, -32603);
    EXPECT_NE(error_message(silent.message).find("no answer within 1000 ms"), std::string::npos)
        << silent.message;
}

TEST(GatewayUpstreamLimits, ACallWaitingForABusyPoolGivesUpSayingSo) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    gateway_process gw(misbehaving_upstream(),
                       {"--era", "legacy", "--pool-size", "1", "--upstream-timeout", "2"});
    // Declaring elicitation, the calls cannot share an upstream session: one child, one call at a time.
    json::object const caps{{"elicitation", json::object{}}};
    json::value held;
    std::thread holder([&] {
        mcp_http h(gw.ep());
        json::object with_token{{"_meta", modern_meta(caps, {{"progressToken", "hold"}})}};
        held = call_tool(h, 1, "slow_progress", {{"total_ms", 6000}, {"every_ms", 300}}, with_token).message;
    });
    std::this_thread::sleep_for(milliseconds(1500)); // the holder has the only child by now
    mcp_http c(gw.ep());
    auto const waited = call_tool(c, 2, "pid", {}, {}, caps);
    holder.join();
    expect_error(waited.message, -32603);
    EXPECT_NE(error_message(waited.message).find("no connection to the upstream was free"), std::string::npos)
        << waited.message;
    EXPECT_GE(waited.took, milliseconds(1500));
    EXPECT_LT(waited.took, milliseconds(8000));
    EXPECT_NE(first_text(result_of(held)).find("done after"), std::string::npos) << held;
}

TEST(GatewayUpstreamLimits, AChildThatNeverReadsFailsItsCallAndIsReplaced) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    gateway_process gw(misbehaving_upstream(), {"--era", "legacy", "--upstream-timeout", "1"});
    mcp_http c(gw.ep());
    auto const deaf_pid = pid_of(c, 1);
    auto const before = descriptor_count(gw.pid());
    auto const deafened = call_tool(c, 2, "deaf");
    EXPECT_EQ(first_text(result_of(deafened.message)), "deaf from now on");
    // More than a pipe holds: the gateway's write to it cannot finish.
    auto const unheard = call_tool(c, 3, "pid", {{"padding", std::string(1024 * 1024, 'p')}});
    expect_error(unheard.message, -32603);
    EXPECT_LT(unheard.took, milliseconds(10000));
    auto const next = call_tool(c, 4, "pid");
    EXPECT_LT(next.took, milliseconds(10000));
    auto const next_pid = first_text(result_of(next.message));
    EXPECT_FALSE(next_pid.empty()) << next.message;
    EXPECT_NE(next_pid, deaf_pid);
    EXPECT_TRUE(eventually([&] { return !is_child(gw.pid(), deaf_pid); })) << "the deaf child was not ended";
    expect_nothing_leaked(gw, before);
}

// ---- a child's stderr
// --------------------------------------------------------------------------------------

TEST(GatewayChildStderr, ReachesTheLogPrefixedWithTheUpstreamsNameALongLineCut) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    gateway_process gw(
        std::vector<std::string>{"--upstream", "chatty=" + misbehaving_upstream(), "--era", "legacy"});
    mcp_http c(gw.ep());
    json::array lines{"hello from the child", std::string(5000, 'y')};
    auto const said = call_tool(c, 1, "say", {{"lines", lines}});
    EXPECT_EQ(first_text(result_of(said.message)), "said");
    ASSERT_TRUE(gw.wait_for_log("upstream=chatty=")) << gw.stderr_text();
    EXPECT_TRUE(gw.wait_for_log(" stderr: hello from the child")) << gw.stderr_text();
    EXPECT_TRUE(gw.wait_for_log(" stderr: " + std::string(2048, 'y') + " [cut]\n")) << "cut at 2 KiB";
    EXPECT_EQ(gw.stderr_text().find(std::string(2049, 'y')), std::string::npos);
}

TEST(GatewayChildStderr, AChildFloodingItDoesNotSlowTheGatewayNorFillTheLog) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    gateway_process gw(std::vector<std::string>{"--upstream", "flood=" + misbehaving_upstream(), "--upstream",
                                                "calm=" + demo_upstream("--legacy-only"), "--era", "legacy"});
    auto calm_ep = gw.ep();
    calm_ep.path = "/mcp/calm";
    mcp_http flooding(gw.ep());
    mcp_http calm(calm_ep);
    auto const started = call_tool(flooding, 1, "flood");
    EXPECT_EQ(first_text(result_of(started.message)), "flooding");
    auto const log_before = gw.stderr_text().size();
    auto const deadline = steady_clock::now() + milliseconds(3000);
    int id = 2;
    while (steady_clock::now() < deadline) {
        auto const r = call_tool(calm, id++, "echo", {{"text", "still here"}});
        EXPECT_EQ(first_text(result_of(r.message)), "still here");
        EXPECT_LT(r.took, milliseconds(3000)) << "a call to the calm upstream while the other floods";
    }
    EXPECT_GT(id, 4);
    auto const grown = gw.stderr_text().size() - log_before;
    EXPECT_LT(grown, 3u * 1024 * 1024) << "the flood reached the log unthinned";
    EXPECT_TRUE(gw.wait_for_log("more lines dropped")) << "the dropped lines are counted";
    EXPECT_TRUE(gw.wait_for_log(std::string(2048, 'L') + " [cut]"));
    // The flooding child itself still answers, slowed at most.
    auto const pid = call_tool(flooding, id++, "pid");
    EXPECT_FALSE(first_text(result_of(pid.message)).empty()) << pid.message;
    EXPECT_EQ(gw.stop(), 0) << "the gateway drains and ends the flooding child";
}

// ---- children of legacy sessions
// ---------------------------------------------------------------------------

TEST(GatewaySessionChildren, PastTheCapANewSessionIsRefusedWith503) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    gateway_process gw(misbehaving_upstream(),
                       {"--era", "legacy", "--max-upstream-children", "2", "--over-children", "refuse"});
    mcp_http a(gw.ep());
    mcp_http b(gw.ep());
    EXPECT_EQ(a.initialize("2025-11-25").status, 200u);
    EXPECT_EQ(b.initialize("2025-11-25").status, 200u);
    auto const third = post_spec(json::serialize(initialize_request("init", "2025-11-25")));
    auto const refused = exchange(gw.ep(), third);
    EXPECT_EQ(refused.status, 503u) << refused.body;
    EXPECT_NE(refused.body.find("retry later"), std::string::npos) << refused.body;
    EXPECT_FALSE(refused.header("Mcp-Session-Id")) << "no session began";

    // A session that ends gives its place back.
    request_spec del;
    del.method = "DELETE";
    del.headers = a.session_headers();
    EXPECT_EQ(exchange(gw.ep(), del).status, 200u);
    EXPECT_TRUE(eventually([&] { return exchange(gw.ep(), third).status == 200u; }));
}

TEST(GatewaySessionChildren, PastTheCapANewSessionSharesThePool) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    gateway_process gw(misbehaving_upstream(),
                       {"--era", "legacy", "--max-upstream-children", "1", "--over-children", "share"});
    auto const session_pid = [](mcp_http& s) {
        auto const r = only_message(s.post(legacy_request(1, "tools/call", call_params("pid"))));
        return first_text(result_of(r));
    };
    mcp_http a(gw.ep());
    mcp_http b(gw.ep());
    a.initialize("2025-11-25");
    b.initialize("2025-11-25");
    auto const own = session_pid(a);
    auto const shared = session_pid(b);
    EXPECT_FALSE(own.empty());
    EXPECT_FALSE(shared.empty());
    EXPECT_NE(own, shared);
    mcp_http modern(gw.ep());
    EXPECT_EQ(pid_of(modern, 2), shared) << "the second session is served by the pool's child";
    a.expect_schema_valid();
    b.expect_schema_valid();
}

// ---- calls parked for retries -----------------------------------------------------------------------------

TEST(GatewayParkedCalls, PastTheCapTheOldestIsDroppedAndItsRetryReplaysIt) {
    gateway_process gw("--legacy-only", {"--max-parked-calls", "1"});
    mcp_http c(gw.ep());
    auto const caps = all_caps();
    auto const params = call_params("ask_name");
    auto const first =
        expect_input_required(only_message(c.post(modern_request(1, "tools/call", params, caps))));
    auto const second =
        expect_input_required(only_message(c.post(modern_request(2, "tools/call", params, caps))));
    EXPECT_TRUE(gw.wait_for_log("the oldest was dropped")) << gw.stderr_text();
    auto const field = std::string(first.at("inputRequests")
                                       .at("name")
                                       .at("params")
                                       .at("requestedSchema")
                                       .at("properties")
                                       .as_object()
                                       .begin()
                                       ->key());
    auto const replayed = only_message(c.post(
        modern_request(3, "tools/call", retry(params, {{"name", accepted(field, "Ada")}}, first), caps)));
    EXPECT_NE(first_text(result_of(replayed)).find("Ada"), std::string::npos) << replayed;
    auto const parked = only_message(c.post(
        modern_request(4, "tools/call", retry(params, {{"name", accepted(field, "Grace")}}, second), caps)));
    EXPECT_NE(first_text(result_of(parked)).find("Grace"), std::string::npos) << parked;
    c.expect_schema_valid();
}

} // namespace gateway_hardening
