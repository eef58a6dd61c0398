// The token endpoint side of the flow: each way of authenticating the client on a token request, the choice
// of that way from the server's metadata, and the reading of the answer into tokens (or into an error in the
// server's words).
//
// Requirement tags: RFC 6749 §2.3.1 (client_secret_basic: id and secret form-encoded, then Basic; or both in
// the body) https://www.rfc-editor.org/rfc/rfc6749#section-2.3.1, §2.1 / §3.2.1 (a public client sends its
// client_id), §5.1 (access_token, token_type, expires_in, refresh_token, scope: absent means as requested),
// §5.2 (error, error_description); RFC 6750 §4 / §7.1 (Bearer, case-insensitive); RFC 7523 §2.2 and RFC 7521
// §4.2 (client_assertion_type, client_assertion); RFC 8414 §2 (token_endpoint_auth_methods_supported,
// client_secret_basic when omitted); RFC 7591 §2 (method names); RFC 7617 §2 (Basic).
#include "auth/fetch.hpp"
#include "auth/token_endpoint.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace {

using namespace duet::auth;
using namespace duet::auth::detail;
using namespace std::chrono_literals;

constexpr char token_url[] = "https://auth.example/token";

form code_grant() {
    return {{"grant_type", "authorization_code"},
            {"code", "c0de"},
            {"redirect_uri", "http://127.0.0.1:5555/callback"},
            {"code_verifier", "v"},
            {"resource", "https://mcp.example/mcp"}};
}

std::optional<std::string> body_field(http_request const& r, std::string const& name) {
    bool several = false;
    auto v = query_value("?" + r.body, name, &several);
    EXPECT_FALSE(several) << name << " twice in " << r.body;
    return v;
}

std::optional<std::string> header_of(http_request const& r, std::string const& name) {
    std::optional<std::string> found;
    for (auto const& h : r.headers)
        if (h.first == name) {
            EXPECT_FALSE(found.has_value()) << name << " twice";
            found = h.second;
        }
    return found;
}

void expect_form_post(http_request const& r) {
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.url, token_url);
    EXPECT_EQ(header_of(r, "Content-Type"), "application/x-www-form-urlencoded");
    EXPECT_EQ(body_field(r, "grant_type"), "authorization_code");
    EXPECT_EQ(body_field(r, "code"), "c0de");
    EXPECT_EQ(body_field(r, "resource"), "https://mcp.example/mcp");
    EXPECT_TRUE(r.body.starts_with("grant_type=authorization_code&code=c0de&")) << r.body;
}

// ---------------------------------------------------------------------------------------------------------------
// RFC 6749 §2.3.1 and RFC 7523 §2.2: the client's credentials on the request.

TEST(TokenEndpoint, PublicClientSendsItsIdInTheBody) {
    auto const r = token_request(token_url, code_grant(), client_auth{"app-1", "", "none", ""});
    expect_form_post(r);
    EXPECT_EQ(body_field(r, "client_id"), "app-1");
    EXPECT_EQ(body_field(r, "client_secret"), std::nullopt);
    EXPECT_EQ(body_field(r, "client_assertion"), std::nullopt);
    EXPECT_EQ(header_of(r, "Authorization"), std::nullopt);
}

TEST(TokenEndpoint, ClientSecretPostSendsIdAndSecretInTheBody) {
    auto const r =
        token_request(token_url, code_grant(), client_auth{"app 1", "s&cr t", "client_secret_post", ""});
    expect_form_post(r);
    EXPECT_EQ(body_field(r, "client_id"), "app 1");
    EXPECT_EQ(body_field(r, "client_secret"), "s&cr t");
    EXPECT_EQ(header_of(r, "Authorization"), std::nullopt);
}

// RFC 6749 §2.3.1: "my client:1" and "s&cr t" are form-encoded to "my+client%3A1" and "s%26cr+t" first; the
// expected value is Python's base64.b64encode(b"my+client%3A1:s%26cr+t").
TEST(TokenEndpoint, ClientSecretBasicFormEncodesBeforeBase64) {
    auto const r = token_request(token_url, code_grant(),
                                 client_auth{"my client:1", "s&cr t", "client_secret_basic", ""});
    expect_form_post(r);
    EXPECT_EQ(header_of(r, "Authorization"), "Basic bXkrY2xpZW50JTNBMTpzJTI2Y3IrdA==");
    EXPECT_EQ(body_field(r, "client_id"), std::nullopt);
    EXPECT_EQ(body_field(r, "client_secret"), std::nullopt);
}

