// The limits `duet gateway` keeps in front of its upstreams, the real binary driven over HTTP:
//
//  - rate limits: per caller (--rate-limit PER_SECOND/BURST, keyed by the caller's address) and per tool
//    (gateway.rateLimits.perTool, --tool-rate-limit TOOL=RATE): over the limit, HTTP 429 with Retry-After
//    and a JSON-RPC error under the request's id whose data says which limit; once the Retry-After has
//    passed, the call passes again; another caller, or another tool, is not held;
//  - the circuit breaker (circuitBreaker: failures, backoffSeconds): an upstream failing N calls in a row is
//    marked down, its calls answered at once with an error saying so (data.upstream, data.retryAfterSeconds)
//    and never forwarded, /readyz 503 while a required one is down (/healthz stays 200), an optional one
//    ("required": false) leaving /readyz 200; after the backoff a probe call goes through and, the upstream
//    working again, /readyz is 200 again;
//  - maxConcurrentCalls: calls beyond it wait for a slot (two calls of a slow tool run one after the other),
//    and one that waits longer than --upstream-timeout fails saying it had no free call slot;
//  - /healthz and /readyz answer GET and HEAD without the bearer token the MCP path requires, and an MCP
//    endpoint at "/" does not shadow them.
//
// Timing is asserted only as lower bounds (a timer never fires early) or with margins far beyond a loaded
// machine's delays; waits are for events, polled and bounded.
#include "gateway/announcing_upstream.hpp" // DUET_SKIP_WITHOUT_PINNED_NODE
#include "gateway/gateway_process.hpp"
#include "http/mcp_http.hpp"
#include "http/raw_socket.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "support/child_process.hpp"
#include "support/test_certs.hpp"
#include "support/wait.hpp"

#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace gateway_limits_tests {

namespace json = boost::json;
using namespace duet::test;
using namespace duet::test::http;
using namespace duet::test::gateway;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

std::string const crashing_script = DUET_SOURCE_DIR "/tests/gateway/crashing_upstream.mjs";

// A config file in a temporary directory of its own.
class limits_config {
public:
    limits_config(json::object servers, json::object gateway_keys = {}) {
        path_ = (dir_.path() / "gateway.json").string();
        json::object config{{"mcpServers", std::move(servers)}};
        if (!gateway_keys.empty())
            config["gateway"] = std::move(gateway_keys);
        std::ofstream(path_) << json::serialize(config);
    }
    [[nodiscard]] std::string const& path() const noexcept { return path_; }

private:
    temp_dir dir_;
    std::string path_;
};

json::object demo_server(json::object more = {}) {
    json::object o{{"command", DUET_BINARY}, {"args", json::array{"serve", "--stdio"}}};
    for (auto& kv : more)
        o[kv.key()] = kv.value();
    return o;
}

json::object crashing_server(json::object more = {}) {
    json::object o{{"command", pinned_node()},
                   {"args", json::array{json::value(json::string(crashing_script))}}};
    for (auto& kv : more)
        o[kv.key()] = kv.value();
    return o;
}

std::string error_message(json::value const& response) {
    auto const* o = response.if_object();
    auto const* e = o ? o->if_contains("error") : nullptr;
    auto const* m = e && e->is_object() ? e->get_object().if_contains("message") : nullptr;
    return m && m->is_string() ? std::string(m->get_string()) : std::string();
}

json::object error_data(json::value const& response) {
    auto const e = error_of(response);
    auto const* d = e.if_contains("data");
    return d && d->is_object() ? d->get_object() : json::object{};
}

// The endpoint `ep` with another path (a probe's, another upstream's).
endpoint at(endpoint ep, std::string path) {
    ep.path = std::move(path);
    return ep;
}

// The URL's endpoint with the path of the upstream `name` (unmerged gateways serve each at PATH/NAME).
endpoint upstream_at(gateway_process const& gw, std::string const& name) {
    return at(gw.ep(), "/mcp/" + name);
}

reply probe(endpoint const& ep, std::string const& path) {
    return exchange(ep, request_spec{.method = "GET", .target = path, .headers = {}, .body = {}});
}

