// `duet gateway --config FILE` reloading its file while it serves, the real binary in front of `duet serve
// --stdio` upstreams: on SIGHUP and when the file changes on disk (polled), upstreams added start, removed
// ones answer 404 and drain (their calls in flight answered) and their children exit, changed ones restart on
// new children (a legacy session of one going on with the new upstream), untouched ones keep their legacy
// sessions, their listens and their calls in flight, and one the reload cannot reach is not added or keeps
// running; merged, the tool list follows the file and listens hear list_changed, and a filter change applies
// without a restart; a bad file is refused in words naming the key and the running configuration stays; a
// change of what a reload cannot change (gateway.port) is said not to take effect until a restart.
//
// Each upstream's children carry a marker in their environment (DUET_RELOAD_TEST=<test dir>#<name>), so the
// tests find them in /proc. Files a test writes for SIGHUP keep the old file's modification time, so the
// gateway's poll of the file never reloads it on its own and only the SIGHUP's reload is logged.
#include "gateway/gateway_process.hpp"
#include "http/mcp_http.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "support/test_certs.hpp"
#include "unit/server/mrtr_support.hpp"

#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace gateway_reload_tests {

namespace json = boost::json;
namespace fs = std::filesystem;
using namespace duet::test;
using namespace duet::test::http;
using namespace duet::test::gateway;

constexpr std::string_view marker_variable = "DUET_RELOAD_TEST";

// Waits (polling, bounded) until `done` holds.
bool eventually(std::function<bool()> const& done, std::chrono::milliseconds limit = wait_limit) {
    auto const deadline = std::chrono::steady_clock::now() + limit;
    while (!done()) {
        if (std::chrono::steady_clock::now() >= deadline)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
}

std::size_t count_of(std::string const& text, std::string const& needle) {
    std::size_t n = 0;
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size()))
        ++n;
    return n;
}

// The running processes whose environment holds DUET_RELOAD_TEST=`mark` (a zombie's environment reads
// empty: it counts as gone).
std::set<pid_t> processes_marked(std::string const& mark) {
    std::string const wanted = std::string(marker_variable) + "=" + mark;
    std::set<pid_t> out;
    std::error_code ec;
    for (auto const& entry : fs::directory_iterator("/proc", ec)) {
        auto const name = entry.path().filename().string();
        if (name.empty() ||
            !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }))
            continue;
        std::ifstream in(entry.path() / "environ", std::ios::binary);
        std::stringstream text;
        text << in.rdbuf();
        auto const environ = text.str();
        std::size_t from = 0;
        while (from < environ.size()) {
            auto to = environ.find('\0', from);
            if (to == std::string::npos)
                to = environ.size();
            if (environ.compare(from, to - from, wanted) == 0) {
                out.insert(static_cast<pid_t>(std::stol(name)));
                break;
            }
            from = to + 1;
        }
    }
    return out;
}

// A config file in a directory of its own, rewritten whole (a new file renamed over the old one, so the
// gateway never reads half of it).
class config_file {
public:
    // Written (empty) now; a test writes what the gateway starts with by replace_quietly().
    config_file() : path_((dir_.path() / "gateway.json").string()) { std::ofstream(path_) << "{}"; }
    [[nodiscard]] std::string const& path() const noexcept { return path_; }

    // What a child of upstream `name` carries in its environment.
    [[nodiscard]] std::string mark(std::string const& name) const {
        return dir_.path().string() + "#" + name;
    }

    // The demo server on stdio as upstream `name`, `extra` after `serve --stdio`, marked.
    [[nodiscard]] json::object demo(std::string const& name,
                                    std::vector<std::string> const& extra = {}) const {
        json::array args{"serve", "--stdio"};
        for (auto const& a : extra)
            args.emplace_back(a);
        return {
            {"command", DUET_BINARY}, {"args", std::move(args)}, {"env", {{marker_variable, mark(name)}}}};
    }

