// The resource-server flags of `duet serve` and `duet gateway` (apps/common/auth_flags.hpp): each combination
// that cannot work is a usage error (exit 2) that says which flag is wrong, before anything listens; a
// well-formed set serves 401 challenges naming its metadata.
#include "http/mcp_http.hpp"
#include "http/servers.hpp"
#include "stdio/messages.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace {

using namespace duet;
using namespace duet::test;
using namespace duet::test::http;
using namespace std::chrono_literals;

void expect_usage_error(std::vector<std::string> args, std::string const& says) {
    for (std::string command : {"serve", "gateway"}) {
        auto full = args;
        full.insert(full.begin(), {command, "--port", "0"});
        if (command == "gateway")
            full.insert(full.end(), {"--upstream", "stdio:true"});
        auto const r = run_duet_to_exit(full);
        EXPECT_EQ(r.exit_code, 2) << command << ": " << r.err;
        EXPECT_NE(r.err.find(says), std::string::npos) << command << ": " << r.err;
    }
}

TEST(AuthFlags, AnIssuerWithoutAnAudienceIsAUsageError) {
    expect_usage_error({"--auth-issuer", "http://127.0.0.1:1", "--auth-jwks", "http://127.0.0.1:1/jwks"},
                       "--auth-audience");
}

TEST(AuthFlags, NeitherOrBothWaysOfCheckingTokensIsAUsageError) {
    std::vector<std::string> const base{"--auth-issuer", "http://127.0.0.1:1", "--auth-audience",
                                        "http://127.0.0.1:2/mcp"};
    expect_usage_error(base, "--auth-jwks");
    auto both = base;
    both.insert(both.end(), {"--auth-jwks", "http://127.0.0.1:1/jwks", "--auth-introspection",
                             "http://127.0.0.1:1/introspect", "--auth-client-id", "mcp"});
    expect_usage_error(both, "--auth-introspection");
}

TEST(AuthFlags, IntrospectionWithoutAClientIdIsAUsageError) {
    expect_usage_error({"--auth-issuer", "http://127.0.0.1:1", "--auth-audience", "http://127.0.0.1:2/mcp",
                        "--auth-introspection", "http://127.0.0.1:1/introspect"},
                       "--auth-client-id");
}

TEST(AuthFlags, AJwksThatIsNoUrlIsAUsageError) {
    expect_usage_error({"--auth-issuer", "http://127.0.0.1:1", "--auth-audience", "http://127.0.0.1:2/mcp",
                        "--auth-jwks", "jwks.json"},
                       "--auth-jwks");
}

TEST(AuthFlags, AStaticTokenAndAnIssuerExcludeEachOther) {
    expect_usage_error({"--bearer-token", "abc", "--auth-issuer", "http://127.0.0.1:1", "--auth-audience",
                        "http://127.0.0.1:2/mcp", "--auth-jwks", "http://127.0.0.1:1/jwks"},
                       "exclude each other");
}

TEST(AuthFlags, AProtectedServeChallengesWithItsMetadataAndServesIt) {
    child_server c({"--auth-issuer", "http://127.0.0.1:1", "--auth-audience", "https://mcp.example/mcp",
                    "--auth-jwks", "http://127.0.0.1:1/jwks", "--auth-scopes", "mcp tools"});
    mcp_http m(c.ep());
    auto const refused = m.post(modern_request(1, "tools/list"));
    EXPECT_EQ(refused.status, 401u) << refused.body;
    auto const challenge = refused.header("WWW-Authenticate").value_or("");
    EXPECT_NE(
        challenge.find("resource_metadata=\"https://mcp.example/.well-known/oauth-protected-resource/mcp\""),
        std::string::npos)
        << challenge;
    EXPECT_NE(challenge.find("scope=\"mcp tools\""), std::string::npos) << challenge;
    auto const metadata =
        exchange(c.ep(), {.method = "GET", .target = "/.well-known/oauth-protected-resource/mcp"});
    EXPECT_EQ(metadata.status, 200u) << metadata.body;
    EXPECT_NE(metadata.body.find("\"authorization_servers\":[\"http://127.0.0.1:1\"]"), std::string::npos)
        << metadata.body;
}

} // namespace
