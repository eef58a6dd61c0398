// Routes changed while the server serves (http_server::add_route, remove_route: `duet gateway` reloading its
// upstreams on SIGHUP): an added route answers at once, on new connections and kept-alive ones; a removed one
// answers 404 to every request that begins after it is gone, its legacy sessions' included, while what was
// under way on it (a slow call, modern or legacy) runs to its answer; the other routes are not disturbed, and
// requests served on every thread while the routes change all succeed.
#include <duet/auth/verifiers.hpp>
#include <duet/transport/http_server.hpp>

#include "http/mcp_http.hpp"
#include "http/raw_socket.hpp"
#include "http/servers.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "support/wait.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

// Named as well: the suite is built in unity batches, where every file's anonymous namespace is one.
namespace {
namespace live_routes_test {

namespace json = boost::json;
using namespace duet;
using namespace duet::test;
using namespace duet::test::http;
using namespace std::chrono_literals;

std::unique_ptr<server::server> named_server(std::string name) {
    server::server_options o;
    o.info = {.name = std::move(name), .version = "1.0.0"};
    return std::make_unique<server::server>(std::move(o));
}

// What the slow tool tells the test, and what lets it answer.
struct slow_calls {
    std::atomic<int> started{0};
    std::atomic<bool> release{false};
};

boost::asio::awaitable<server::tool_result> run_slow(std::shared_ptr<slow_calls> calls) {
    ++calls->started;
    boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
    auto const give_up = std::chrono::steady_clock::now() + http_wait;
    while (!calls->release && std::chrono::steady_clock::now() < give_up) {
        timer.expires_after(5ms);
        co_await timer.async_wait(boost::asio::use_awaitable);
    }
    co_return server::tool_result::text(calls->release ? "finished" : "gave up");
}

/// A server at /mcp/stable, served from a background thread, and one that is not served yet ("extra", with a
/// tool "slow" that answers once the test releases it) for the test to add at /mcp/extra.
class live_routes {
public:
    explicit live_routes(transport::http_options o = {})
        : stable_(named_server("stable")), extra_(named_server("extra")) {
        extra_->add_tool(
            server::tool{.name = "slow", .description = "Answers once the test lets it"},
            [calls = slow_](json::object const&, server::request_context&) { return run_slow(calls); });
        o.port = 0;
        http_ = std::make_unique<transport::http_server>(
            std::vector<transport::http_route>{{"/mcp/stable", stable_.get()}}, o);
        if (auto ec = http_->listen()) {
            ADD_FAILURE() << "listen: " << ec.message();
            return;
        }
        thread_ = std::thread([this] { http_->run(); });
    }
    ~live_routes() {
        slow_->release = true;
        if (thread_.joinable()) {
            http_->stop();
            thread_.join();
        }
    }

