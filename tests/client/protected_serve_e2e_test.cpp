// `duet serve` as an OAuth 2.1 resource server end to end: the real authorization server of
// tests/interop/peers/oauth_authorization_server.mjs (oidc-provider) issues JWT access tokens for
// http://127.0.0.1:P/mcp, and `duet serve --port P --auth-issuer ... --auth-jwks ...` checks them. Two
// clients log in and call the demo's `whoami`, which answers with the verified caller: Duet's own (`duet
// login`, then `duet call` in both eras) and the TypeScript SDK's, each era on its own SDK with the SDK's
// OAuth client (tests/interop/peers/oauth_sdk_client.mjs). Without a token the server answers 401 pointing at
// its protected resource metadata (RFC 9728), which names the authorization server.
#include "client/oauth_login.hpp"
#include "client/url_process.hpp"
#include "http/http_client.hpp"
#include "http/mcp_http.hpp"
#include "stdio/messages.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace protected_serve_e2e {

namespace json = boost::json;
using duet::test::oauth_login::interop_dir;
using duet::test::oauth_login::oauth_home;
using duet::test::oauth_login::oauth_peer_node;

namespace {

// The authorization server, then `duet serve` protected by it.
struct protected_serve_peers {
    explicit protected_serve_peers(oauth_home const& home)
        : port(duet::test::oauth_login::free_loopback_port()),
          mcp("http://127.0.0.1:" + std::to_string(port) + "/mcp"),
          authorization_server({oauth_peer_node(), interop_dir() + "/peers/oauth_authorization_server.mjs",
                                // Long enough that no token expires during a test: refreshes are
                                // oauth_e2e_test's business.
                                "--access-token-ttl", "300", "--log", home.log_file()}),
          issuer(authorization_server.url()), jwks(duet::test::oauth_login::jwks_uri_of(issuer)),
          server({DUET_BINARY, "serve", "--port", std::to_string(port), "--auth-issuer", issuer,
                  "--auth-audience", mcp, "--auth-jwks", jwks, "--auth-scopes", "mcp:tools"}) {}

    std::uint16_t port;
    std::string mcp;
    duet::test::client_side::url_process authorization_server;
    std::string issuer;
    std::string jwks;
    duet::test::client_side::url_process server;
};

} // namespace

TEST(ProtectedServeEndToEnd, DuetLoginThenCallsInBothErasAsTheVerifiedUser) {
    DUET_SKIP_WITHOUT_OIDC_PROVIDER();
    oauth_home home;
    protected_serve_peers peers(home);
    ASSERT_EQ(peers.server.url(), peers.mcp);
    ASSERT_FALSE(peers.jwks.empty());

    auto const in = duet::test::oauth_login::login(peers.mcp);
    ASSERT_EQ(in.code, 0) << in.out << in.err << duet::test::read_file(home.log_file());
    EXPECT_NE(in.out.find("logged in to " + peers.mcp), std::string::npos) << in.out;
    EXPECT_NE(in.out.find("issuer " + peers.issuer + ","), std::string::npos) << in.out;
    EXPECT_EQ(duet::test::oauth_login::log_count(home, "grant authorization_code"), 1u)
        << duet::test::read_file(home.log_file());
    auto const client_id =
        duet::test::oauth_login::string_field(duet::test::oauth_login::stored_tokens(home), "client_id");
    ASSERT_FALSE(client_id.empty());

    for (std::string era : {"legacy", "modern"}) {
        auto const r = duet::test::oauth_login::run_duet({"call", peers.mcp, "whoami", "--era", era});
        EXPECT_EQ(r.code, 0) << era << ": " << r.out << r.err;
        EXPECT_EQ(r.out, "subject duet-test-user client " + client_id + " scopes mcp:tools\n") << era;
    }
    EXPECT_EQ(duet::test::oauth_login::log_count(home, "grant authorization_code"), 1u) << "no second login";
}

