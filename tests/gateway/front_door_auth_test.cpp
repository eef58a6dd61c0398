// `duet gateway` with a protected front door: the --auth-* flags make it an OAuth 2.1 resource server for the
// tokens of a real authorization server (tests/interop/peers/oauth_authorization_server.mjs, oidc-provider),
// in front of an unprotected upstream that records every request it receives (recording_upstream.mjs). A
// caller with a token (from `duet login` against the gateway) calls through it in both eras; callers without
// a valid one get 401 pointing at the gateway's protected resource metadata and reach nothing upstream. The
// caller's token is the gateway's to check and never goes further: the upstream sees no Authorization header
// and no trace of the token (the MCP authorization spec forbids token passthrough).
#include "client/oauth_login.hpp"
#include "gateway/gateway_process.hpp"
#include "http/mcp_http.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <sstream>
#include <string>
#include <vector>

namespace gateway_front_door_auth {

namespace json = boost::json;
using duet::test::child_process;
using duet::test::oauth_login::interop_dir;
using duet::test::oauth_login::oauth_home;
using duet::test::oauth_login::oauth_peer_node;

namespace {

// The authorization server, the recording upstream, and the gateway protected by the one in front of the
// other.
struct front_door_peers {
    explicit front_door_peers(oauth_home const& home)
        : port(duet::test::oauth_login::free_loopback_port()),
          mcp("http://127.0.0.1:" + std::to_string(port) + "/mcp"),
          authorization_server({oauth_peer_node(), interop_dir() + "/peers/oauth_authorization_server.mjs",
                                "--access-token-ttl", "300", "--log", home.log_file()},
                               child_process::input::pipe),
          issuer(duet::test::gateway::first_stdout_line(authorization_server)),
          upstream({oauth_peer_node(), DUET_SOURCE_DIR "/tests/gateway/recording_upstream.mjs"},
                   child_process::input::pipe),
          upstream_url(duet::test::gateway::first_stdout_line(upstream)),
          gateway({DUET_BINARY, "gateway", "--port", std::to_string(port), "--upstream", upstream_url,
                   "--era", "legacy", "--auth-issuer", issuer, "--auth-audience", mcp, "--auth-jwks",
                   duet::test::oauth_login::jwks_uri_of(issuer), "--auth-scopes", "mcp:tools"},
                  child_process::input::null),
          gateway_url(duet::test::gateway::first_stdout_line(gateway)) {}

    ~front_door_peers() {
        gateway.signal(SIGTERM);
        gateway.wait_exit(duet::test::gateway::wait_limit);
        // The node peers exit when their stdin closes.
        upstream.close_in();
        authorization_server.close_in();
        upstream.wait_exit(duet::test::gateway::wait_limit);
        authorization_server.wait_exit(duet::test::gateway::wait_limit);
    }
    front_door_peers(front_door_peers const&) = delete;
    front_door_peers& operator=(front_door_peers const&) = delete;

    // Every request the upstream received, as it logged them.
    [[nodiscard]] std::vector<json::object> upstream_requests() const {
        std::vector<json::object> out;
        std::istringstream lines(upstream.stderr_text());
        for (std::string line; std::getline(lines, line);) {
            if (!line.starts_with("request "))
                continue;
            boost::system::error_code ec;
            auto v = json::parse(line.substr(8), ec);
            if (ec || !v.is_object())
                ADD_FAILURE() << "not a request record: " << line;
            else
                out.push_back(std::move(v.as_object()));
        }
        return out;
    }

    // The tools/call requests the upstream received (their bodies).
    [[nodiscard]] std::vector<std::string> upstream_calls() const {
        std::vector<std::string> out;
        for (auto const& r : upstream_requests()) {
            auto const body = duet::test::oauth_login::string_field(r, "body");
            if (body.find("\"tools/call\"") != std::string::npos)
                out.push_back(body);
        }
        return out;
    }

