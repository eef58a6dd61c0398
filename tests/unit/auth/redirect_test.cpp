// The authorization request the user is sent with, and the redirect that comes back: the URL carries the
// code flow's parameters (PKCE S256, state, resource) and the redirect's code is used only once its error,
// state and issuer are checked.
//
// Requirement tags: OAuth 2.1 draft §4.1.1 (authorization request: response_type, client_id, redirect_uri,
// state, code_challenge, code_challenge_method) and §4.1.2 / §4.1.2.1 (response: code and state; error and
// error_description) https://datatracker.ietf.org/doc/html/draft-ietf-oauth-v2-1; OAuth 2.1 §7.12 / RFC 6749
// §10.12 (state checked); RFC 8707 §2 (resource); RFC 9207 §2.4 (iss compared by simple string comparison,
// required when the server advertises authorization_response_iss_parameter_supported)
// https://www.rfc-editor.org/rfc/rfc9207#section-2.4; RFC 3986 §3.4 (a query's '?'); MCP 2025-11-25
// basic/authorization "Resource Parameter Implementation" (the canonical URI, as given) and "Authorization
// Code Protection".
#include "auth/fetch.hpp"
#include "auth/grants.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace {

using namespace duet::auth;
using namespace duet::auth::detail;

constexpr char issuer[] = "https://auth.example";
constexpr char this_state[] = "st-4Yw_9k";

server_metadata issuer_metadata(bool advertises_iss) {
    server_metadata as;
    as.issuer = issuer;
    as.authorization_endpoint = "https://auth.example/authorize";
    as.token_endpoint = "https://auth.example/token";
    as.authorization_response_iss_parameter_supported = advertises_iss;
    return as;
}

// ---------------------------------------------------------------------------------------------------------------
// Redirects whose code must not be used.

struct refused_redirect_case {
    std::string name;
    std::string redirect;
    bool advertises_iss;
    std::string named; ///< what the refusal must mention

    friend void PrintTo(refused_redirect_case const& row, std::ostream* os) { *os << row.name; }
};

class RedirectRefused : public ::testing::TestWithParam<refused_redirect_case> {};

TEST_P(RedirectRefused, GivesNoCode) {
    auto const& row = GetParam();
    auto const code = read_redirect(row.redirect, this_state, issuer_metadata(row.advertises_iss));
    ASSERT_FALSE(code.has_value()) << "code " << *code;
    EXPECT_EQ(code.error().code, duet::client::errc::auth_required);
    EXPECT_NE(code.error().message.find(row.named), std::string::npos) << code.error().message;
}

using RR = refused_redirect_case;
constexpr char cb[] = "http://127.0.0.1:5555/callback";

INSTANTIATE_TEST_SUITE_P(
    Redirect, RedirectRefused,
    ::testing::Values(
        // OAuth 2.1 §4.1.2.1: the server's refusal, in its words
        RR{"ErrorWithDescription",
           cb + std::string("?error=access_denied&error_description=The+user+said+no&state=") + this_state,
           false, "refused: access_denied (The user said no)"},
        RR{"ErrorWithoutDescription", cb + std::string("?error=server_error&state=") + this_state, false,
           "refused: server_error"},
        RR{"ErrorEvenWithACode", cb + std::string("?error=invalid_scope&code=c&state=") + this_state, false,
           "invalid_scope"},
        // RFC 6749 §10.12: state
        RR{"MissingState", cb + std::string("?code=abc"), false, "state"},
        RR{"WrongState", cb + std::string("?code=abc&state=other"), false, "state"},
        RR{"EmptyState", cb + std::string("?code=abc&state="), false, "state"},
        RR{"StatePrefixOnly", cb + std::string("?code=abc&state=st-4Yw"), false, "state"},
        RR{"StateTwice", cb + std::string("?code=abc&state=") + this_state + "&state=" + this_state, false,
           "state"},
        RR{"StateTwiceSecondRight", cb + std::string("?code=abc&state=other&state=") + this_state, false,
           "state"},
        RR{"NoQueryAtAll", cb, false, "state"},
        // OAuth 2.1 §4.1.2: the code
        RR{"MissingCode", cb + std::string("?state=") + this_state, false, "no code"},
        RR{"EmptyCode", cb + std::string("?code=&state=") + this_state, false, "no code"},
        RR{"CodeTwice", cb + std::string("?code=a&code=b&state=") + this_state, false, "no code"},
        // RFC 9207 §2.4: iss, compared exactly
        RR{"IssDifferent",
           cb + std::string("?code=abc&state=") + this_state + "&iss=https%3A%2F%2Fevil.example", true,
           "https://evil.example"},
        RR{"IssWithTrailingSlash",
           cb + std::string("?code=abc&state=") + this_state + "&iss=https%3A%2F%2Fauth.example%2F", true,
           "https://auth.example/"},
        RR{"IssOtherCase",
           cb + std::string("?code=abc&state=") + this_state + "&iss=https%3A%2F%2FAUTH.example", true,
           "issuer"},
        RR{"IssAbsentThoughAdvertised", cb + std::string("?code=abc&state=") + this_state, true,
           "promises an iss parameter"},
        RR{"IssWrongThoughNotAdvertised",
           cb + std::string("?code=abc&state=") + this_state + "&iss=https%3A%2F%2Fevil.example", false,
           "https://evil.example"},
        RR{"IssTwice",
           cb + std::string("?code=abc&state=") + this_state +
               "&iss=https%3A%2F%2Fauth.example&iss=https%3A%2F%2Fevil.example",
           true, "issuer"}),
    [](auto const& row) { return row.param.name; });