// A HEAD of `path` on a connection of its own: the whole of what the server sent until it closed it.
std::string head_exchange(endpoint const& ep, std::string const& path) {
    raw_socket s(ep.port);
    EXPECT_TRUE(s.connected());
    s.send(raw_request(ep,
                       request_spec{.method = "HEAD", .target = path, .headers = {{"Connection", "close"}}}));
    std::string all;
    auto const give_up = steady_clock::now() + http_wait;
    while (steady_clock::now() < give_up)
        if (s.read_some(all, milliseconds(500)) == raw_socket::got::closed)
            return all;
    ADD_FAILURE() << "the server did not close the connection after the HEAD: " << all;
    return all;
}

// ---- rate limits --------------------------------------------------------------------------------

struct refused_at {
    std::size_t passed = 0;       ///< requests admitted before the refusal
    std::optional<reply> refusal; ///< the 429, if one came
    json::value request_id;       ///< the refused request's id
    milliseconds elapsed{0};      ///< from the first request sent to the refusal read
};

// Sends `make(id)` requests one after the other until one is refused (429), at most `limit`.
template<class Make>
refused_at send_until_refused(mcp_http& c, Make const& make, std::size_t limit, int first_id = 1) {
    refused_at out;
    auto const started = steady_clock::now();
    for (std::size_t i = 0; i < limit; ++i) {
        json::value const id = first_id + static_cast<int>(i);
        auto r = c.post(make(id));
        if (r.status == 429) {
            out.refusal = std::move(r);
            out.request_id = id;
            break;
        }
        EXPECT_EQ(r.status, 200u) << r.body;
        ++out.passed;
    }
    out.elapsed = std::chrono::duration_cast<milliseconds>(steady_clock::now() - started);
    return out;
}

// The most a bucket of `burst` refilling `per_second` admits over `elapsed` (a refusal after more than this
// means the limit did not hold).
std::size_t most_admitted(double per_second, double burst, milliseconds elapsed) {
    return static_cast<std::size_t>(std::floor(burst + per_second * (double(elapsed.count()) / 1000.0)));
}

// A 429 refusal: Retry-After >= 1, and the JSON-RPC error under the refused request's id naming `limit`.
void expect_refusal(refused_at const& r, std::string const& limit) {
    ASSERT_TRUE(r.refusal) << "no request was refused";
    auto const& reply = *r.refusal;
    auto const retry_after = reply.header("Retry-After");
    ASSERT_TRUE(retry_after) << reply.body;
    EXPECT_GE(std::stoi(*retry_after), 1) << *retry_after;
    auto const m = only_message(reply);
    EXPECT_EQ(m.at("id"), r.request_id) << m;
    expect_error(m, -32603);
    EXPECT_TRUE(error_message(m).starts_with("Rate limit exceeded: ")) << m;
    auto const data = error_data(m);
    EXPECT_EQ(data.at("limit"), json::value(json::string(limit))) << m;
    EXPECT_EQ(data.at("retryAfterSeconds").to_number<std::int64_t>(), std::stoi(*retry_after)) << m;
}

int retry_after_of(refused_at const& r) {
    return r.refusal ? std::stoi(r.refusal->header("Retry-After").value_or("1")) : 1;
}

// --rate-limit 1/2: a burst of two, one more each second. Requests sent back to back are refused once the
// burst is spent (the third, unless the machine took a second over the first two), and the refusal is a
// 429 with Retry-After carrying the request's id; another caller (another address) is not held by it.
TEST(GatewayRateLimits, ACallerOverItsBurstGets429WithRetryAfterUnderItsRequestId) {
    gateway_process gw("--legacy-only", {"--rate-limit", "1/2"});
    ASSERT_FALSE(gw.url().empty());
    mcp_http c(gw.ep());
    auto const r = send_until_refused(
        c, [](json::value const& id) { return modern_request(id, "tools/list"); }, 10);
    ASSERT_TRUE(r.refusal) << "10 requests at once were all admitted";
    EXPECT_GE(r.passed, 2u) << "the burst admits two";
    EXPECT_LE(r.passed, most_admitted(1, 2, r.elapsed)) << "took " << r.elapsed.count() << "ms";
    expect_refusal(r, "perCaller");
    EXPECT_EQ(error_message(only_message(*r.refusal)),
              "Rate limit exceeded: each caller may make 1 per second (bursts of 2); retry in " +
                  r.refusal->header("Retry-After").value_or("?") + "s");

    // Another caller: the same gateway reached from 127.0.0.2 has a bucket of its own.
    raw_socket other(gw.ep().port, 0, "127.0.0.2");
    ASSERT_TRUE(other.connected());
    auto spec = c.spec_for(modern_request(100, "tools/list"));
    ASSERT_TRUE(other.send(raw_request(gw.ep(), spec)));
    auto const answer = other.read_response();
    EXPECT_TRUE(answer.starts_with("HTTP/1.1 200")) << answer;
    EXPECT_NE(answer.find("\"tools\""), std::string::npos) << answer;

    // Once the Retry-After has passed, the caller is admitted again (here a legacy session's initialize).
    std::this_thread::sleep_for(std::chrono::seconds(retry_after_of(r) + 1)); // a lower bound: safe
    mcp_http legacy(gw.ep());
    auto const init = legacy.initialize("2025-11-25");
    EXPECT_EQ(init.status, 200u) << init.body;
}