TEST(TokenEndpoint, ClientSecretBasicOfPlainCredentials) {
    // base64("client:secret") per RFC 7617 §2; nothing to escape.
    auto const r =
        token_request(token_url, code_grant(), client_auth{"client", "secret", "client_secret_basic", ""});
    EXPECT_EQ(header_of(r, "Authorization"), "Basic Y2xpZW50OnNlY3JldA==");
}

TEST(TokenEndpoint, PrivateKeyJwtSendsTheAssertionInTheBody) {
    auto const r =
        token_request(token_url, code_grant(), client_auth{"machine", "unused", "private_key_jwt", "h.c.s"});
    expect_form_post(r);
    EXPECT_EQ(body_field(r, "client_assertion_type"),
              "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
    EXPECT_EQ(body_field(r, "client_assertion"), "h.c.s");
    EXPECT_EQ(body_field(r, "client_secret"), std::nullopt);
    EXPECT_EQ(header_of(r, "Authorization"), std::nullopt);
}

// ---------------------------------------------------------------------------------------------------------------
// RFC 8414 §2: which method to use, from what the server lists.

struct auth_method_case {
    std::string name;
    std::optional<std::vector<std::string>> listed;
    bool has_secret;
    std::string method;

    friend void PrintTo(auth_method_case const& row, std::ostream* os) { *os << row.name; }
};

class TokenEndpointChoosesMethod : public ::testing::TestWithParam<auth_method_case> {};

TEST_P(TokenEndpointChoosesMethod, FromTheServersList) {
    server_metadata as;
    as.token_endpoint_auth_methods_supported = GetParam().listed;
    EXPECT_EQ(choose_auth_method(as, GetParam().has_secret), GetParam().method);
}

using AM = auth_method_case;
using names = std::vector<std::string>;

INSTANTIATE_TEST_SUITE_P(
    TokenEndpoint, TokenEndpointChoosesMethod,
    ::testing::Values(
        AM{"NoSecretNothingListed", std::nullopt, false, "none"},
        AM{"NoSecretBasicListed", names{"client_secret_basic"}, false, "none"},
        AM{"SecretNothingListedIsBasicByDefault", std::nullopt, true, "client_secret_basic"},
        AM{"SecretBasicListed", names{"client_secret_basic"}, true, "client_secret_basic"},
        AM{"SecretBothListedPrefersBasic", names{"client_secret_post", "client_secret_basic"}, true,
           "client_secret_basic"},
        AM{"SecretOnlyPostListed", names{"none", "client_secret_post"}, true, "client_secret_post"},
        AM{"SecretNeitherListedFallsBackToBasic", names{"private_key_jwt"}, true, "client_secret_basic"},
        AM{"SecretEmptyListFallsBackToBasic", names{}, true, "client_secret_basic"}),
    [](auto const& row) { return row.param.name; });

// ---------------------------------------------------------------------------------------------------------------
// RFC 6749 §5.1 and §5.2: the answer.

auto const now = std::chrono::system_clock::time_point(std::chrono::seconds(1'750'000'000));

http_response answer(unsigned status, std::string body) {
    http_response r;
    r.status = status;
    r.headers = {{"Content-Type", "application/json"}};
    r.body = std::move(body);
    return r;
}

duet::client::result<token_set> read_answer(http_response const& a,
                                            std::vector<std::string> const& requested = {"req"}) {
    return read_token_response(a, "https://auth.example", "https://mcp.example/mcp", requested, now);
}

TEST(TokenEndpoint, ReadsASuccessfulAnswer) {
    auto const t =
        read_answer(answer(200, R"({"access_token": "at-1", "token_type": "Bearer", "expires_in": 3600,
        "refresh_token": "rt-1", "scope": "files:read  files:write"})"));
    ASSERT_TRUE(t.has_value()) << t.error().message;
    EXPECT_EQ(t->issuer, "https://auth.example");
    EXPECT_EQ(t->resource, "https://mcp.example/mcp");
    EXPECT_EQ(t->access_token, "at-1");
    EXPECT_EQ(t->token_type, "Bearer");
    EXPECT_EQ(t->refresh_token, "rt-1");
    EXPECT_EQ(t->expires_at, now + 3600s);
    EXPECT_EQ(t->scopes, (std::vector<std::string>{"files:read", "files:write"}));
}

TEST(TokenEndpoint, ScopeAbsentMeansAsRequested) {
    auto const t = read_answer(answer(200, R"({"access_token": "at", "token_type": "Bearer"})"), {"a", "b"});
    ASSERT_TRUE(t.has_value()) << t.error().message;
    EXPECT_EQ(t->scopes, (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(t->refresh_token, "");
    EXPECT_EQ(t->expires_at, std::nullopt);
}

TEST(TokenEndpoint, TokenTypeIsCaseInsensitive) {
    auto const t =
        read_answer(answer(200, R"({"access_token": "at", "token_type": "bearer", "expires_in": 0})"));
    ASSERT_TRUE(t.has_value()) << t.error().message;
    EXPECT_EQ(t->access_token, "at");
    EXPECT_EQ(t->expires_at, std::nullopt); // 0 seconds is no lifetime to keep
}

// A lifetime too long to represent (a hostile or broken server) must not wrap around into the past, which
// would have the token refreshed before every request, or into undefined behaviour.
TEST(TokenEndpoint, HugeExpiresInStaysInTheFuture) {
    for (auto const* lifetime : {"1e300", "9223372036854775807", "1e10"}) {
        auto const t = read_answer(
            answer(200, std::string(R"({"access_token": "at", "token_type": "Bearer", "expires_in": )") +
                            lifetime + "}"));
        ASSERT_TRUE(t.has_value()) << t.error().message;
        if (t->expires_at) {
            EXPECT_GT(*t->expires_at, now + std::chrono::hours(24 * 365)) << lifetime;
        }
        EXPECT_FALSE(t->expires_within(std::chrono::seconds(60), now)) << lifetime;
    }
}

struct bad_answer_case {
    std::string name;
    unsigned status;
    std::string body;
    std::vector<std::string> named; ///< what the message must mention

    friend void PrintTo(bad_answer_case const& row, std::ostream* os) { *os << row.name; }
};

class TokenEndpointRefusesAnswer : public ::testing::TestWithParam<bad_answer_case> {};

TEST_P(TokenEndpointRefusesAnswer, GivesAnErrorInTheServersWords) {
    auto const& row = GetParam();
    auto const t = read_answer(answer(row.status, row.body));
    ASSERT_FALSE(t.has_value()) << "token " << t->access_token;
    EXPECT_EQ(t.error().code, duet::client::errc::auth_required);
    EXPECT_TRUE(t.error().message.starts_with("the token endpoint ")) << t.error().message;
    for (auto const& part : row.named)
        EXPECT_NE(t.error().message.find(part), std::string::npos)
            << part << " not in: " << t.error().message;
}

using BA = bad_answer_case;

INSTANTIATE_TEST_SUITE_P(
    TokenEndpoint, TokenEndpointRefusesAnswer,
    ::testing::Values(
        BA{"ErrorWithDescription",
           400,
           R"({"error": "invalid_grant", "error_description": "code expired"})",
           {"HTTP 400", ": invalid_grant (code expired)"}},
        BA{"ErrorWithoutDescription", 401, R"({"error": "invalid_client"})", {"HTTP 401", "invalid_client"}},
        BA{"ErrorWithoutJson", 500, "Internal Server Error", {"HTTP 500"}},
        BA{"NonOkEvenWithAToken", 201, R"({"access_token": "at", "token_type": "Bearer"})", {"HTTP 201"}},
        BA{"MissingAccessToken", 200, R"({"token_type": "Bearer"})", {"access_token"}},
        BA{"EmptyAccessToken", 200, R"({"access_token": "", "token_type": "Bearer"})", {"access_token"}},
        BA{"AccessTokenNotAString", 200, R"({"access_token": 7, "token_type": "Bearer"})", {"access_token"}},
        BA{"MissingTokenType", 200, R"({"access_token": "at"})", {"token_type"}},
        BA{"MacTokenType", 200, R"({"access_token": "at", "token_type": "mac"})", {"mac", "Bearer"}},
        BA{"DpopTokenType", 200, R"({"access_token": "at", "token_type": "DPoP"})", {"DPoP"}},
        BA{"BadJson", 200, R"({"access_token": "at", )", {"no JSON object"}},
        BA{"JsonArray", 200, R"(["at"])", {"no JSON object"}}, BA{"EmptyBody", 200, "", {"no JSON object"}}),
    [](auto const& row) { return row.param.name; });

} // namespace