    std::uint16_t port;
    std::string mcp;
    child_process authorization_server;
    std::string issuer;
    child_process upstream;
    std::string upstream_url;
    child_process gateway;
    std::string gateway_url;
};

std::string front_door_metadata_url(front_door_peers const& peers) {
    return "http://127.0.0.1:" + std::to_string(peers.port) + "/.well-known/oauth-protected-resource/mcp";
}

} // namespace

TEST(GatewayFrontDoorAuth, ATokenHolderCallsThroughAndTheTokenNeverReachesTheUpstream) {
    DUET_SKIP_WITHOUT_OIDC_PROVIDER();
    oauth_home home;
    front_door_peers peers(home);
    ASSERT_FALSE(peers.issuer.empty());
    ASSERT_FALSE(peers.upstream_url.empty());
    ASSERT_EQ(peers.gateway_url, peers.mcp) << peers.gateway.stderr_text();

    auto const in = duet::test::oauth_login::login(peers.mcp);
    ASSERT_EQ(in.code, 0) << in.out << in.err << duet::test::read_file(home.log_file());
    EXPECT_NE(in.out.find("issuer " + peers.issuer + ","), std::string::npos) << in.out;
    auto const tokens = duet::test::oauth_login::stored_tokens(home);
    auto const access_token = duet::test::oauth_login::string_field(tokens, "access_token");
    auto const refresh_token = duet::test::oauth_login::string_field(tokens, "refresh_token");
    ASSERT_FALSE(access_token.empty());

    // Duet's client, each era, with the stored token.
    for (std::string era : {"legacy", "modern"}) {
        auto const r = duet::test::oauth_login::run_duet(
            {"call", peers.mcp, "echo", "text=through the front door " + era, "--era", era});
        EXPECT_EQ(r.code, 0) << era << ": " << r.out << r.err << peers.gateway.stderr_text();
        EXPECT_EQ(r.out, "through the front door " + era + "\n") << era;
    }
    // A plain modern POST with the token in its Authorization header.
    duet::test::http::mcp_http c(duet::test::http::endpoint::parse(peers.mcp));
    auto const plain =
        c.post(duet::test::modern_request(
                   7, "tools/call", duet::test::call_params("echo", {{"text", "with a bearer header"}})),
               {{"Authorization", "Bearer " + access_token}});
    ASSERT_EQ(plain.status, 200u) << plain.body;
    EXPECT_EQ(duet::test::first_text(duet::test::result_of(duet::test::gateway::only_message(plain))),
              "with a bearer header");

    auto const calls = peers.upstream_calls();
    ASSERT_EQ(calls.size(), 3u) << peers.upstream.stderr_text();
    EXPECT_NE(calls[0].find("through the front door legacy"), std::string::npos) << calls[0];
    EXPECT_NE(calls[1].find("through the front door modern"), std::string::npos) << calls[1];
    EXPECT_NE(calls[2].find("with a bearer header"), std::string::npos) << calls[2];

    // What went upstream: no Authorization header on any request, and neither token anywhere.
    for (auto const& r : peers.upstream_requests()) {
        auto const* headers = r.if_contains("headers");
        ASSERT_TRUE(headers && headers->is_object()) << json::serialize(r);
        EXPECT_FALSE(headers->as_object().contains("authorization")) << json::serialize(r);
    }
    auto const recorded = peers.upstream.stderr_text();
    EXPECT_EQ(recorded.find(access_token), std::string::npos) << "the caller's access token went upstream";
    if (!refresh_token.empty()) {
        EXPECT_EQ(recorded.find(refresh_token), std::string::npos)
            << "the caller's refresh token went upstream";
    }
    EXPECT_EQ(peers.gateway.stderr_text().find(access_token), std::string::npos) << "nor is it logged";
}

TEST(GatewayFrontDoorAuth, CallersWithoutAValidTokenGet401AndReachNothingUpstream) {
    DUET_SKIP_WITHOUT_OIDC_PROVIDER();
    oauth_home home;
    front_door_peers peers(home);
    ASSERT_EQ(peers.gateway_url, peers.mcp) << peers.gateway.stderr_text();
    auto const metadata_url = front_door_metadata_url(peers);
    auto const ep = duet::test::http::endpoint::parse(peers.mcp);

    auto const call =
        duet::test::modern_request(1, "tools/call", duet::test::call_params("echo", {{"text", "let me in"}}));
    for (auto const& attempt : std::vector<std::vector<duet::test::http::header_field>>{
             {}, {{"Authorization", "Bearer not.a-real.token"}}, {{"Authorization", "Basic ZHVldDpkdWV0"}}}) {
        duet::test::http::mcp_http c(ep);
        auto const r = c.post(call, attempt);
        EXPECT_EQ(r.status, 401u) << r.body;
        auto const challenge = r.header("WWW-Authenticate").value_or("");
        EXPECT_TRUE(challenge.starts_with("Bearer ")) << challenge;
        EXPECT_NE(challenge.find("resource_metadata=\"" + metadata_url + "\""), std::string::npos)
            << challenge;
    }
    // A legacy caller is refused at initialize.
    duet::test::http::mcp_http legacy(ep);
    auto const init = legacy.post(duet::test::initialize_request(2, "2025-11-25"));
    EXPECT_EQ(init.status, 401u) << init.body;

    // Duet's client without a login gives up with the authorization exit code, naming `duet login`.
    auto const refused = duet::test::oauth_login::run_duet({"call", peers.mcp, "echo", "text=let me in"});
    EXPECT_EQ(refused.code, 6) << refused.out << refused.err;
    EXPECT_NE(refused.err.find("duet login"), std::string::npos) << refused.err;

    auto const metadata =
        duet::test::http::exchange(duet::test::http::endpoint::parse(metadata_url), {.method = "GET"});
    ASSERT_EQ(metadata.status, 200u) << metadata.body;
    auto const doc = metadata.json();
    ASSERT_TRUE(doc.is_object()) << metadata.body;
    EXPECT_EQ(doc.at("resource"), json::value(peers.mcp)) << metadata.body;
    EXPECT_EQ(doc.at("authorization_servers"), json::value(json::array{json::value(peers.issuer)}))
        << metadata.body;

    EXPECT_TRUE(peers.upstream_calls().empty()) << peers.upstream.stderr_text();
}

} // namespace gateway_front_door_auth