// echo limited by the file (one a second, no burst), add by the flag: the second call of each at once is
// 429 naming the perTool limit while the other tool still passes; after the Retry-After it passes again.
TEST(GatewayRateLimits, AToolOverItsLimitGets429WhileAnotherPassesAndPassesAgainAfterRetryAfter) {
    limits_config config({{"demo", demo_server()}},
                         {{"rateLimits", {{"perTool", {{"echo", {{"perSecond", 1}, {"burst", 1}}}}}}}});
    gateway_process gw(std::vector<std::string>{"--config", config.path(), "--tool-rate-limit", "add=1/1"});
    ASSERT_FALSE(gw.url().empty());
    auto const ep = upstream_at(gw, "demo");
    mcp_http c(ep);
    auto echo = [](json::value const& id) {
        return modern_request(id, "tools/call", call_params("echo", {{"text", "again"}}));
    };
    auto add = [](json::value const& id) {
        return modern_request(id, "tools/call", call_params("add", {{"a", 1}, {"b", 2}}));
    };

    auto const echoes = send_until_refused(c, echo, 10, 1);
    ASSERT_TRUE(echoes.refusal) << "10 echo calls at once were all admitted";
    EXPECT_GE(echoes.passed, 1u);
    EXPECT_LE(echoes.passed, most_admitted(1, 1, echoes.elapsed)) << echoes.elapsed.count() << "ms";
    expect_refusal(echoes, "perTool");
    EXPECT_TRUE(error_message(only_message(*echoes.refusal))
                    .starts_with("Rate limit exceeded: the tool echo may make 1 per second"))
        << echoes.refusal->body;

    // Another tool is not held by echo's limit (add's own bucket is full); its second call is, by the flag.
    auto const adds = send_until_refused(c, add, 10, 100);
    ASSERT_TRUE(adds.refusal) << "10 add calls at once were all admitted";
    EXPECT_GE(adds.passed, 1u) << "add was held by echo's limit";
    expect_refusal(adds, "perTool");

    // Other methods are never counted against a tool.
    EXPECT_EQ(c.post(modern_request(200, "tools/list")).status, 200u);

    // After the Retry-After (a lower bound: the bucket holds a token by then), echo passes again.
    std::this_thread::sleep_for(std::chrono::seconds(retry_after_of(echoes)));
    auto const again = c.post(echo(300));
    ASSERT_EQ(again.status, 200u) << again.body;
    EXPECT_EQ(call_text(only_message(again)), "again");
}

// ---- the circuit breaker ------------------------------------------------------------------------

