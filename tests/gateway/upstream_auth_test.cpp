// How `duet gateway` authenticates to an HTTP upstream that wants a bearer token
// (tests/gateway/protected_upstream.mjs): a static header read from the environment or a file, the OAuth
// client credentials grant, or the tokens `duet login` stored (refreshed when expired). The upstream's
// `whoami` tool answers with the Authorization header it received, so each test sees exactly what went
// upstream; a downstream client's own token never does (the MCP authorization spec forbids passthrough).
#include "gateway/announcing_upstream.hpp"
#include "gateway/gateway_process.hpp"
#include "http/mcp_http.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace gateway_upstream_auth {

namespace json = boost::json;
using namespace duet::test;
using namespace duet::test::http;
using namespace duet::test::gateway;

// The protected upstream, configured by environment variables; its URL once it listens.
class protected_upstream {
public:
    explicit protected_upstream(std::vector<std::string> env)
        : child_(command(std::move(env)), child_process::input::null), url_(first_stdout_line(child_)) {}
    [[nodiscard]] std::string const& url() const noexcept { return url_; }
    [[nodiscard]] std::string log() const { return child_.stderr_text(); }

private:
    static std::vector<std::string> command(std::vector<std::string> env) {
        std::vector<std::string> argv{"/usr/bin/env"};
        argv.insert(argv.end(), env.begin(), env.end());
        argv.push_back(pinned_node());
        argv.push_back(DUET_SOURCE_DIR "/tests/gateway/protected_upstream.mjs");
        return argv;
    }
    child_process child_;
    std::string url_;
};

// A scratch directory, removed at the end.
struct scratch_dir {
    scratch_dir() {
        char pattern[] = "/tmp/duet-upstream-auth.XXXXXX";
        path = ::mkdtemp(pattern);
    }
    ~scratch_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    std::string path;
};

void write_file(std::string const& path, std::string const& text, mode_t mode = 0600) {
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
}

// What the upstream saw in the Authorization header of a modern call through the gateway.
std::string whoami(gateway_process& gw, int id, std::vector<header_field> extra = {}) {
    mcp_http c(gw.ep());
    auto const r = only_message(c.post(modern_request(id, "tools/call", call_params("whoami", {})), extra));
    return first_text(result_of(r));
}

TEST(GatewayUpstreamAuth, AHeaderFromTheEnvironmentReachesTheUpstreamAndNoDownstreamTokenDoes) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    protected_upstream up({"STATIC_TOKEN=from-env"});
    ASSERT_FALSE(up.url().empty());
    ::setenv("DUET_TEST_UPSTREAM_AUTH", "Bearer from-env", 1);
    gateway_process gw(up.url(), {"--upstream-header", "Authorization=env:DUET_TEST_UPSTREAM_AUTH"});
    EXPECT_EQ(whoami(gw, 1), "Bearer from-env");
    EXPECT_EQ(whoami(gw, 2, {{"Authorization", "Bearer downstream-secret"}}), "Bearer from-env")
        << "a downstream token must never go upstream";
    EXPECT_EQ(gw.stderr_text().find("from-env"), std::string::npos) << "the value is never logged";
}

TEST(GatewayUpstreamAuth, AHeaderFromAFileReachesOnlyTheUpstreamItNames) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    scratch_dir dir;
    write_file(dir.path + "/token", "Bearer from-file\n");
    protected_upstream guarded({"STATIC_TOKEN=from-file"});
    protected_upstream other({"STATIC_TOKEN=other"});
    std::vector<std::string> args{"--upstream",        "guarded=" + guarded.url(),
                                  "--upstream",        "other=" + other.url(),
                                  "--upstream-header", "guarded:Authorization=file:" + dir.path + "/token",
                                  "--upstream-header", "other:Authorization=env:DUET_TEST_OTHER"};
    // With DUET_TEST_OTHER unset the gateway refuses to start, naming the variable.
    ::unsetenv("DUET_TEST_OTHER");
    std::vector<std::string> refused{DUET_BINARY, "gateway", "--port", "0"};
    refused.insert(refused.end(), args.begin(), args.end());
    child_process gw(refused, child_process::input::null);
    EXPECT_EQ(gw.wait_exit(std::chrono::seconds(20)), 2);
    EXPECT_NE(gw.stderr_text().find("the environment has no DUET_TEST_OTHER"), std::string::npos)
        << gw.stderr_text();

    ::setenv("DUET_TEST_OTHER", "Bearer other", 1);
    gateway_process served(args);
    auto guarded_ep = served.ep();
    guarded_ep.path = "/mcp/guarded";
    mcp_http g(guarded_ep);
    auto const r = only_message(g.post(modern_request(1, "tools/call", call_params("whoami", {}))));
    EXPECT_EQ(first_text(result_of(r)), "Bearer from-file");
    auto other_ep = served.ep();
    other_ep.path = "/mcp/other";
    mcp_http o(other_ep);
    auto const r2 = only_message(o.post(modern_request(2, "tools/call", call_params("whoami", {}))));
    EXPECT_EQ(first_text(result_of(r2)), "Bearer other");
}