TEST(ProtectedServeEndToEnd, TheTypeScriptSdkClientAuthorizesAndCallsInBothEras) {
    DUET_SKIP_WITHOUT_OIDC_PROVIDER();
    oauth_home home;
    protected_serve_peers peers(home);
    ASSERT_EQ(peers.server.url(), peers.mcp);

    // legacy on @modelcontextprotocol/sdk 1.32.2, modern on @modelcontextprotocol/client 2.4.0.
    for (std::string era : {"legacy", "modern"}) {
        auto const r = duet::test::oauth_login::run_to_end(
            {oauth_peer_node(), interop_dir() + "/peers/oauth_sdk_client.mjs", peers.mcp, era});
        ASSERT_EQ(r.code, 0) << era << ": " << r.out << r.err << duet::test::read_file(home.log_file());
        boost::system::error_code ec;
        auto const seen = json::parse(r.out, ec);
        ASSERT_FALSE(ec) << r.out;
        ASSERT_TRUE(seen.is_object()) << r.out;
        auto const& o = seen.as_object();
        EXPECT_EQ(duet::test::oauth_login::string_field(o, "era"), era) << r.out;
        EXPECT_EQ(o.at("authorized"), json::value(true)) << "the first connection met the 401: " << r.out;
        auto const whoami = duet::test::oauth_login::string_field(o, "whoami");
        std::string const before = "subject duet-test-user client ";
        std::string const after = " scopes mcp:tools";
        ASSERT_TRUE(whoami.starts_with(before) && whoami.ends_with(after)) << whoami;
        // The client the SDK registered dynamically is the one the token names.
        auto const client_id = whoami.substr(before.size(), whoami.size() - before.size() - after.size());
        EXPECT_EQ(duet::test::oauth_login::log_count(home, "registered " + client_id), 1u)
            << whoami << "\n"
            << duet::test::read_file(home.log_file());
    }
    EXPECT_EQ(duet::test::oauth_login::log_count(home, "grant authorization_code"), 2u)
        << duet::test::read_file(home.log_file());
}

TEST(ProtectedServeEndToEnd, WithoutAValidTokenTheServerAnswers401NamingItsMetadata) {
    DUET_SKIP_WITHOUT_OIDC_PROVIDER();
    oauth_home home;
    protected_serve_peers peers(home);
    ASSERT_EQ(peers.server.url(), peers.mcp);
    auto const metadata_url =
        "http://127.0.0.1:" + std::to_string(peers.port) + "/.well-known/oauth-protected-resource/mcp";

    using duet::test::http::mcp_http;
    auto const ep = duet::test::http::endpoint::parse(peers.mcp);
    for (auto const& message :
         {duet::test::modern_request(1, "tools/call", duet::test::call_params("whoami")),
          duet::test::initialize_request(2, "2025-11-25")}) {
        mcp_http c(ep);
        auto const bare = c.post(message);
        EXPECT_EQ(bare.status, 401u) << bare.body;
        auto const challenge = bare.header("WWW-Authenticate").value_or("");
        EXPECT_TRUE(challenge.starts_with("Bearer ")) << challenge;
        EXPECT_NE(challenge.find("resource_metadata=\"" + metadata_url + "\""), std::string::npos)
            << challenge;
        EXPECT_EQ(bare.body.find("anonymous"), std::string::npos) << "whoami never ran: " << bare.body;

        // A token that is not one of the authorization server's is refused the same way, naming the error.
        auto const forged = c.post(message, {{"Authorization", "Bearer not.a-real.token"}});
        EXPECT_EQ(forged.status, 401u) << forged.body;
        auto const why = forged.header("WWW-Authenticate").value_or("");
        EXPECT_NE(why.find("error=\"invalid_token\""), std::string::npos) << why;
        EXPECT_NE(why.find("resource_metadata=\"" + metadata_url + "\""), std::string::npos) << why;
    }

    auto const metadata =
        duet::test::http::exchange(duet::test::http::endpoint::parse(metadata_url), {.method = "GET"});
    ASSERT_EQ(metadata.status, 200u) << metadata.body;
    auto const doc = metadata.json();
    ASSERT_TRUE(doc.is_object()) << metadata.body;
    EXPECT_EQ(doc.at("resource"), json::value(peers.mcp)) << metadata.body;
    EXPECT_EQ(doc.at("authorization_servers"), json::value(json::array{json::value(peers.issuer)}))
        << metadata.body;
    EXPECT_EQ(duet::test::oauth_login::log_count(home, "grant authorization_code"), 0u);
}

} // namespace protected_serve_e2e