    // Replaced with the old file's modification time: the gateway's poll sees no change, only a SIGHUP reads
    // it.
    void replace_quietly(std::string const& text) const { replace(text, /*keep_stamp=*/true); }
    void replace_quietly(json::object const& config) const { replace_quietly(json::serialize(config)); }
    // Replaced with a modification time of its own: the gateway's poll sees the change.
    void replace_visibly(std::string const& text) const { replace(text, /*keep_stamp=*/false); }
    void replace_visibly(json::object const& config) const { replace_visibly(json::serialize(config)); }

private:
    void replace(std::string const& text, bool keep_stamp) const {
        auto const old_stamp = fs::last_write_time(path_);
        auto const next = path_ + ".next";
        std::ofstream(next) << text;
        auto stamp = fs::last_write_time(next);
        if (keep_stamp)
            stamp = old_stamp;
        else if (stamp <= old_stamp)
            stamp = old_stamp + std::chrono::seconds(1);
        fs::last_write_time(next, stamp);
        fs::rename(next, path_);
    }

    temp_dir dir_;
    std::string path_;
};

// The gateway's own keys every test's file has: port 0 (no --port flag, so the file's port is the one that
// counts), and `more`.
json::object gateway_keys(json::object more = {}) {
    if (!more.contains("port"))
        more["port"] = 0;
    return more;
}

json::object config_of(json::object servers, json::object gateway = {}) {
    return {{"mcpServers", std::move(servers)}, {"gateway", gateway_keys(std::move(gateway))}};
}

// `duet gateway --config FILE` (no other flag), serving once it said that SIGHUP reloads it (before that, a
// SIGHUP would end it).
class reloading_gateway {
public:
    explicit reloading_gateway(config_file const& file)
        : child_({DUET_BINARY, "gateway", "--config", file.path()}, child_process::input::null) {
        auto const url = first_stdout_line(child_);
        if (url.empty()) {
            ADD_FAILURE() << "the gateway printed no URL; its stderr:\n" << child_.stderr_text();
            return;
        }
        ep_ = endpoint::parse(url);
        EXPECT_TRUE(wait_for_log("SIGHUP or a change of " + file.path() + " reloads it")) << log();
    }
    ~reloading_gateway() {
        child_.signal(SIGTERM);
        child_.wait_exit(wait_limit);
    }
    reloading_gateway(reloading_gateway const&) = delete;
    reloading_gateway& operator=(reloading_gateway const&) = delete;

    // The first URL it printed.
    [[nodiscard]] endpoint const& ep() const noexcept { return ep_; }
    // The endpoint of upstream `name` (unmerged: PATH/NAME).
    [[nodiscard]] endpoint at(std::string const& name) const {
        auto e = ep_;
        e.path = "/mcp/" + name;
        return e;
    }
    [[nodiscard]] std::string log() const { return child_.stderr_text(); }
    [[nodiscard]] bool running() const { return ::kill(child_.pid(), 0) == 0; }

    void hang_up() const { EXPECT_EQ(::kill(child_.pid(), SIGHUP), 0); }

    bool wait_for_log(std::string const& text, std::chrono::milliseconds limit = wait_limit) const {
        return wait_for_count(text, 1, limit);
    }
    // Until `text` has been logged `n` times.
    bool wait_for_count(std::string const& text, std::size_t n,
                        std::chrono::milliseconds limit = wait_limit) const {
        return eventually([&] { return count_of(log(), text) >= n; }, limit);
    }

private:
    child_process child_;
    endpoint ep_;
};

std::string const reloaded_by_sighup = "reloaded (SIGHUP): ";

// What `echo` at `ep` answers a modern call ("" and a failure when it does not answer).
std::string echo(endpoint const& ep, std::string const& text, std::string const& tool = "echo") {
    mcp_http c(ep);
    auto const r = c.post(modern_request(1, "tools/call", call_params(tool, {{"text", text}})));
    EXPECT_EQ(r.status, 200u) << r.body;
    if (r.status != 200)
        return {};
    return call_text(only_message(r));
}

// The names tools/list gives at `ep` (every page).
std::set<std::string> tool_names(endpoint const& ep) {
    mcp_http c(ep);
    std::set<std::string> names;
    std::string cursor;
    for (int page = 0; page < 50; ++page) {
        json::object params;
        if (!cursor.empty())
            params["cursor"] = cursor;
        auto const r = result_of(only_message(c.post(modern_request(page + 1, "tools/list", params))));
        if (auto const* tools = r.if_contains("tools"); tools && tools->is_array())
            for (auto const& t : tools->get_array())
                names.insert(std::string(t.at("name").as_string()));
        auto const* next = r.if_contains("nextCursor");
        if (!next || !next->is_string() || next->get_string().empty())
            break;
        cursor = std::string(next->get_string());
    }
    return names;
}