// ---------------------------------------------------------------------------------------------------------------
// Redirects whose code is used.

struct accepted_redirect_case {
    std::string name;
    std::string redirect;
    bool advertises_iss;
    std::string code;

    friend void PrintTo(accepted_redirect_case const& row, std::ostream* os) { *os << row.name; }
};

class RedirectAccepted : public ::testing::TestWithParam<accepted_redirect_case> {};

TEST_P(RedirectAccepted, GivesTheCode) {
    auto const& row = GetParam();
    auto const code = read_redirect(row.redirect, this_state, issuer_metadata(row.advertises_iss));
    ASSERT_TRUE(code.has_value()) << code.error().message;
    EXPECT_EQ(*code, row.code);
}

using RA = accepted_redirect_case;

INSTANTIATE_TEST_SUITE_P(
    Redirect, RedirectAccepted,
    ::testing::Values(
        RA{"CorrectIssAdvertised",
           cb + std::string("?code=abc&state=") + this_state + "&iss=https%3A%2F%2Fauth.example", true,
           "abc"},
        RA{"CorrectIssNotAdvertised",
           cb + std::string("?code=abc&state=") + this_state + "&iss=https%3A%2F%2Fauth.example", false,
           "abc"},
        RA{"NoIssNotAdvertised", cb + std::string("?code=abc&state=") + this_state, false, "abc"},
        RA{"AnyOrder", cb + std::string("?state=") + this_state + "&session_state=x&code=abc", false, "abc"},
        RA{"CodeDecoded", cb + std::string("?code=a%2Fb+c%3D&state=") + this_state, false, "a/b c="},
        RA{"FragmentIgnored", cb + std::string("?code=abc&state=") + this_state + "#code=zzz", false, "abc"}),
    [](auto const& row) { return row.param.name; });

// ---------------------------------------------------------------------------------------------------------------
// OAuth 2.1 §4.1.1: the authorization URL.

authorization_context redirect_context(std::string const& endpoint, std::string const& resource) {
    authorization_context ctx;
    ctx.issuer = issuer;
    ctx.server = issuer_metadata(true);
    ctx.server.authorization_endpoint = endpoint;
    ctx.resource = resource;
    return ctx;
}

client_auth public_client(std::string const& id) {
    client_auth c;
    c.client_id = id;
    return c;
}

// The value of `name` in `url`'s query, checked to appear exactly once.
std::optional<std::string> only_value(std::string const& url, std::string const& name) {
    bool several = false;
    auto v = query_value(url, name, &several);
    EXPECT_FALSE(several) << name << " appears more than once in " << url;
    return v;
}

