// `duet login`, `duet call`, `duet auth status` and `duet logout` end to end against a real authorization
// server: oidc-provider (tests/interop/peers/oauth_authorization_server.mjs) in front of an MCP server on the
// TypeScript SDK that checks its JWTs (oauth_protected_server.mjs). The test plays the browser with plain
// HTTP and a cookie jar: it reads the authorization URL from `duet login`'s stderr, follows the redirects
// through the server's headless login and consent, and finally GETs the loopback callback that `duet login`
// waits on. Each test has a configuration directory of its own ($XDG_CONFIG_HOME), so the credentials file
// starts empty.
#include "client/oauth_login.hpp"
#include "client/sync_client.hpp"
#include "client/url_process.hpp"
#include "support/child_process.hpp"
#include "support/files.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <poll.h>
#include <pty.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

namespace oauth_e2e {

namespace json = boost::json;
using namespace std::chrono_literals;
using duet::test::child_process;

// Access tokens live this long, so that a test sees one expire without waiting long.
constexpr auto token_ttl = 3s;

using duet::test::oauth_login::headless_browser;
using duet::test::oauth_login::interop_dir;
using duet::test::oauth_login::log_count;
using duet::test::oauth_login::login;
using duet::test::oauth_login::oauth_home;
using duet::test::oauth_login::oauth_peer_node;
using duet::test::oauth_login::oauth_wait;
using duet::test::oauth_login::redirect_uri_of;
using duet::test::oauth_login::run_duet;
using duet::test::oauth_login::stored_tokens;
using duet::test::oauth_login::string_field;

// The authorization server and the MCP server it protects, both on loopback.
struct oauth_peers {
    oauth_peers(oauth_home const& home, std::vector<std::string> extra = {})
        : authorization_server(as_argv(home, std::move(extra))),
          mcp_server({oauth_peer_node(), interop_dir() + "/peers/oauth_protected_server.mjs",
                      authorization_server.url()}) {}

    static std::vector<std::string> as_argv(oauth_home const& home, std::vector<std::string> extra) {
        std::vector<std::string> argv{oauth_peer_node(),
                                      interop_dir() + "/peers/oauth_authorization_server.mjs",
                                      "--access-token-ttl",
                                      std::to_string(token_ttl.count()),
                                      "--log",
                                      home.log_file()};
        argv.insert(argv.end(), extra.begin(), extra.end());
        return argv;
    }