std::string method_of(json::value const& m) {
    auto const* o = m.if_object();
    auto const* method = o ? o->if_contains("method") : nullptr;
    return method && method->is_string() ? std::string(method->get_string()) : std::string();
}

// The next message on `s` that is `method`, past any other notification; null when the stream ended first.
json::value next_with_method(mcp_http& c, response_stream& s, std::string const& method) {
    for (;;) {
        auto m = c.next(s);
        if (m.is_null() || method_of(m) == method)
            return m;
        EXPECT_FALSE(m.as_object().contains("id")) << "a response or request before " << method << ": " << m;
    }
}

// The response to `id` on `s`, past the notifications and requests before it; null when the stream ended.
json::value response_on(mcp_http& c, response_stream& s, json::value const& id) {
    for (;;) {
        auto m = c.next(s);
        if (m.is_null() || is_response_to(m, id))
            return m;
    }
}

// A modern countdown from 20 (a call of about a second) asking for progress, opened as a stream.
std::unique_ptr<response_stream> open_countdown(mcp_http& c, int id) {
    auto params = call_params("countdown", {{"n", 20}});
    params["_meta"] = modern_meta({}, {{"progressToken", "countdown"}});
    return c.open(modern_request(id, "tools/call", std::move(params)));
}

// ---- unmerged: every upstream at /mcp/NAME
// --------------------------------------------------------------------------

// a (changed: modern-only, then legacy-only), b (removed), u (untouched, legacy-only, so a legacy session has
// an upstream session of its own); the reload adds c.
json::object before_reload(config_file const& f) {
    return config_of(
        {{"a", f.demo("a", {"--modern-only"})}, {"b", f.demo("b")}, {"u", f.demo("u", {"--legacy-only"})}});
}
json::object after_reload(config_file const& f) {
    return config_of(
        {{"a", f.demo("a", {"--legacy-only"})}, {"u", f.demo("u", {"--legacy-only"})}, {"c", f.demo("c")}});
}
std::string const reshaped = reloaded_by_sighup + "added c; removed b; restarted a";

// Rewrites the file as after_reload and sends SIGHUP; true once the gateway logged the reload.
bool reshape(config_file const& f, reloading_gateway const& gw) {
    f.replace_quietly(after_reload(f));
    gw.hang_up();
    return gw.wait_for_log(reshaped);
}

TEST(GatewayReload, SighupStartsAnAddedUpstreamAtItsOwnPath) {
    config_file f;
    f.replace_quietly(before_reload(f));
    reloading_gateway gw(f);
    ASSERT_EQ(gw.ep().path, "/mcp/a") << gw.log();
    EXPECT_EQ(mcp_http(gw.at("c")).post(modern_request(1, "tools/list")).status, 404u);

    ASSERT_TRUE(reshape(f, gw)) << gw.log();
    EXPECT_TRUE(gw.wait_for_log("(modern 2026-07-28) at http://" + gw.ep().authority() + "/mcp/c"))
        << gw.log();
    EXPECT_EQ(echo(gw.at("c"), "new"), "new");
    EXPECT_FALSE(processes_marked(f.mark("c")).empty());
    EXPECT_EQ(count_of(gw.log(), "reloaded ("), 1u) << "only the SIGHUP reloads: " << gw.log();
}

TEST(GatewayReload, ARemovedUpstreamsPathAnswers404ForNewRequests) {
    config_file f;
    f.replace_quietly(before_reload(f));
    reloading_gateway gw(f);
    EXPECT_EQ(echo(gw.at("b"), "before"), "before");
    mcp_http session(gw.at("b"));
    ASSERT_EQ(session.initialize("2025-11-25").status, 200u);

    ASSERT_TRUE(reshape(f, gw)) << gw.log();
    mcp_http c(gw.at("b"));
    auto const r = c.post(modern_request(1, "tools/call", call_params("echo", {{"text", "after"}})));
    EXPECT_EQ(r.status, 404u) << r.body;
    EXPECT_NE(r.body.find("no MCP endpoint at /mcp/b"), std::string::npos) << r.body;
    auto const init = mcp_http(gw.at("b")).post(initialize_request(1, "2025-11-25"));
    EXPECT_EQ(init.status, 404u) << init.body;
    // A legacy session opened there before: its endpoint is gone.
    auto const in_session = session.post(legacy_request(2, "tools/list"));
    EXPECT_EQ(in_session.status, 404u) << in_session.body;
    // The others answer.
    EXPECT_EQ(echo(gw.at("a"), "a"), "a");
    EXPECT_EQ(echo(gw.at("u"), "u"), "u");
}