// crashing_upstream.mjs exits the moment `crash` is called: each such call fails (the gateway starts a new
// child for the next). After two failures in a row the upstream is marked down.
TEST(GatewayCircuitBreaker, AnUpstreamFailingTwiceIsMarkedDownAndReadyzSaysSoUntilAProbePasses) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    // A backoff of 2 s: the calls and probes below that must come before it ends are a few loopback
    // requests, far quicker even on a loaded machine.
    limits_config config(
        {{"crashy", crashing_server({{"circuitBreaker", {{"failures", 2}, {"backoffSeconds", 2}}}})},
         {"demo", demo_server()}});
    gateway_process gw(std::vector<std::string>{"--config", config.path()});
    ASSERT_FALSE(gw.url().empty());
    mcp_http c(upstream_at(gw, "crashy"));
    EXPECT_EQ(probe(gw.ep(), "/readyz").status, 200u);

    for (int id = 1; id <= 2; ++id) {
        auto const failed = only_message(c.post(modern_request(id, "tools/call", call_params("crash"))));
        expect_error(failed, -32603);
        EXPECT_NE(error_message(failed).find(" did not answer: "), std::string::npos) << failed;
    }
    ASSERT_TRUE(gw.wait_forwarded("tools/call", "crashy", 2)) << gw.stderr_text();

    auto const down = only_message(c.post(modern_request(3, "tools/call", call_params("pid"))));
    expect_error(down, -32603);
    EXPECT_TRUE(error_message(down).starts_with(
        "Internal error: the upstream server crashy is marked down after 2 failures in a row; the gateway "
        "tries it again in "))
        << down;
    auto const data = error_data(down);
    EXPECT_EQ(data.at("upstream"), "crashy") << down;
    auto const retry_after = data.at("retryAfterSeconds").to_number<std::int64_t>();
    EXPECT_GE(retry_after, 1) << down;
    EXPECT_LE(retry_after, 2) << down;

    auto const ready = probe(gw.ep(), "/readyz");
    EXPECT_EQ(ready.status, 503u) << ready.body;
    EXPECT_EQ(ready.body, "not ready: 1 of 2 required upstreams marked down\n");
    auto const live = probe(gw.ep(), "/healthz");
    EXPECT_EQ(live.status, 200u);
    EXPECT_EQ(live.body, "ok\n");
    // The other upstream serves meanwhile.
    mcp_http demo(upstream_at(gw, "demo"));
    EXPECT_EQ(call_text(only_message(
                  demo.post(modern_request(1, "tools/call", call_params("echo", {{"text", "up"}}))))),
              "up");

    // After the backoff (a lower bound) the next call is the probe: a new child answers it, and the
    // upstream is ready again.
    std::this_thread::sleep_for(std::chrono::seconds(retry_after) + milliseconds(100));
    auto const probe_call = only_message(c.post(modern_request(4, "tools/call", call_params("pid"))));
    EXPECT_FALSE(call_text(probe_call).empty()) << probe_call;
    auto const again = probe(gw.ep(), "/readyz");
    EXPECT_EQ(again.status, 200u) << again.body;
    EXPECT_EQ(again.body, "ready\n");

    // The marked-down call was never forwarded: the two crashes and the probe are all the upstream saw.
    ASSERT_TRUE(gw.wait_forwarded("tools/call", "crashy", 3)) << gw.stderr_text();
    EXPECT_EQ(gw.forwarded("tools/call", "crashy"), 3u) << gw.stderr_text();
}

TEST(GatewayCircuitBreaker, AnOptionalUpstreamMarkedDownLeavesReadyzReady) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    limits_config config(
        {{"demo", demo_server()},
         {"optional", crashing_server({{"required", false},
                                       {"circuitBreaker", {{"failures", 1}, {"backoffSeconds", 60}}}})}});
    gateway_process gw(std::vector<std::string>{"--config", config.path()});
    ASSERT_FALSE(gw.url().empty());
    mcp_http c(upstream_at(gw, "optional"));
    auto const failed = only_message(c.post(modern_request(1, "tools/call", call_params("crash"))));
    expect_error(failed, -32603);
    auto const down = only_message(c.post(modern_request(2, "tools/call", call_params("pid"))));
    EXPECT_NE(error_message(down).find("optional is marked down after 1 failures in a row"),
              std::string::npos)
        << down;
    EXPECT_EQ(error_data(down).at("upstream"), "optional") << down;
    auto const ready = probe(gw.ep(), "/readyz");
    EXPECT_EQ(ready.status, 200u) << ready.body;
    EXPECT_EQ(ready.body, "ready\n");
}

// Merged, a member marked down answers its own calls so; the other members' calls pass.
TEST(GatewayCircuitBreaker, AMergedMemberMarkedDownLeavesTheOthersCallsServed) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    limits_config config(
        {{"demo", demo_server()},
         {"crashy", crashing_server({{"circuitBreaker", {{"failures", 1}, {"backoffSeconds", 60}}}})}},
        {{"merge", true}});
    gateway_process gw(std::vector<std::string>{"--config", config.path()});
    ASSERT_FALSE(gw.url().empty());
    mcp_http c(gw.ep());
    expect_error(only_message(c.post(modern_request(1, "tools/call", call_params("crashy__crash")))), -32603);
    auto const down = only_message(c.post(modern_request(2, "tools/call", call_params("crashy__pid"))));
    EXPECT_EQ(error_data(down).at("upstream"), "crashy") << down;
    auto const echo = only_message(
        c.post(modern_request(3, "tools/call", call_params("demo__echo", {{"text", "still up"}}))));
    EXPECT_EQ(call_text(echo), "still up") << echo;
    auto const ready = probe(gw.ep(), "/readyz");
    EXPECT_EQ(ready.status, 503u) << ready.body;
    EXPECT_EQ(ready.body, "not ready: 1 of 2 required upstreams marked down\n");
}