    duet::test::client_side::url_process authorization_server;
    duet::test::client_side::url_process mcp_server;
};

mode_t permissions(std::string const& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        ADD_FAILURE() << "stat " << path;
    return st.st_mode & 07777;
}

TEST(OAuthEndToEnd, LoginKeepsRefreshableTokensThatCallsUseRefreshAndLogoutForgets) {
    DUET_SKIP_WITHOUT_OIDC_PROVIDER();
    oauth_home home;
    oauth_peers peers(home);
    auto const& mcp = peers.mcp_server.url();
    auto const& issuer = peers.authorization_server.url();
    ASSERT_FALSE(mcp.empty());

    auto const logged_in = login(mcp);
    ASSERT_EQ(logged_in.code, 0) << logged_in.out << logged_in.err << duet::test::read_file(home.log_file());
    EXPECT_NE(logged_in.out.find("logged in to " + mcp), std::string::npos) << logged_in.out;
    EXPECT_NE(logged_in.out.find("issuer " + issuer + ","), std::string::npos) << logged_in.out;
    EXPECT_NE(logged_in.out.find("scopes mcp:tools"), std::string::npos) << logged_in.out;
    EXPECT_NE(logged_in.out.find("refreshable"), std::string::npos)
        << "offline_access was granted: " << logged_in.out;
    EXPECT_EQ(log_count(home, "grant authorization_code"), 1u) << duet::test::read_file(home.log_file());

    // Private: the directory 0700 and the file 0600.
    EXPECT_EQ(permissions(home.credentials_dir()), 0700);
    EXPECT_EQ(permissions(home.credentials_file()), 0600);

    auto const first = run_duet({"call", mcp, "whoami"});
    EXPECT_EQ(first.code, 0) << first.out << first.err;
    EXPECT_NE(first.out.find("subject duet-test-user scopes mcp:tools"), std::string::npos) << first.out;

    // A token that lives shorter than the client's refresh margin is refreshed once per call, not before each
    // of the call's several requests.
    EXPECT_LE(log_count(home, "grant refresh_token"), 1u) << duet::test::read_file(home.log_file());

    // Status names the server, its issuer and scopes, and no token.
    auto const tokens = stored_tokens(home);
    auto const access_token = string_field(tokens, "access_token");
    auto const refresh_token = string_field(tokens, "refresh_token");
    ASSERT_FALSE(access_token.empty()) << json::serialize(tokens);
    ASSERT_FALSE(refresh_token.empty()) << json::serialize(tokens);
    auto const status = run_duet({"auth", "status", "--json"});
    EXPECT_EQ(status.code, 0) << status.err;
    EXPECT_EQ(status.out.find(access_token), std::string::npos) << status.out;
    EXPECT_EQ(status.out.find(refresh_token), std::string::npos) << status.out;
    boost::system::error_code ec;
    auto const rows = json::parse(status.out, ec);
    ASSERT_FALSE(ec) << status.out;
    ASSERT_TRUE(rows.is_array() && rows.as_array().size() == 1) << status.out;
    auto const& row = rows.as_array()[0].as_object();
    EXPECT_EQ(string_field(row, "resource"), mcp);
    EXPECT_EQ(string_field(row, "issuer"), issuer);
    ASSERT_TRUE(row.contains("scopes") && row.at("scopes").is_array()) << status.out;
    EXPECT_NE(std::find(row.at("scopes").as_array().begin(), row.at("scopes").as_array().end(),
                        json::value("mcp:tools")),
              row.at("scopes").as_array().end())
        << status.out;
    EXPECT_EQ(row.at("refreshable"), json::value(true)) << status.out;

    // Once the access token has expired, a call still succeeds: the client refreshed it first.
    auto const refreshes_before = log_count(home, "grant refresh_token");
    std::this_thread::sleep_for(token_ttl + 1s);
    auto const later = run_duet({"call", mcp, "whoami"});
    EXPECT_EQ(later.code, 0) << later.out << later.err;
    EXPECT_NE(later.out.find("subject duet-test-user scopes mcp:tools"), std::string::npos) << later.out;
    EXPECT_EQ(log_count(home, "grant refresh_token"), refreshes_before + 1)
        << duet::test::read_file(home.log_file());
    auto const renewed = stored_tokens(home);
    EXPECT_NE(string_field(renewed, "access_token"), access_token) << "the refreshed token is kept";
    EXPECT_NE(string_field(renewed, "refresh_token"), refresh_token) << "the rotated refresh token is kept";
    EXPECT_EQ(permissions(home.credentials_file()), 0600) << "rewritten, still private";

    auto const out = run_duet({"logout", mcp});
    EXPECT_EQ(out.code, 0) << out.err;
    EXPECT_NE(out.out.find("logged out of " + mcp), std::string::npos) << out.out;
    auto const refused = run_duet({"call", mcp, "whoami"});
    EXPECT_EQ(refused.code, 6) << refused.out << refused.err;
    EXPECT_NE(refused.err.find("duet login"), std::string::npos) << refused.err;
    EXPECT_EQ(log_count(home, "grant authorization_code"), 1u) << "nothing logged in again without a user";
}

TEST(OAuthEndToEnd, ConsentDeniedFailsLoginWithTheServersErrorAndKeepsNoTokens) {
    DUET_SKIP_WITHOUT_OIDC_PROVIDER();
    oauth_home home;
    oauth_peers peers(home, {"--deny"});
    auto const& mcp = peers.mcp_server.url();
    ASSERT_FALSE(mcp.empty());

    auto const denied = login(mcp);
    EXPECT_EQ(denied.code, 6) << denied.out << denied.err;
    EXPECT_NE(denied.err.find("refused: access_denied"), std::string::npos) << denied.err;
    EXPECT_NE(denied.err.find("the test user declined to authorize this client"), std::string::npos)
        << denied.err;
    EXPECT_EQ(log_count(home, "denied"), 1u) << duet::test::read_file(home.log_file());
    EXPECT_EQ(log_count(home, "grant authorization_code"), 0u) << duet::test::read_file(home.log_file());

    auto const status = run_duet({"auth", "status", "--json"});
    EXPECT_EQ(status.code, 0) << status.err;
    EXPECT_EQ(status.out, "[]\n");
}

// At a terminal a command that meets a 401 authorizes by itself: the URL on the terminal, the browser's
// redirect awaited, then the call goes on. No `duet login` first.
TEST(OAuthEndToEnd, ACallAtATerminalRunsTheAuthorizationItself) {
    DUET_SKIP_WITHOUT_OIDC_PROVIDER();
    oauth_home home;
    oauth_peers peers(home);
    auto const& mcp = peers.mcp_server.url();
    ASSERT_FALSE(mcp.empty());

    int terminal = -1;
    pid_t const pid = ::forkpty(&terminal, nullptr, nullptr, nullptr);
    if (pid < 0)
        GTEST_SKIP() << "this machine gives no pseudo-terminals";
    if (pid == 0) {
        ::execl(DUET_BINARY, DUET_BINARY, "call", mcp.c_str(), "whoami", static_cast<char*>(nullptr));
        ::_exit(127);
    }
    std::string screen;
    bool authorized = false;
    std::string const intro = "Open this URL in a browser:";
    auto const deadline = std::chrono::steady_clock::now() + oauth_wait;
    while (std::chrono::steady_clock::now() < deadline) {
        pollfd p{terminal, POLLIN, 0};
        if (::poll(&p, 1, duet::test::poll_ms_until(deadline)) <= 0)
            continue;
        char buffer[1024];
        auto const n = ::read(terminal, buffer, sizeof buffer);
        if (n <= 0)
            break; // the command ended and closed the terminal
        screen.append(buffer, static_cast<std::size_t>(n));
        auto const at = screen.find(intro);
        auto const start = at == std::string::npos ? at : screen.find("http", at);
        auto const end = start == std::string::npos ? start : screen.find_first_of("\r\n", start);
        if (!authorized && end != std::string::npos) {
            authorized = true;
            auto const url = screen.substr(start, end - start);
            headless_browser browser;
            browser.authorize(url, redirect_uri_of(url) + "?");
        }
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    ::close(terminal);
    EXPECT_TRUE(authorized) << "no authorization URL on the terminal:\n" << screen;
    ASSERT_TRUE(WIFEXITED(status)) << screen;
    EXPECT_EQ(WEXITSTATUS(status), 0) << screen;
    EXPECT_NE(screen.find("subject duet-test-user scopes mcp:tools"), std::string::npos) << screen;
    EXPECT_EQ(log_count(home, "grant authorization_code"), 1u) << duet::test::read_file(home.log_file());
    EXPECT_EQ(permissions(home.credentials_file()), 0600) << "the tokens are kept for the next command";
}

} // namespace oauth_e2e