TEST(GatewayReload, AChangedUpstreamRestartsOnNewChildren) {
    config_file f;
    f.replace_quietly(before_reload(f));
    reloading_gateway gw(f);
    EXPECT_EQ(echo(gw.at("a"), "before"), "before");
    EXPECT_TRUE(gw.wait_for_log("(modern 2026-07-28) at /mcp/a")) << gw.log();
    auto const old_children = processes_marked(f.mark("a"));
    ASSERT_FALSE(old_children.empty());

    ASSERT_TRUE(reshape(f, gw)) << gw.log();
    EXPECT_EQ(echo(gw.at("a"), "after"), "after");
    // Now legacy-only upstream: the gateway speaks the legacy era to it.
    EXPECT_TRUE(gw.wait_for_log("tools/call modern(2026-07-28) -> legacy(2025-11-25) upstream=a="))
        << gw.log();
    EXPECT_TRUE(eventually([&] {
        auto const now = processes_marked(f.mark("a"));
        return !now.empty() && std::none_of(old_children.begin(), old_children.end(),
                                            [&](pid_t p) { return now.contains(p); });
    })) << "the old children of a still run";
}

// u is untouched: its legacy session (with an upstream session of its own) keeps its Mcp-Session-Id, a call
// of it waiting on the client's answer across the reload completes, later calls in it succeed, and its GET
// stream stays open and hears the reload's list_changed.
TEST(GatewayReload, AnUntouchedUpstreamsLegacySessionSurvivesAReload) {
    config_file f;
    f.replace_quietly(before_reload(f));
    reloading_gateway gw(f);
    mcp_http c(gw.at("u"));
    ASSERT_EQ(c.initialize("2025-11-25", all_caps()).status, 200u);
    auto const session = c.session_id();
    ASSERT_TRUE(session);
    expect_legacy_result(
        only_message(c.post(legacy_request(1, "tools/call", call_params("echo", {{"text", "x"}})))));
    auto get = c.open_spec(stream_spec(c));
    ASSERT_EQ(get->status(), 200u);

    // A call waiting on the client across the reload: the upstream asks for a name on the call's stream.
    auto asking = c.open(legacy_request(2, "tools/call", call_params("ask_name")));
    auto const ask = c.next_server_request(*asking, "elicitation/create");
    ASSERT_TRUE(is_server_request(ask, "elicitation/create")) << ask;

    ASSERT_TRUE(reshape(f, gw)) << gw.log();

    EXPECT_EQ(c.post(client_response(ask.at("id"), accepted("name", "Grace"))).status, 202u);
    auto const greeted = response_on(c, *asking, 2);
    EXPECT_EQ(call_text(greeted), "Hello, Grace!") << greeted;

    auto const after = c.post(legacy_request(3, "tools/call", call_params("echo", {{"text", "still here"}})));
    EXPECT_EQ(after.status, 200u) << after.body;
    EXPECT_EQ(call_text(only_message(after)), "still here");
    EXPECT_EQ(c.session_id(), session);

    auto const changed = next_with_method(c, *get, "notifications/tools/list_changed");
    EXPECT_EQ(method_of(changed), "notifications/tools/list_changed") << "the GET stream ended";
    EXPECT_FALSE(get->ended());
    c.expect_schema_valid();
}

TEST(GatewayReload, AnUntouchedUpstreamsListenStaysOpenAndHearsTheReload) {
    config_file f;
    f.replace_quietly(before_reload(f));
    reloading_gateway gw(f);
    mcp_http c(gw.at("u"));
    auto listen = c.open(listen_request("L"));
    ASSERT_EQ(listen->status(), 200u);
    EXPECT_EQ(method_of(c.next(*listen)), "notifications/subscriptions/acknowledged");

    ASSERT_TRUE(reshape(f, gw)) << gw.log();

    auto const changed = next_with_method(c, *listen, "notifications/tools/list_changed");
    ASSERT_EQ(method_of(changed), "notifications/tools/list_changed") << "the listen ended";
    EXPECT_EQ(subscription_id_of(changed), json::value("L")) << changed;
    EXPECT_FALSE(listen->ended());
    c.expect_schema_valid();
}