// Merged, the tool list of a gateway with one member marked down still lists the others' tools, as it does
// for a member that cannot be reached: its part is left out.
TEST(GatewayCircuitBreaker, AMergedMemberMarkedDownLeavesTheOthersToolsListed) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    limits_config config(
        {{"crashy", crashing_server({{"circuitBreaker", {{"failures", 1}, {"backoffSeconds", 60}}}})},
         {"demo", demo_server()}},
        {{"merge", true}});
    gateway_process gw(std::vector<std::string>{"--config", config.path()});
    ASSERT_FALSE(gw.url().empty());
    mcp_http c(gw.ep());
    expect_error(only_message(c.post(modern_request(1, "tools/call", call_params("crashy__crash")))), -32603);
    std::vector<std::string> names;
    std::optional<std::string> cursor;
    for (int page = 0; page < 10; ++page) {
        json::object params;
        if (cursor)
            params["cursor"] = *cursor;
        auto const r = only_message(c.post(modern_request(10 + page, "tools/list", std::move(params))));
        auto const result = result_of(r);
        if (auto const* tools = result.if_contains("tools"))
            for (auto const& t : tools->as_array())
                names.emplace_back(t.at("name").as_string());
        auto const* next = result.if_contains("nextCursor");
        if (!next || !next->is_string())
            break;
        cursor = std::string(next->get_string());
    }
    EXPECT_NE(std::find(names.begin(), names.end(), "demo__echo"), names.end());
}

// ---- concurrency --------------------------------------------------------------------------------

// countdown n=6 runs six 50 ms timers one after the other: at least 300 ms upstream. With one call slot, two
// such calls made at once cannot overlap, so the later answer comes at least 600 ms after the first request
// went out (a lower bound, whatever the machine's load).
TEST(GatewayConcurrency, OneCallSlotRunsTwoCallsOneAfterTheOther) {
    limits_config config({{"demo", demo_server({{"maxConcurrentCalls", 1}})}});
    gateway_process gw(std::vector<std::string>{"--config", config.path()});
    ASSERT_FALSE(gw.url().empty());
    auto const ep = upstream_at(gw, "demo");
    struct timed {
        json::value answer;
        steady_clock::time_point done;
    };
    timed first, second;
    auto const started = steady_clock::now();
    auto run = [&ep](timed& into, int id) {
        mcp_http c(ep);
        into.answer =
            only_message(c.post(modern_request(id, "tools/call", call_params("countdown", {{"n", 6}}))));
        into.done = steady_clock::now();
    };
    std::thread a(run, std::ref(first), 1);
    std::thread b(run, std::ref(second), 2);
    a.join();
    b.join();
    EXPECT_EQ(call_text(first.answer), "liftoff after 6 steps") << first.answer;
    EXPECT_EQ(call_text(second.answer), "liftoff after 6 steps") << second.answer;
    auto const last = std::max(first.done, second.done);
    EXPECT_GE(std::chrono::duration_cast<milliseconds>(last - started).count(), 600)
        << "the two calls overlapped upstream";
    ASSERT_TRUE(gw.wait_forwarded("tools/call", "demo", 2)) << gw.stderr_text();
}

// --upstream-timeout 0.3 bounds the wait for a slot as well: a call held by one that runs for a second
// (countdown n=20, its progress keeping its own wait alive) fails saying it had no free call slot, and the
// holder finishes.
TEST(GatewayConcurrency, ACallWaitingLongerThanTheUpstreamTimeoutForASlotFails) {
    limits_config config({{"demo", demo_server({{"maxConcurrentCalls", 1}})}});
    gateway_process gw(std::vector<std::string>{"--config", config.path(), "--upstream-timeout", "0.3"});
    ASSERT_FALSE(gw.url().empty());
    auto const ep = upstream_at(gw, "demo");
    mcp_http holder(ep);
    json::object params = call_params("countdown", {{"n", 20}});
    params["_meta"] = modern_meta({}, {{"progressToken", "hold"}});
    auto held = holder.open(modern_request(1, "tools/call", std::move(params)));
    ASSERT_EQ(held->status(), 200u);
    auto const progress = holder.next(*held); // the holder has its slot: its upstream is counting down
    ASSERT_TRUE(is_notification(progress, "notifications/progress")) << progress;

    mcp_http waiter(ep);
    auto const refused =
        only_message(waiter.post(modern_request(2, "tools/call", call_params("echo", {{"text", "waited"}}))));
    expect_error(refused, -32603);
    EXPECT_EQ(error_message(refused),
              "Internal error: the upstream server demo had no free call slot (1 calls at once) within 300ms")
        << refused;
    EXPECT_EQ(error_data(refused).at("upstream"), "demo") << refused;

    json::value last;
    for (auto const& m : holder.rest(*held))
        last = m;
    EXPECT_EQ(call_text(last), "liftoff after 20 steps") << last;
    // The slot is free again.
    auto const after =
        only_message(waiter.post(modern_request(3, "tools/call", call_params("echo", {{"text", "free"}}))));
    EXPECT_EQ(call_text(after), "free") << after;
}