TEST(Redirect, AuthorizationUrlCarriesTheCodeFlowParameters) {
    auto const ctx = redirect_context("https://auth.example/authorize", "https://mcp.example/mcp");
    auto const url = authorization_url(ctx, public_client("https://app.example/client.json"), cb, this_state,
                                       "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
                                       std::vector<std::string>{"files:read", "files:write"});
    EXPECT_TRUE(url.starts_with("https://auth.example/authorize?")) << url;
    EXPECT_EQ(std::count(url.begin(), url.end(), '?'), 1) << url;
    EXPECT_EQ(url.find(' '), std::string::npos) << url;
    EXPECT_EQ(only_value(url, "response_type"), "code");
    EXPECT_EQ(only_value(url, "client_id"), "https://app.example/client.json");
    EXPECT_EQ(only_value(url, "redirect_uri"), cb);
    EXPECT_EQ(only_value(url, "state"), this_state);
    EXPECT_EQ(only_value(url, "code_challenge"), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    EXPECT_EQ(only_value(url, "code_challenge_method"), "S256");
    EXPECT_EQ(only_value(url, "resource"), "https://mcp.example/mcp");
    EXPECT_EQ(only_value(url, "scope"), "files:read files:write");
}

// The resource goes as the context has it: a server at the root gets no '/' added.
TEST(Redirect, AuthorizationUrlResourceIsExactlyAsGiven) {
    auto const ctx = redirect_context("https://auth.example/authorize", "https://mcp.example");
    auto const url = authorization_url(ctx, public_client("c"), cb, this_state, "ch", std::nullopt);
    EXPECT_EQ(only_value(url, "resource"), "https://mcp.example");
    EXPECT_TRUE(url.ends_with("&resource=https%3A%2F%2Fmcp.example")) << url; // no scope follows
    auto const slashed = redirect_context("https://auth.example/authorize", "https://mcp.example/mcp/");
    EXPECT_EQ(only_value(authorization_url(slashed, public_client("c"), cb, this_state, "ch", std::nullopt),
                         "resource"),
              "https://mcp.example/mcp/");
}

TEST(Redirect, AuthorizationUrlOmitsScopeWhenThereIsNone) {
    auto const ctx = redirect_context("https://auth.example/authorize", "https://mcp.example/mcp");
    auto const without = authorization_url(ctx, public_client("c"), cb, this_state, "ch", std::nullopt);
    EXPECT_EQ(query_value(without, "scope"), std::nullopt) << without;
    auto const empty =
        authorization_url(ctx, public_client("c"), cb, this_state, "ch", std::vector<std::string>{});
    EXPECT_EQ(query_value(empty, "scope"), std::nullopt) << empty;
    EXPECT_EQ(only_value(empty, "response_type"), "code");
}

// OpenID providers (oidc-provider among them) drop offline_access without prompt=consent, and with it the
// refresh token; without offline_access nothing prompts the user again.
TEST(Redirect, AuthorizationUrlAsksForConsentOnlyWithOfflineAccess) {
    auto const ctx = redirect_context("https://auth.example/authorize", "https://mcp.example/mcp");
    auto const offline = authorization_url(ctx, public_client("c"), cb, this_state, "ch",
                                           std::vector<std::string>{"mcp:tools", "offline_access"});
    EXPECT_EQ(only_value(offline, "prompt"), "consent");
    EXPECT_EQ(only_value(offline, "scope"), "mcp:tools offline_access");
    auto const online = authorization_url(ctx, public_client("c"), cb, this_state, "ch",
                                          std::vector<std::string>{"mcp:tools"});
    EXPECT_EQ(query_value(online, "prompt"), std::nullopt) << online;
}

// RFC 3986 §3.4: an endpoint that has a query already gets the parameters after '&'.
TEST(Redirect, AuthorizationUrlExtendsAnEndpointsQuery) {
    auto const ctx = redirect_context("https://auth.example/authorize?tenant=a", "https://mcp.example/mcp");
    auto const url = authorization_url(ctx, public_client("c"), cb, this_state, "ch", std::nullopt);
    EXPECT_TRUE(url.starts_with("https://auth.example/authorize?tenant=a&response_type=code&")) << url;
    EXPECT_EQ(std::count(url.begin(), url.end(), '?'), 1) << url;
    EXPECT_EQ(only_value(url, "tenant"), "a");
    EXPECT_EQ(only_value(url, "state"), this_state);
}

} // namespace