TEST(GatewayReload, AnUntouchedUpstreamsCallInFlightCompletesThroughAReload) {
    config_file f;
    f.replace_quietly(before_reload(f));
    reloading_gateway gw(f);
    mcp_http c(gw.at("u"));
    auto call = open_countdown(c, 1);
    ASSERT_EQ(call->status(), 200u);
    auto const first = next_with_method(c, *call, "notifications/progress"); // it is at the upstream
    ASSERT_EQ(method_of(first), "notifications/progress") << first;

    ASSERT_TRUE(reshape(f, gw)) << gw.log();

    auto const done = response_on(c, *call, 1);
    EXPECT_EQ(call_text(done), "liftoff after 20 steps") << done;
}

// a (legacy-only, so its legacy session has an upstream session of its own) restarts: the session goes on,
// keeping its Mcp-Session-Id, served by the new upstream (which asks the session's client directly), and the
// old upstream's shared children (those that serve no session) are closed.
TEST(GatewayReload, ALegacySessionOfARestartedUpstreamGoesOnWithTheNewUpstream) {
    config_file f;
    f.replace_quietly(config_of({{"a", f.demo("a", {"--legacy-only"})}}));
    reloading_gateway gw(f);
    auto const shared_children = processes_marked(f.mark("a")); // before any session
    ASSERT_FALSE(shared_children.empty());
    mcp_http c(gw.at("a"));
    ASSERT_EQ(c.initialize("2025-11-25", all_caps()).status, 200u);
    auto const session = c.session_id();
    EXPECT_EQ(call_text(only_message(
                  c.post(legacy_request(1, "tools/call", call_params("echo", {{"text", "before"}}))))),
              "before");

    f.replace_quietly(config_of({{"a", f.demo("a", {"--legacy-only", "--max-sessions", "5"})}}));
    gw.hang_up();
    ASSERT_TRUE(gw.wait_for_log(reloaded_by_sighup + "added none; removed none; restarted a")) << gw.log();
    EXPECT_TRUE(eventually([&] {
        auto const now = processes_marked(f.mark("a"));
        return std::none_of(shared_children.begin(), shared_children.end(),
                            [&](pid_t p) { return now.contains(p); });
    })) << "the old upstream's children still run";

    auto const after = c.post(legacy_request(2, "tools/call", call_params("echo", {{"text", "after"}})));
    EXPECT_EQ(after.status, 200u) << after.body;
    EXPECT_EQ(call_text(only_message(after)), "after");
    EXPECT_EQ(c.session_id(), session);
    EXPECT_TRUE(gw.wait_for_log("tools/call legacy(2025-11-25) -> legacy(2025-11-25) upstream=a=" DUET_BINARY
                                " serve --stdio --legacy-only --max-sessions 5"))
        << gw.log();
    auto asking = c.open(legacy_request(3, "tools/call", call_params("ask_name")));
    auto const ask = c.next_server_request(*asking, "elicitation/create");
    ASSERT_TRUE(is_server_request(ask, "elicitation/create")) << ask;
    EXPECT_EQ(c.post(client_response(ask.at("id"), accepted("name", "Ada"))).status, 202u);
    auto const greeted = response_on(c, *asking, 3);
    EXPECT_EQ(call_text(greeted), "Hello, Ada!") << greeted;
    c.expect_schema_valid();
}

// The child the old upstream opened for a legacy session (at its initialize) closes with the old upstream:
// the session's calls go to the new one, and nothing would end the old child before the session does.
TEST(GatewayReload, ARestartedUpstreamsSessionChildExitsAfterTheDrain) {
    config_file f;
    f.replace_quietly(config_of({{"a", f.demo("a", {"--legacy-only"})}}));
    reloading_gateway gw(f);
    mcp_http c(gw.at("a"));
    ASSERT_EQ(c.initialize("2025-11-25").status, 200u);
    EXPECT_EQ(call_text(only_message(
                  c.post(legacy_request(1, "tools/call", call_params("echo", {{"text", "before"}}))))),
              "before");
    auto const old_children = processes_marked(f.mark("a")); // the session's own among them

    f.replace_quietly(config_of({{"a", f.demo("a", {"--legacy-only", "--max-sessions", "5"})}}));
    gw.hang_up();
    ASSERT_TRUE(gw.wait_for_log(reloaded_by_sighup + "added none; removed none; restarted a")) << gw.log();
    EXPECT_EQ(call_text(only_message(
                  c.post(legacy_request(2, "tools/call", call_params("echo", {{"text", "after"}}))))),
              "after");
    EXPECT_TRUE(eventually([&] {
        auto const now = processes_marked(f.mark("a"));
        return std::none_of(old_children.begin(), old_children.end(),
                            [&](pid_t p) { return now.contains(p); });
    })) << "a child of the old upstream still runs";
}