TEST(GatewayUpstreamAuth, ALiteralHeaderValueIsAUsageError) {
    child_process gw({DUET_BINARY, "gateway", "--port", "0", "--upstream", "http://127.0.0.1:9/mcp",
                      "--upstream-header", "Authorization=Bearer on-the-command-line"},
                     child_process::input::null);
    EXPECT_EQ(gw.wait_exit(std::chrono::seconds(20)), 2);
    auto const err = gw.stderr_text();
    EXPECT_NE(err.find("env:VAR or file:PATH"), std::string::npos) << err;
    EXPECT_EQ(err.find("on-the-command-line"), std::string::npos) << "the secret is not echoed";
}

TEST(GatewayUpstreamAuth, TheClientCredentialsGrantGetsATokenTheUpstreamAccepts) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    scratch_dir dir;
    write_file(dir.path + "/secret", "gw-secret\n");
    protected_upstream up({"CLIENT_ID=gw-client", "CLIENT_SECRET=gw-secret"});
    gateway_process gw(up.url(), {"--upstream-client-id", "gw-client", "--upstream-client-secret-file",
                                  dir.path + "/secret"});
    EXPECT_EQ(whoami(gw, 1).rfind("Bearer cc-", 0), 0u) << gw.stderr_text();
    EXPECT_NE(up.log().find("grant client_credentials resource=" + up.url()), std::string::npos) << up.log();
}

TEST(GatewayUpstreamAuth, AWrongClientSecretFailsAtStartNamingTheUpstream) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    scratch_dir dir;
    write_file(dir.path + "/secret", "not-it");
    protected_upstream up({"CLIENT_ID=gw-client", "CLIENT_SECRET=gw-secret"});
    child_process gw({DUET_BINARY, "gateway", "--port", "0", "--upstream", up.url(), "--upstream-client-id",
                      "gw-client", "--upstream-client-secret-file", dir.path + "/secret"},
                     child_process::input::null);
    EXPECT_EQ(gw.wait_exit(std::chrono::seconds(30)), 3);
    auto const err = gw.stderr_text();
    EXPECT_NE(err.find(up.url()), std::string::npos) << err;
    EXPECT_NE(err.find("invalid_client"), std::string::npos) << err;
}

TEST(GatewayUpstreamAuth, StoredLoginTokensAreRefreshedWhenExpiredAndKept) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    scratch_dir dir;
    protected_upstream up({"CLIENT_ID=cli-client", "CLIENT_SECRET=cli-secret", "REFRESH_TOKEN=keep-me"});
    auto const origin = up.url().substr(0, up.url().size() - 4);
    // What `duet login` would have stored: an expired access token, its refresh token, the registration.
    ::mkdir((dir.path + "/duet").c_str(), 0700);
    json::object tokens{{"issuer", origin},       {"resource", up.url()},       {"access_token", "stale"},
                        {"token_type", "Bearer"}, {"refresh_token", "keep-me"}, {"scopes", json::array{}},
                        {"expires_at", 1000},     {"client_id", "cli-client"}};
    json::object registration{{"issuer", origin},
                              {"client_id", "cli-client"},
                              {"client_secret", "cli-secret"},
                              {"token_endpoint_auth_method", "client_secret_basic"}};
    json::object doc{{"tokens", json::array{tokens}}, {"registrations", json::array{registration}}};
    write_file(dir.path + "/duet/credentials.json", json::serialize(doc));
    ::setenv("XDG_CONFIG_HOME", dir.path.c_str(), 1);
    gateway_process gw(up.url(), {"--upstream-login"});
    EXPECT_EQ(whoami(gw, 1).rfind("Bearer refreshed-", 0), 0u) << gw.stderr_text() << up.log();
    EXPECT_NE(up.log().find("grant refresh_token"), std::string::npos) << up.log();
    std::ifstream in(dir.path + "/duet/credentials.json");
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_NE(text.str().find("refreshed-"), std::string::npos)
        << "the refreshed token is kept: " << text.str();
    EXPECT_EQ(text.str().find("\"stale\""), std::string::npos);
}

TEST(GatewayUpstreamAuth, WithoutStoredTokensTheGatewayRefusesToStartNamingDuetLogin) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    scratch_dir dir;
    protected_upstream up({"CLIENT_ID=x", "CLIENT_SECRET=y"});
    ::setenv("XDG_CONFIG_HOME", dir.path.c_str(), 1);
    child_process gw({DUET_BINARY, "gateway", "--port", "0", "--upstream", up.url(), "--upstream-login"},
                     child_process::input::null);
    EXPECT_EQ(gw.wait_exit(std::chrono::seconds(30)), 3);
    EXPECT_NE(gw.stderr_text().find("duet login " + up.url()), std::string::npos) << gw.stderr_text();
}

} // namespace gateway_upstream_auth