    [[nodiscard]] transport::http_server& http() noexcept { return *http_; }
    [[nodiscard]] server::server& stable() noexcept { return *stable_; }
    [[nodiscard]] server::server& extra() noexcept { return *extra_; }
    [[nodiscard]] slow_calls& slow() noexcept { return *slow_; }
    [[nodiscard]] endpoint at(std::string const& path) const { return endpoint::parse(http_->url(path)); }

private:
    std::unique_ptr<server::server> stable_;
    std::unique_ptr<server::server> extra_;
    std::shared_ptr<slow_calls> slow_ = std::make_shared<slow_calls>();
    std::unique_ptr<transport::http_server> http_;
    std::thread thread_;
};

std::string server_name(json::value const& discover) {
    return std::string(
        result_of(discover).at("_meta").at("io.modelcontextprotocol/serverInfo").at("name").as_string());
}

std::string thrown_by(auto&& f) {
    try {
        f();
    } catch (std::invalid_argument const& e) {
        return e.what();
    }
    return "(nothing thrown)";
}

// The status of a response read_response() returned; 0 when there is none.
unsigned status_of(std::string const& response) {
    if (response.size() < 12 || !response.starts_with("HTTP/1.1 "))
        return 0;
    return static_cast<unsigned>(std::stoul(response.substr(9, 3)));
}

TEST(HttpLiveRoutes, AnAddedRouteAnswersAtOnce) {
    live_routes s;
    mcp_http before(s.at("/mcp/extra"));
    auto const missing = before.post(modern_request(1, "server/discover"));
    EXPECT_EQ(missing.status, 404u) << missing.body;
    // A connection kept alive across the change looks its next request up in the routes served then.
    raw_socket kept(s.at("/mcp/extra").port);
    ASSERT_TRUE(kept.connected());
    auto const discover =
        raw_request(s.at("/mcp/extra"), before.spec_for(modern_request(2, "server/discover")));
    ASSERT_TRUE(kept.send(discover));
    EXPECT_EQ(status_of(kept.read_response()), 404u);

    s.http().add_route({"/mcp/extra", &s.extra()});

    ASSERT_TRUE(kept.send(discover));
    auto const on_kept = kept.read_response();
    ASSERT_EQ(status_of(on_kept), 200u) << on_kept;
    EXPECT_EQ(server_name(json::parse(body_of(on_kept))), "extra");
    mcp_http modern(s.at("/mcp/extra"));
    auto const found = modern.post(modern_request(3, "server/discover"));
    ASSERT_EQ(found.status, 200u) << found.body;
    EXPECT_EQ(server_name(found.json()), "extra");
    mcp_http legacy(s.at("/mcp/extra"));
    auto const init = legacy.initialize("2025-11-25");
    ASSERT_EQ(init.status, 200u) << init.body;
    EXPECT_EQ(result_of(init.json()).at("serverInfo").at("name"), "extra");
    auto const ping = legacy.post(legacy_request(4, "ping"));
    EXPECT_EQ(ping.status, 200u) << ping.body;
    // The 404 for an unknown path names the added route with the others.
    mcp_http elsewhere(s.at("/mcp/other"));
    auto const unknown = elsewhere.post(modern_request(5, "server/discover"));
    EXPECT_EQ(unknown.status, 404u);
    EXPECT_NE(unknown.body.find("served here: /mcp/stable, /mcp/extra"), std::string::npos) << unknown.body;
    modern.expect_schema_valid();
    legacy.expect_schema_valid();
}

// Pinned: a legacy session opened on a removed route is gone with its path (its next request is 404, the
// answer to any unknown path), while the calls under way on it, legacy and modern, run to their answers.
TEST(HttpLiveRoutes, ARemovedRouteIsNotFoundWhileItsCallsInFlightComplete) {
    live_routes s;
    s.http().add_route({"/mcp/extra", &s.extra()});
    mcp_http legacy(s.at("/mcp/extra"));
    ASSERT_EQ(legacy.initialize("2025-11-25").status, 200u);
    mcp_http modern(s.at("/mcp/extra"));
    raw_socket kept(s.at("/mcp/extra").port);
    ASSERT_TRUE(kept.connected());
    auto const discover =
        raw_request(s.at("/mcp/extra"), modern.spec_for(modern_request(1, "server/discover")));
    ASSERT_TRUE(kept.send(discover));
    EXPECT_EQ(status_of(kept.read_response()), 200u);

    // Both calls are sent, their answers not read yet: the slow tool answers only once released.
    response_stream legacy_call(legacy.ep(),
                                legacy.spec_for(legacy_request(2, "tools/call", call_params("slow"))), false);
    response_stream modern_call(modern.ep(),
                                modern.spec_for(modern_request(3, "tools/call", call_params("slow"))), false);
    ASSERT_TRUE(wait_until([&] { return s.slow().started == 2; }, http_wait)) << "the calls never started";

    EXPECT_TRUE(s.http().remove_route("/mcp/extra"));

    auto const ping = legacy.post(legacy_request(4, "ping"));
    EXPECT_EQ(ping.status, 404u) << ping.body;
    EXPECT_NE(ping.body.find("no MCP endpoint at /mcp/extra; served here: /mcp/stable"), std::string::npos)
        << ping.body;
    auto const fresh = modern.post(modern_request(5, "server/discover"));
    EXPECT_EQ(fresh.status, 404u) << fresh.body;
    mcp_http newcomer(s.at("/mcp/extra"));
    EXPECT_EQ(newcomer.post(initialize_request(6, "2025-11-25")).status, 404u);
    ASSERT_TRUE(kept.send(discover));
    EXPECT_EQ(status_of(kept.read_response()), 404u);

    s.slow().release = true;
    legacy_call.read_head();
    EXPECT_EQ(legacy_call.status(), 200u);
    auto const legacy_answer = legacy_call.finish().messages();
    ASSERT_FALSE(legacy_answer.empty());
    EXPECT_EQ(call_text(legacy_answer.back()), "finished");
    modern_call.read_head();
    EXPECT_EQ(modern_call.status(), 200u);
    auto const modern_answer = modern_call.finish().messages();
    ASSERT_FALSE(modern_answer.empty());
    EXPECT_EQ(call_text(modern_answer.back()), "finished");
}

TEST(HttpLiveRoutes, AnotherRouteIsNotDisturbed) {
    live_routes s;
    mcp_http c(s.at("/mcp/stable"));
    ASSERT_EQ(c.initialize("2025-11-25").status, 200u);
    // The session's standalone stream, open across both changes.
    auto stream = c.open_spec(stream_spec(c));
    ASSERT_EQ(stream->status(), 200u);
    EXPECT_EQ(c.post(legacy_request(1, "ping")).status, 200u);

    s.http().add_route({"/mcp/extra", &s.extra()});
    EXPECT_EQ(c.post(legacy_request(2, "ping")).status, 200u);
    EXPECT_TRUE(s.http().remove_route("/mcp/extra"));
    auto const after = c.post(legacy_request(3, "tools/list"));
    EXPECT_EQ(after.status, 200u) << after.body;

    add_runtime_tool(s.stable(), "late");
    auto const heard = c.next(*stream);
    EXPECT_TRUE(is_notification(heard, "notifications/tools/list_changed")) << json::serialize(heard);
    mcp_http modern(s.at("/mcp/stable"));
    auto const discover = modern.post(modern_request(4, "server/discover"));
    ASSERT_EQ(discover.status, 200u) << discover.body;
    EXPECT_EQ(server_name(discover.json()), "stable");
    c.expect_schema_valid();
}

TEST(HttpLiveRoutes, ABadRouteIsRefusedNamingIt) {
    transport::http_options o;
    o.probes["/healthz"] = [] {
        return transport::probe_answer{};
    };
    o.probes["/mcp/probed/live"] = [] {
        return transport::probe_answer{};
    };
    live_routes s(o);
    auto& http = s.http();
    auto* extra = &s.extra();
    EXPECT_NE(thrown_by([&] {
                  http.add_route({"/mcp/stable", extra});
              }).find("/mcp/stable"),
              std::string::npos);
    EXPECT_NE(thrown_by([&] { http.add_route({"mcp/x", extra}); }).find("mcp/x"), std::string::npos);
    EXPECT_NE(thrown_by([&] {
                  http.add_route({"/mcp/x?y=1", extra});
              }).find("/mcp/x?y=1"),
              std::string::npos);
    EXPECT_NE(thrown_by([&] {
                  http.add_route({"/mcp/none", nullptr});
              }).find("/mcp/none"),
              std::string::npos);
    // A probe at the path or under it, as the constructor refuses.
    EXPECT_NE(thrown_by([&] {
                  http.add_route({"/healthz", extra});
              }).find("MCP route /healthz"),
              std::string::npos);
    EXPECT_NE(thrown_by([&] {
                  http.add_route({"/mcp/probed", extra});
              }).find("MCP route /mcp/probed"),
              std::string::npos);
    // A route under a probe shadows nothing (probes answer their exact path), as the constructor allows.
    EXPECT_NO_THROW(http.add_route({"/healthz/mcp", extra}));
    EXPECT_EQ(http.route_paths(), (std::vector<std::string>{"/mcp/stable", "/healthz/mcp"}));
    EXPECT_EQ(exchange(s.at("/healthz"), {.method = "GET"}).status, 200u);
}

TEST(HttpLiveRoutes, RemovingAnUnknownPathIsFalse) {
    live_routes s;
    EXPECT_FALSE(s.http().remove_route("/mcp/extra"));
    EXPECT_FALSE(s.http().remove_route("/mcp/stable/"));
    s.http().add_route({"/mcp/extra", &s.extra()});
    EXPECT_TRUE(s.http().remove_route("/mcp/extra"));
    EXPECT_FALSE(s.http().remove_route("/mcp/extra"));
    EXPECT_EQ(s.http().route_paths(), std::vector<std::string>{"/mcp/stable"});
}

TEST(HttpLiveRoutes, RoutePathsAndUrlFollowTheChanges) {
    live_routes s;
    auto& http = s.http();
    using paths = std::vector<std::string>;
    EXPECT_EQ(http.route_paths(), paths{"/mcp/stable"});
    http.add_route({"/mcp/b", &s.extra()});
    http.add_route({"/mcp/a", &s.extra()});
    EXPECT_EQ(http.route_paths(), (paths{"/mcp/stable", "/mcp/b", "/mcp/a"}));
    EXPECT_TRUE(http.url().ends_with("/mcp/stable")) << http.url();
    EXPECT_TRUE(http.remove_route("/mcp/stable"));
    EXPECT_EQ(http.route_paths(), (paths{"/mcp/b", "/mcp/a"}));
    EXPECT_TRUE(http.url().ends_with("/mcp/b")) << http.url();
    EXPECT_TRUE(http.url("/mcp/a").ends_with(":" + std::to_string(http.port()) + "/mcp/a"))
        << http.url("/mcp/a");
    mcp_http gone(s.at("/mcp/stable"));
    EXPECT_EQ(gone.post(modern_request(1, "server/discover")).status, 404u);
    // Every route removed: a server whose MCP requests all get 404, naming none.
    EXPECT_TRUE(http.remove_route("/mcp/b"));
    EXPECT_TRUE(http.remove_route("/mcp/a"));
    EXPECT_EQ(http.route_paths(), paths{});
    EXPECT_EQ(http.url(), "http://127.0.0.1:" + std::to_string(http.port()));
    auto const none = gone.post(modern_request(2, "server/discover"));
    EXPECT_EQ(none.status, 404u);
    EXPECT_NE(none.body.find("served here: none"), std::string::npos) << none.body;
    http.add_route({"/mcp/stable", &s.stable()});
    EXPECT_EQ(gone.post(modern_request(3, "server/discover")).status, 200u);

    // The single-endpoint constructor serves options.path, and takes changes before it runs too.
    transport::http_options o;
    o.path = "/only";
    transport::http_server single(s.stable(), o);
    EXPECT_EQ(single.route_paths(), paths{"/only"});
    single.add_route({"/also", &s.extra()});
    EXPECT_EQ(single.route_paths(), (paths{"/only", "/also"}));
}

// A protected server publishes its metadata at an added route's well-known path, listing the scopes the
// added server's tools need, and no longer at a removed one's.
TEST(HttpLiveRoutes, TheMetadataFollowsTheRoutes) {
    auto verifier = auth::make_static_token_verifier("secret-token");
    ASSERT_TRUE(verifier);
    transport::http_options o;
    o.authorization = transport::protected_resource{.verifier = std::move(*verifier),
                                                    .resource = "https://mcp.example/mcp",
                                                    .authorization_servers = {"https://issuer.example"}};
    live_routes s(std::move(o));
    s.extra().add_tool(
        server::tool{.name = "write", .required_scopes = {"extra:write"}},
        [](json::object const&, server::request_context&) { return server::tool_result::text("ok"); });
    auto const metadata_at = [&](std::string const& path) {
        return exchange(s.at(path),
                        {.method = "GET", .target = "/.well-known/oauth-protected-resource" + path});
    };
    EXPECT_EQ(metadata_at("/mcp/stable").status, 200u);
    EXPECT_EQ(metadata_at("/mcp/extra").status, 404u);

    s.http().add_route({"/mcp/extra", &s.extra()});
    auto const published = metadata_at("/mcp/extra");
    ASSERT_EQ(published.status, 200u) << published.body;
    auto const scopes = published.json().at("scopes_supported").as_array();
    EXPECT_NE(std::find(scopes.begin(), scopes.end(), json::value("extra:write")), scopes.end())
        << published.body;
    mcp_http c(s.at("/mcp/extra"));
    c.set_default_headers({{"Authorization", "Bearer secret-token"}});
    EXPECT_EQ(c.post(modern_request(1, "server/discover")).status, 200u);

    EXPECT_TRUE(s.http().remove_route("/mcp/extra"));
    EXPECT_EQ(metadata_at("/mcp/extra").status, 404u);
    EXPECT_EQ(metadata_at("/mcp/stable").status, 200u);
}

// One thread adds and removes a route in a loop while requests to a stable route, on a connection kept alive
// and on new ones, are served on every I/O thread: every one of them succeeds, and the churning route answers
// 200 or 404, nothing else.
TEST(HttpLiveRoutes, RequestsSucceedWhileRoutesChange) {
    transport::http_options o;
    o.io_threads = 2;
    live_routes s(o);
    std::atomic<bool> done{false};
    std::atomic<int> cycles{0};
    std::thread churn([&] {
        while (!done) {
            s.http().add_route({"/mcp/churn", &s.extra()});
            std::this_thread::yield();
            s.http().remove_route("/mcp/churn");
            ++cycles;
        }
    });
    ASSERT_TRUE(wait_until([&] { return cycles > 0; }, http_wait));

    mcp_http c(s.at("/mcp/stable"));
    raw_socket kept(s.at("/mcp/stable").port);
    ASSERT_TRUE(kept.connected());
    int failures = 0;
    int churn_answers = 0;
    for (int i = 0; i < 300; ++i) {
        ASSERT_TRUE(
            kept.send(raw_request(s.at("/mcp/stable"), c.spec_for(modern_request(i, "server/discover")))));
        auto const r = kept.read_response();
        if (status_of(r) != 200u) {
            ++failures;
            ADD_FAILURE() << "request " << i << " on the kept-alive connection: " << r;
            break;
        }
        if (i % 10 == 0) {
            auto const fresh = c.post(modern_request(i, "server/discover"));
            if (fresh.status != 200u) {
                ++failures;
                ADD_FAILURE() << "request " << i << " on a new connection: " << fresh.status << " "
                              << fresh.body;
            }
            mcp_http churning(s.at("/mcp/churn"));
            auto const maybe = churning.post(modern_request(i, "server/discover"));
            EXPECT_TRUE(maybe.status == 200u || maybe.status == 404u) << maybe.status << " " << maybe.body;
            ++churn_answers;
        }
    }
    done = true;
    churn.join();
    EXPECT_EQ(failures, 0);
    EXPECT_EQ(churn_answers, 30);
    EXPECT_GT(cycles.load(), 1);
    EXPECT_EQ(s.http().route_paths(), std::vector<std::string>{"/mcp/stable"});
}

} // namespace live_routes_test
} // namespace