// A removed upstream's child of a legacy session closes after the drain: the session's client cannot end it
// (its DELETE answers 404, the path being gone), and the session might last an hour.
TEST(GatewayReload, ARemovedUpstreamsSessionChildExitsAfterTheDrain) {
    config_file f;
    f.replace_quietly(config_of({{"a", f.demo("a")}, {"b", f.demo("b", {"--legacy-only"})}}));
    reloading_gateway gw(f);
    mcp_http c(gw.at("b"));
    ASSERT_EQ(c.initialize("2025-11-25").status, 200u);
    EXPECT_EQ(call_text(only_message(
                  c.post(legacy_request(1, "tools/call", call_params("echo", {{"text", "before"}}))))),
              "before");

    f.replace_quietly(config_of({{"a", f.demo("a")}}));
    gw.hang_up();
    ASSERT_TRUE(gw.wait_for_log(reloaded_by_sighup + "added none; removed b; restarted none")) << gw.log();
    EXPECT_TRUE(eventually([&] { return processes_marked(f.mark("b")).empty(); }))
        << "a child of the removed upstream still runs";
}

// b is removed with a call in flight: the call is answered, then b's children exit (the gateway closes them).
TEST(GatewayReload, ARemovedUpstreamDrainsItsCallThenItsChildrenExit) {
    config_file f;
    f.replace_quietly(before_reload(f));
    reloading_gateway gw(f);
    EXPECT_EQ(echo(gw.at("b"), "b"), "b");
    auto const children = processes_marked(f.mark("b"));
    ASSERT_FALSE(children.empty());
    mcp_http c(gw.at("b"));
    auto call = open_countdown(c, 1);
    ASSERT_EQ(call->status(), 200u);
    auto const first = next_with_method(c, *call, "notifications/progress");
    ASSERT_EQ(method_of(first), "notifications/progress") << first;

    ASSERT_TRUE(reshape(f, gw)) << gw.log();

    auto const done = response_on(c, *call, 1);
    EXPECT_EQ(call_text(done), "liftoff after 20 steps") << done;
    EXPECT_TRUE(eventually([&] { return processes_marked(f.mark("b")).empty(); }))
        << "b's children still run after the drain";
    EXPECT_FALSE(processes_marked(f.mark("u")).empty());
    EXPECT_TRUE(gw.running());
}

// ---- merged: one endpoint, tools as NAME__TOOL
// ----------------------------------------------------------------------

json::object merged(json::object servers) {
    return config_of(std::move(servers), {{"merge", true}});
}

TEST(GatewayReload, MergedAnAddedUpstreamsToolsAppearAndAListenHearsListChanged) {
    config_file f;
    f.replace_quietly(merged({{"x", f.demo("x")}}));
    reloading_gateway gw(f);
    ASSERT_EQ(gw.ep().path, "/mcp") << gw.log();
    auto const before = tool_names(gw.ep());
    EXPECT_TRUE(before.contains("x__echo"));
    EXPECT_FALSE(before.contains("z__echo"));
    mcp_http c(gw.ep());
    auto listen = c.open(listen_request("L"));
    ASSERT_EQ(listen->status(), 200u);
    EXPECT_EQ(method_of(c.next(*listen)), "notifications/subscriptions/acknowledged");

    f.replace_quietly(merged({{"x", f.demo("x")}, {"z", f.demo("z", {"--legacy-only"})}}));
    gw.hang_up();
    ASSERT_TRUE(gw.wait_for_log(reloaded_by_sighup + "added z; removed none; restarted none")) << gw.log();

    auto const changed = next_with_method(c, *listen, "notifications/tools/list_changed");
    EXPECT_EQ(method_of(changed), "notifications/tools/list_changed") << "the listen ended";
    auto const after = tool_names(gw.ep());
    EXPECT_TRUE(after.contains("x__echo"));
    EXPECT_TRUE(after.contains("z__echo"));
    EXPECT_TRUE(after.contains("z__countdown"));
    EXPECT_EQ(echo(gw.ep(), "via z", "z__echo"), "via z");
    c.expect_schema_valid();
}

