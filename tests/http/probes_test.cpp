// Health probes (http_options::probes): a GET to a probe's path is answered with what its function says (its
// status, body and type), a HEAD with the same head and no body, any other method 405 with Allow; all of it
// ahead of the Origin and Host checks and without the token the MCP path needs, since an orchestrator probes
// a pod by its IP and holds none. A probe path at or under an MCP route's is refused when the server is made.
#include <duet/server/server.hpp>
#include <duet/transport/http_server.hpp>

#include "http/mcp_http.hpp"
#include "http/raw_socket.hpp"
#include "http/servers.hpp"
#include "stdio/messages.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {
namespace probes_suite {

using namespace duet;
using namespace duet::test;
using namespace duet::test::http;

// Options with a liveness probe ("/healthz": 200 "ok") and a readiness probe ("/readyz": JSON, 503 until
// `ready`).
transport::http_options probe_options(std::shared_ptr<std::atomic<bool>> ready) {
    transport::http_options o;
    o.probes["/healthz"] = [] {
        return transport::probe_answer{.body = "ok"};
    };
    o.probes["/readyz"] = [ready = std::move(ready)] {
        if (!ready->load())
            return transport::probe_answer{
                .status = 503, .body = R"({"ready":false})", .content_type = "application/json"};
        return transport::probe_answer{.body = R"({"ready":true})", .content_type = "application/json"};
    };
    return o;
}

request_spec probe_request(std::string method, std::string target, std::vector<header_field> headers = {}) {
    return request_spec{
        .method = std::move(method), .target = std::move(target), .headers = std::move(headers)};
}

// Everything the server sends on `c` until it closes the connection.
std::string probe_read_to_close(raw_socket& c) {
    std::string all;
    auto const give_up = std::chrono::steady_clock::now() + http_wait;
    while (std::chrono::steady_clock::now() < give_up) {
        if (c.read_some(all, std::chrono::milliseconds(500)) == raw_socket::got::closed)
            return all;
    }
    ADD_FAILURE() << "the server did not close the connection; got: " << all;
    return all;
}

// What constructing a server with `routes` and `probes` says, empty when it does not throw.
std::string probe_construction_error(std::vector<std::string> const& route_paths,
                                     std::map<std::string, std::function<transport::probe_answer()>> probes) {
    server::server srv(server::server_options{});
    std::vector<transport::http_route> routes;
    for (auto const& p : route_paths)
        routes.push_back({p, &srv});
    transport::http_options o;
    o.port = 0;
    o.probes = std::move(probes);
    try {
        transport::http_server const http(routes, o);
    } catch (std::invalid_argument const& e) {
        return e.what();
    }
    return {};
}

TEST(HttpProbes, AGetIsAnsweredWithTheProbesStatusBodyAndType) {
    inproc_server s(probe_options(std::make_shared<std::atomic<bool>>(true)));
    auto const live = exchange(s.ep(), probe_request("GET", "/healthz"));
    EXPECT_EQ(live.status, 200u) << live.body;
    EXPECT_EQ(live.body, "ok");
    EXPECT_EQ(live.header("Content-Type").value_or(""), "text/plain; charset=utf-8");
    auto const ready = exchange(s.ep(), probe_request("GET", "/readyz"));
    EXPECT_EQ(ready.status, 200u) << ready.body;
    EXPECT_EQ(ready.body, R"({"ready":true})");
    EXPECT_EQ(ready.header("Content-Type").value_or(""), "application/json");
    // Exactly the probe's path: what lies under it is no probe (nor an MCP endpoint).
    EXPECT_EQ(exchange(s.ep(), probe_request("GET", "/healthz/more")).status, 404u);
    // The MCP endpoint is served as before.
    mcp_http c(s.ep());
    EXPECT_EQ(c.post(modern_request(1, "tools/list")).status, 200u);
}

TEST(HttpProbes, AProbeSaying503Gives503) {
    auto ready = std::make_shared<std::atomic<bool>>(false);
    inproc_server s(probe_options(ready));
    auto const starting = exchange(s.ep(), probe_request("GET", "/readyz"));
    EXPECT_EQ(starting.status, 503u) << starting.body;
    EXPECT_EQ(starting.body, R"({"ready":false})");
    ready->store(true);
    EXPECT_EQ(exchange(s.ep(), probe_request("GET", "/readyz")).status, 200u);
}

// The HEAD's head says what the GET's body would be (its type and length) and no body follows: the GET
// pipelined behind it on the same connection is answered right after the head.
TEST(HttpProbes, AHeadIsAnsweredWithTheGetsHeadAndNoBody) {
    auto ready = std::make_shared<std::atomic<bool>>(false);
    inproc_server s(probe_options(ready));
    raw_socket c(s.ep().port);
    ASSERT_TRUE(c.connected());
    ASSERT_TRUE(c.send(raw_request(s.ep(), probe_request("HEAD", "/readyz")) +
                       raw_request(s.ep(), probe_request("GET", "/healthz", {{"Connection", "close"}}))));
    auto const all = probe_read_to_close(c);
    auto const head_end = all.find("\r\n\r\n");
    ASSERT_NE(head_end, std::string::npos) << all;
    auto const head = all.substr(0, head_end + 4);
    EXPECT_TRUE(head.starts_with("HTTP/1.1 503")) << head;
    EXPECT_NE(head.find("Content-Type: application/json\r\n"), std::string::npos) << head;
    EXPECT_NE(
        head.find("Content-Length: " + std::to_string(std::string(R"({"ready":false})").size()) + "\r\n"),
        std::string::npos)
        << head;
    auto const next = all.substr(head_end + 4);
    EXPECT_TRUE(next.starts_with("HTTP/1.1 200")) << all;
    EXPECT_EQ(body_of(next), "ok") << all;
}

TEST(HttpProbes, OtherMethodsAre405ListingGetAndHead) {
    inproc_server s(probe_options(std::make_shared<std::atomic<bool>>(true)));
    for (std::string const method : {"POST", "DELETE", "PUT"}) {
        auto spec = probe_request(method, "/healthz");
        spec.body = "{}";
        auto const r = exchange(s.ep(), spec);
        EXPECT_EQ(r.status, 405u) << method << ": " << r.body;
        EXPECT_EQ(r.header("Allow").value_or(""), "GET, HEAD") << method;
    }
}

// The MCP path of the same server refuses these very requests: a foreign Origin or Host (403), no token
// (401).
TEST(HttpProbes, AProbeIsAnsweredDespiteAForeignOriginOrHostAndWithoutAToken) {
    auto o = probe_options(std::make_shared<std::atomic<bool>>(true));
    o.bearer_token = "s3cret";
    inproc_server s(o);
    std::vector<std::vector<header_field>> const strangers{
        {}, {{"Origin", "https://evil.example"}}, {{"Host", "10.1.2.3:8750"}}, {{"Host", "evil.example"}}};
    for (auto const& headers : strangers) {
        auto const r = exchange(s.ep(), probe_request("GET", "/healthz", headers));
        EXPECT_EQ(r.status, 200u) << r.body;
        EXPECT_EQ(r.body, "ok");
    }
    mcp_http c(s.ep());
    EXPECT_EQ(c.post(modern_request(1, "tools/list")).status, 401u);
    auto const bearer = header_field{"Authorization", "Bearer s3cret"};
    EXPECT_EQ(c.post(modern_request(2, "tools/list"), {bearer, {"Origin", "https://evil.example"}}).status,
              403u);
    EXPECT_EQ(c.post(modern_request(3, "tools/list"), {bearer, {"Host", "evil.example"}}).status, 403u);
    EXPECT_EQ(c.post(modern_request(4, "tools/list"), {bearer}).status, 200u);
}

TEST(HttpProbes, AProbePathAtOrUnderARoutePathIsRefusedAtConstruction) {
    auto const ok = [] {
        return transport::probe_answer{};
    };
    for (std::string const path : {"/mcp", "/mcp/health"}) {
        auto const why = probe_construction_error({"/mcp"}, {{path, ok}});
        EXPECT_NE(why.find("probe " + path + " is at or under the MCP route /mcp"), std::string::npos)
            << path << ": " << why;
    }
    auto const under_second = probe_construction_error({"/mcp/a", "/mcp/b"}, {{"/mcp/b/live", ok}});
    EXPECT_NE(under_second.find("/mcp/b/live"), std::string::npos) << under_second;
    // Beside a route, above it, or merely sharing its first letters: free.
    EXPECT_EQ(probe_construction_error({"/mcp"}, {{"/healthz", ok}, {"/mcpx", ok}}), "");
    EXPECT_EQ(probe_construction_error({"/mcp/a", "/mcp/b"}, {{"/mcp", ok}}), "");
    // The single-endpoint constructor checks against options.path.
    server::server srv(server::server_options{});
    transport::http_options o;
    o.port = 0;
    o.probes["/mcp/ready"] = ok;
    EXPECT_THROW((transport::http_server{srv, o}), std::invalid_argument);
}

TEST(HttpProbes, AProbeWithoutAPathOrAFunctionIsRefusedAtConstruction) {
    auto const ok = [] {
        return transport::probe_answer{};
    };
    EXPECT_NE(probe_construction_error({"/mcp"}, {{"healthz", ok}}).find("healthz"), std::string::npos);
    EXPECT_NE(probe_construction_error({"/mcp"}, {{"/healthz?full", ok}}).find("/healthz?full"),
              std::string::npos);
    EXPECT_NE(probe_construction_error({"/mcp"}, {{"/healthz", nullptr}}).find("/healthz has no function"),
              std::string::npos);
}

} // namespace probes_suite
} // namespace