// ---- probes -------------------------------------------------------------------------------------

TEST(GatewayProbes, HealthzAndReadyzAnswerGetAndHeadWithoutTheBearerToken) {
    limits_config config({{"demo", demo_server()}}, {{"bearerToken", "probe-secret"}});
    gateway_process gw(std::vector<std::string>{"--config", config.path()});
    ASSERT_FALSE(gw.url().empty());
    mcp_http c(upstream_at(gw, "demo"));
    EXPECT_EQ(c.post(modern_request(1, "tools/list")).status, 401u) << "the MCP path wants the token";
    EXPECT_EQ(c.post(modern_request(2, "tools/list"), {{"Authorization", "Bearer probe-secret"}}).status,
              200u);

    for (auto const& [path, body] :
         {std::pair<std::string, std::string>{"/healthz", "ok\n"}, {"/readyz", "ready\n"}}) {
        auto const got = probe(gw.ep(), path);
        EXPECT_EQ(got.status, 200u) << path << ": " << got.body;
        EXPECT_EQ(got.body, body) << path;
        EXPECT_EQ(got.header("Content-Type").value_or(""), "text/plain; charset=utf-8") << path;

        auto const head = head_exchange(gw.ep(), path);
        auto const end = head.find("\r\n\r\n");
        ASSERT_NE(end, std::string::npos) << path << ": " << head;
        EXPECT_TRUE(head.starts_with("HTTP/1.1 200")) << head;
        EXPECT_NE(head.find("Content-Length: " + std::to_string(body.size()) + "\r\n"), std::string::npos)
            << head;
        EXPECT_EQ(head.substr(end + 4), "") << path << ": a HEAD has no body";
    }
}

// Merged at "/", the MCP endpoint's path is a prefix of every probe's: the probes still answer, and the
// endpoint still serves MCP.
TEST(GatewayProbes, AreNotShadowedByAnEndpointAtTheRoot) {
    gateway_process gw(std::vector<std::string>{"--merge", "--path", "/", "--upstream",
                                                "a=" + demo_upstream("--legacy-only")});
    ASSERT_FALSE(gw.url().empty());
    EXPECT_EQ(gw.ep().path, "/") << gw.url();
    auto const live = probe(gw.ep(), "/healthz");
    EXPECT_EQ(live.status, 200u);
    EXPECT_EQ(live.body, "ok\n");
    auto const ready = probe(gw.ep(), "/readyz");
    EXPECT_EQ(ready.status, 200u);
    EXPECT_EQ(ready.body, "ready\n");
    mcp_http c(gw.ep());
    auto const call =
        only_message(c.post(modern_request(1, "tools/call", call_params("a__echo", {{"text", "root"}}))));
    EXPECT_EQ(call_text(call), "root") << call;
}

// Unmerged at "/", an upstream named healthz would be served at a probe's path: refused in words, exit 2.
TEST(GatewayProbes, AnUpstreamWhoseEndpointWouldBeAProbesPathIsRefused) {
    child_process child({DUET_BINARY, "gateway", "--port", "0", "--path", "/", "--upstream",
                         "healthz=" + demo_upstream("--legacy-only"), "--upstream",
                         "b=" + demo_upstream("--legacy-only")},
                        child_process::input::null);
    EXPECT_TRUE(first_stdout_line(child).empty());
    EXPECT_EQ(child.wait_exit(wait_limit), 2);
    EXPECT_NE(child.stderr_text().find("the probe /healthz is at or under the MCP route /healthz"),
              std::string::npos)
        << child.stderr_text();
}

} // namespace gateway_limits_tests