TEST(GatewayReload, MergedARemovedUpstreamsToolsDisappearAndACallToOneIsUnknown) {
    config_file f;
    f.replace_quietly(merged({{"x", f.demo("x")}, {"y", f.demo("y")}}));
    reloading_gateway gw(f);
    EXPECT_TRUE(tool_names(gw.ep()).contains("y__echo"));
    EXPECT_EQ(echo(gw.ep(), "via y", "y__echo"), "via y");

    f.replace_quietly(merged({{"x", f.demo("x")}}));
    gw.hang_up();
    ASSERT_TRUE(gw.wait_for_log(reloaded_by_sighup + "added none; removed y; restarted none")) << gw.log();

    auto const after = tool_names(gw.ep());
    EXPECT_TRUE(after.contains("x__echo"));
    EXPECT_TRUE(std::none_of(after.begin(), after.end(), [](auto const& n) { return n.starts_with("y__"); }))
        << "y's tools are still listed";
    mcp_http c(gw.ep());
    auto const r =
        only_message(c.post(modern_request(1, "tools/call", call_params("y__echo", {{"text", "t"}}))));
    expect_error(r, -32602);
    EXPECT_NE(error_of(r).at("message").as_string().find("Unknown tool"), std::string::npos) << r;
    EXPECT_EQ(echo(gw.ep(), "via x", "x__echo"), "via x");
    EXPECT_TRUE(eventually([&] { return processes_marked(f.mark("y")).empty(); }))
        << "y's children still run";
}

TEST(GatewayReload, MergedAFilterChangeAppliesWithoutRestartingTheUpstream) {
    config_file f;
    f.replace_quietly(merged({{"x", f.demo("x")}, {"y", f.demo("y")}}));
    reloading_gateway gw(f);
    EXPECT_EQ(echo(gw.ep(), "before", "x__echo"), "before");
    auto const children = processes_marked(f.mark("x"));
    ASSERT_FALSE(children.empty());

    auto x = f.demo("x");
    x["tools"] = json::object{{"deny", json::array{"echo"}}};
    f.replace_quietly(merged({{"x", x}, {"y", f.demo("y")}}));
    gw.hang_up();
    ASSERT_TRUE(gw.wait_for_log(reloaded_by_sighup + "added none; removed none; restarted none")) << gw.log();

    auto const after = tool_names(gw.ep());
    EXPECT_FALSE(after.contains("x__echo"));
    EXPECT_TRUE(after.contains("x__add"));
    EXPECT_TRUE(after.contains("y__echo"));
    mcp_http c(gw.ep());
    auto const r =
        only_message(c.post(modern_request(1, "tools/call", call_params("x__echo", {{"text", "t"}}))));
    expect_error(r, -32602);
    auto const sum =
        only_message(c.post(modern_request(2, "tools/call", call_params("x__add", {{"a", 2}, {"b", 3}}))));
    EXPECT_FALSE(is_error_result(result_of(sum))) << sum;
    // The same children serve x.
    auto const now = processes_marked(f.mark("x"));
    for (auto const pid : children)
        EXPECT_TRUE(now.contains(pid)) << "x's child " << pid << " was replaced";
}

// ---- what starts a reload, and what it refuses
// ----------------------------------------------------------------------

TEST(GatewayReload, AChangedFileIsReloadedWithoutSighup) {
    config_file f;
    f.replace_quietly(config_of({{"a", f.demo("a")}}));
    reloading_gateway gw(f);
    EXPECT_EQ(echo(gw.at("a"), "a"), "a");

    f.replace_visibly(config_of({{"a", f.demo("a")}, {"c", f.demo("c")}}));
    ASSERT_TRUE(gw.wait_for_log("reloaded (" + f.path() + " changed): added c; removed none; restarted none",
                                std::chrono::seconds(10)))
        << gw.log();
    EXPECT_EQ(echo(gw.at("c"), "c"), "c");
    EXPECT_EQ(echo(gw.at("a"), "a"), "a");
}

// A JSON syntax error (on SIGHUP), then an unknown key (the file changed): each refused naming what is wrong,
// the old upstreams answering; then a good file is applied.
TEST(GatewayReload, ABadFileIsRefusedInWordsAndTheRunningConfigurationStays) {
    config_file f;
    f.replace_quietly(config_of({{"a", f.demo("a")}, {"b", f.demo("b")}}));
    reloading_gateway gw(f);

    f.replace_quietly("{\"mcpServers\": {\"a\": ,}}");
    gw.hang_up();
    ASSERT_TRUE(gw.wait_for_log("reload (SIGHUP) refused; the running configuration stays:")) << gw.log();
    EXPECT_TRUE(gw.wait_for_log("duet gateway:   " + f.path() + ": line 1, column ")) << gw.log();
    EXPECT_TRUE(gw.wait_for_log(": not JSON")) << gw.log();
    EXPECT_EQ(echo(gw.at("a"), "a"), "a");
    EXPECT_EQ(echo(gw.at("b"), "b"), "b");

    auto typo = f.demo("c");
    typo["comand"] = "x";
    f.replace_visibly(config_of({{"a", f.demo("a")}, {"c", typo}}));
    ASSERT_TRUE(gw.wait_for_log("reload (" + f.path() + " changed) refused; the running configuration stays:",
                                std::chrono::seconds(10)))
        << gw.log();
    EXPECT_TRUE(gw.wait_for_log("duet gateway:   " + f.path() + ": mcpServers.c.comand: unknown key"))
        << gw.log();
    EXPECT_EQ(echo(gw.at("a"), "a"), "a");
    EXPECT_EQ(echo(gw.at("b"), "b"), "b");
    EXPECT_EQ(mcp_http(gw.at("c")).post(modern_request(1, "tools/list")).status, 404u);
    EXPECT_EQ(count_of(gw.log(), "reloaded ("), 0u) << gw.log();

    f.replace_quietly(config_of({{"a", f.demo("a")}, {"c", f.demo("c")}}));
    gw.hang_up();
    ASSERT_TRUE(gw.wait_for_log(reloaded_by_sighup + "added c; removed b; restarted none")) << gw.log();
    EXPECT_EQ(echo(gw.at("c"), "c"), "c");
}

// A reload whose new upstream, or changed one, cannot be reached: the new one is not added, the changed one
// keeps running as it was, and the rest of the file applies.
TEST(GatewayReload, AnUpstreamTheReloadCannotReachIsNotAddedOrKeepsRunning) {
    config_file f;
    f.replace_quietly(config_of({{"a", f.demo("a")}, {"b", f.demo("b")}}));
    reloading_gateway gw(f);
    auto const children = processes_marked(f.mark("a"));
    ASSERT_FALSE(children.empty());

    f.replace_quietly(config_of(
        {{"a", {{"command", "/nonexistent/a-server"}}}, {"c", {{"command", "/nonexistent/c-server"}}}}));
    gw.hang_up();
    ASSERT_TRUE(gw.wait_for_log(reloaded_by_sighup + "added none; removed b; restarted none")) << gw.log();
    EXPECT_NE(gw.log().find("reload: cannot reach the upstream a = "), std::string::npos) << gw.log();
    EXPECT_NE(gw.log().find("; the running one stays"), std::string::npos) << gw.log();
    EXPECT_NE(gw.log().find("reload: cannot reach the upstream c = "), std::string::npos) << gw.log();
    EXPECT_NE(gw.log().find("; not added"), std::string::npos) << gw.log();
    EXPECT_EQ(echo(gw.at("a"), "a"), "a");
    EXPECT_EQ(mcp_http(gw.at("b")).post(modern_request(1, "tools/list")).status, 404u);
    EXPECT_EQ(mcp_http(gw.at("c")).post(modern_request(1, "tools/list")).status, 404u);
    auto const now = processes_marked(f.mark("a"));
    for (auto const pid : children)
        EXPECT_TRUE(now.contains(pid)) << "a's child " << pid << " was replaced";
}

TEST(GatewayReload, APortChangeIsSaidToWaitForARestartAndTheOldPortKeepsServing) {
    config_file f;
    f.replace_quietly(config_of({{"a", f.demo("a")}}));
    reloading_gateway gw(f);
    EXPECT_EQ(echo(gw.at("a"), "before"), "before");

    f.replace_quietly(config_of({{"a", f.demo("a")}}, {{"port", 1}}));
    gw.hang_up();
    ASSERT_TRUE(gw.wait_for_log(reloaded_by_sighup + "added none; removed none; restarted none")) << gw.log();
    EXPECT_NE(gw.log().find("reload: gateway.port changed; it takes effect when the gateway starts again"),
              std::string::npos)
        << gw.log();
    EXPECT_EQ(echo(gw.at("a"), "after"), "after");
}

} // namespace gateway_reload_tests
