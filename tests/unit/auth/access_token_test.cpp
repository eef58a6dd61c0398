// A resource server's check of a JWT access token: its size and compact form, its header (an allow-listed
// alg, never none or an HMAC, no crit), the key it names or the one key that fits, the signature, then the
// claims (iss exactly, aud, exp required, nbf and iat with leeway) and what the token grants (scopes,
// client). Tokens are minted here with keys OpenSSL makes at run time (unit/auth/jose_minting.hpp).
//
// Requirement tags: RFC 9068 §2.1 (typ at+jwt), §2.2 (claims), §4 (validation: iss exactly, aud, exp, alg,
// signature) https://www.rfc-editor.org/rfc/rfc9068#section-4; RFC 7519 §4.1.1–§4.1.6 (iss, sub, aud, exp,
// nbf, iat), §2 (NumericDate), §7.2 (validation) https://www.rfc-editor.org/rfc/rfc7519#section-7.2; RFC 7515
// §2 (base64url without padding), §4.1.1 (alg), §4.1.4 (kid), §4.1.11 (crit), §5.2 (signing input), §7.1
// (compact serialization) https://www.rfc-editor.org/rfc/rfc7515; RFC 7518 §3.1 (alg values), §3.3 (RSA at
// least 2048 bits), §3.4 (ECDSA r||s), §3.5 (PSS) https://www.rfc-editor.org/rfc/rfc7518#section-3; RFC 8037
// §3.1 (EdDSA); RFC 8725 §2.1, §3.1 (algorithm confusion, allow-listed algorithms); RFC 6750 §3.1
// (invalid_token); RFC 6749 §3.3 (scope).
#include <duet/auth/access_token.hpp>

#include "unit/auth/jose_minting.hpp"

#include <boost/json/array.hpp>

#include <gtest/gtest.h>

#include <openssl/x509.h>

#include <chrono>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace access_token_suite {

using namespace jose_minting;
using duet::auth::jwk_set;
using duet::auth::token_rules;
using duet::auth::verify_access_token;
using std::chrono::seconds;

constexpr std::int64_t now_s = 1'780'000'000; // 2026-05-28T20:26:40Z
auto const now = std::chrono::system_clock::time_point(seconds(now_s));

token_rules rules() {
    token_rules r;
    r.issuer = "https://as.example";
    r.audience = "https://mcp.example/mcp";
    return r;
}

json::object claims() {
    return json::object{{"iss", "https://as.example"},
                        {"aud", "https://mcp.example/mcp"},
                        {"sub", "user-1"},
                        {"client_id", "client-7"},
                        {"exp", now_s + 600},
                        {"iat", now_s - 10},
                        {"nbf", now_s - 10},
                        {"jti", "id-1"},
                        {"scope", "files:read files:write"}};
}

// The authorization server's published keys, one of each type.
jwk_set const& server_keys() {
    static jwk_set const set = key_set_of(
        {public_jwk(rsa_key(), "rsa-1"), public_jwk(p256_key(), "ec-1"), public_jwk(ed25519_key(), "ed-1")});
    return set;
}

json::object header(std::string const& alg, std::string const& kid) {
    json::object h{{"alg", alg}, {"typ", "at+jwt"}};
    if (!kid.empty())
        h["kid"] = kid;
    return h;
}

std::string rs256_token(json::value const& c = claims()) {
    return sign_token(rsa_key(), header("RS256", "rsa-1"), c);
}

// A description is meant for a challenge and a log: it never carries the token itself.
void expect_no_echo(std::string const& description, std::string const& token) {
    if (token.size() < 16)
        return; // too short to tell an echo from the words
    EXPECT_EQ(description.find(token), std::string::npos) << description;
    auto const dot = token.rfind('.');
    if (dot != std::string::npos && token.size() - dot > 20) {
        EXPECT_EQ(description.find(token.substr(dot + 1)), std::string::npos) << description;
    }
    EXPECT_LT(description.size(), 600u);
}

// ---------------------------------------------------------------------------------------------------------------
// RFC 7518 §3.1, RFC 8037 §3.1: each accepted algorithm with its kind of key.

struct algorithm_case {
    std::string name;
    std::string alg;
    EVP_PKEY* (*key)();
    std::string kid;

    friend void PrintTo(algorithm_case const& row, std::ostream* os) { *os << row.name; }
};

class AccessTokenAlgorithm : public ::testing::TestWithParam<algorithm_case> {
protected:
    std::string token() const {
        return sign_token(GetParam().key(), header(GetParam().alg, GetParam().kid), claims());
    }
};

TEST_P(AccessTokenAlgorithm, AcceptsATokenSignedByTheNamedKey) {
    auto const t = token();
    auto const verified = verify_access_token(t, server_keys(), rules(), now);
    ASSERT_TRUE(verified.has_value()) << verified.error().description;
    EXPECT_EQ(verified->issuer, "https://as.example");
    EXPECT_EQ(verified->subject, "user-1");
    EXPECT_EQ(verified->client_id, "client-7");
    EXPECT_EQ(verified->scopes, (std::vector<std::string>{"files:read", "files:write"}));
    ASSERT_TRUE(verified->expires_at.has_value());
    EXPECT_EQ(*verified->expires_at, now + seconds(600));
    EXPECT_EQ(verified->claims.at("jti"), "id-1");
}

TEST_P(AccessTokenAlgorithm, RefusesATamperedPayload) {
    auto t = token();
    auto const first = t.find('.');
    auto const second = t.find('.', first + 1);
    // Another valid base64url payload: the claims with a wider scope, under the original signature.
    auto wider = claims();
    wider["scope"] = "admin";
    t.replace(first + 1, second - first - 1, duet::auth::base64url(duet::jsonrpc::to_json_text(wider)));
    auto const verified = verify_access_token(t, server_keys(), rules(), now);
    ASSERT_FALSE(verified.has_value());
    EXPECT_EQ(verified.error().description,
              "the token's signature does not verify with the key \"" + GetParam().kid + "\"");
    EXPECT_FALSE(verified.error().unknown_key);
}

TEST_P(AccessTokenAlgorithm, RefusesATamperedSignature) {
    auto t = token();
    // Flip a bit of the signature's first byte (its first character's top bits), keeping base64url canonical.
    auto const dot = t.rfind('.');
    t[dot + 1] = t[dot + 1] == 'A' ? 'g' : 'A';
    auto const verified = verify_access_token(t, server_keys(), rules(), now);
    ASSERT_FALSE(verified.has_value());
    EXPECT_NE(verified.error().description.find("signature does not verify"), std::string::npos)
        << verified.error().description;
}

INSTANTIATE_TEST_SUITE_P(AccessToken, AccessTokenAlgorithm,
                         ::testing::Values(algorithm_case{"RS256", "RS256", rsa_key, "rsa-1"},
                                           algorithm_case{"PS256", "PS256", rsa_key, "rsa-1"},
                                           algorithm_case{"ES256", "ES256", p256_key, "ec-1"},
                                           algorithm_case{"EdDSA", "EdDSA", ed25519_key, "ed-1"}),
                         [](auto const& row) { return row.param.name; });

TEST(AccessToken, AcceptsES384WhenTheRulesListIt) {
    auto const keys = key_set_of({public_jwk(p384_key(), "p384")});
    auto r = rules();
    r.algorithms = {"ES384"};
    auto const t = sign_token(p384_key(), header("ES384", "p384"), claims());
    auto const verified = verify_access_token(t, keys, r, now);
    EXPECT_TRUE(verified.has_value()) << verified.error().description;
}

TEST(AccessToken, RefusesAnAlgorithmTheRulesDoNotList) {
    auto const keys = key_set_of({public_jwk(p384_key(), "p384")});
    auto const t = sign_token(p384_key(), header("ES384", "p384"), claims());
    auto const verified = verify_access_token(t, keys, rules(), now);
    ASSERT_FALSE(verified.has_value());
    EXPECT_EQ(verified.error().description,
              "alg \"ES384\" is not among the accepted algorithms (RS256, PS256, ES256, EdDSA)");
}

// ---------------------------------------------------------------------------------------------------------------
// RFC 7519 §4.1, RFC 9068 §4: claims a validly signed token is still refused for. Each row changes the good
// claims and names the words its refusal must hold.

struct claims_refusal_case {
    std::string name;
    std::function<void(json::object&)> change;
    std::string description; ///< the whole description

    friend void PrintTo(claims_refusal_case const& row, std::ostream* os) { *os << row.name; }
};

class AccessTokenClaimsRefused : public ::testing::TestWithParam<claims_refusal_case> {};

TEST_P(AccessTokenClaimsRefused, SaysWhatIsWrong) {
    auto c = claims();
    GetParam().change(c);
    auto const t = rs256_token(c);
    auto const verified = verify_access_token(t, server_keys(), rules(), now);
    ASSERT_FALSE(verified.has_value()) << GetParam().name;
    EXPECT_EQ(verified.error().description, GetParam().description);
    EXPECT_FALSE(verified.error().unknown_key);
    expect_no_echo(verified.error().description, t);
}

using CR = claims_refusal_case;

INSTANTIATE_TEST_SUITE_P(
    AccessToken, AccessTokenClaimsRefused,
    ::testing::Values(
        CR{"Expired", [](json::object& c) { c["exp"] = now_s - 100; },
           "the token expired at 2026-05-28T20:25:00Z"},
        CR{"ExpiredJustPastLeeway", [](json::object& c) { c["exp"] = now_s - 30; },
           "the token expired at 2026-05-28T20:26:10Z"},
        CR{"MissingExp", [](json::object& c) { c.erase("exp"); },
           "the token has no exp claim; an access token must expire (RFC 9068 §2.2)"},
        CR{"ExpAsString", [](json::object& c) { c["exp"] = std::to_string(now_s + 600); },
           "the token's exp claim is not a number of seconds (RFC 7519 §2 NumericDate)"},
        CR{"ExpNull", [](json::object& c) { c["exp"] = nullptr; },
           "the token's exp claim is not a number of seconds (RFC 7519 §2 NumericDate)"},
        CR{"NbfInTheFuture", [](json::object& c) { c["nbf"] = now_s + 120; },
           "the token is not valid before 2026-05-28T20:28:40Z"},
        CR{"NbfAsString", [](json::object& c) { c["nbf"] = "soon"; },
           "the token's nbf claim is not a number of seconds (RFC 7519 §2 NumericDate)"},
        CR{"IatInTheFuture", [](json::object& c) { c["iat"] = now_s + 120; },
           "the token was issued in the future, at 2026-05-28T20:28:40Z"},
        CR{"WrongIssuer", [](json::object& c) { c["iss"] = "https://evil.example"; },
           "the token is from issuer \"https://evil.example\", not \"https://as.example\""},
        CR{"IssuerWithTrailingSlash", [](json::object& c) { c["iss"] = "https://as.example/"; },
           "the token is from issuer \"https://as.example/\", not \"https://as.example\""},
        CR{"IssuerInOtherCase", [](json::object& c) { c["iss"] = "https://AS.example"; },
           "the token is from issuer \"https://AS.example\", not \"https://as.example\""},
        CR{"MissingIssuer", [](json::object& c) { c.erase("iss"); }, "the token has no iss claim"},
        CR{"IssuerNotAString", [](json::object& c) { c["iss"] = 7; }, "the token's iss claim is not a string"},
        CR{"WrongAudience", [](json::object& c) { c["aud"] = "https://other.example/mcp"; },
           "the token is for audience \"https://other.example/mcp\", not \"https://mcp.example/mcp\""},
        CR{"AudienceArrayWithoutUs",
           [](json::object& c) { c["aud"] = json::array{"https://a.example", "https://b.example"}; },
           "the token is for audiences \"https://a.example\", \"https://b.example\", not "
           "\"https://mcp.example/mcp\""},
        CR{"AudienceEmptyArray", [](json::object& c) { c["aud"] = json::array{}; },
           "the token's aud claim is an empty array, not \"https://mcp.example/mcp\""},
        CR{"AudienceArrayWithANumber", [](json::object& c) { c["aud"] = json::array{1, "https://mcp.example/mcp"}; },
           "the token's aud claim is neither a string nor an array of strings"},
        CR{"MissingAudience", [](json::object& c) { c.erase("aud"); }, "the token has no aud claim"},
        CR{"SubjectNotAString", [](json::object& c) { c["sub"] = 42; }, "the token's sub claim is not a string"},
        CR{"ScopeNotAString", [](json::object& c) { c["scope"] = json::array{"a"}; },
           "the token's scope claim is not a string"},
        CR{"ScpOfNumbers",
           [](json::object& c) {
               c.erase("scope");
               c["scp"] = json::array{1, 2};
           },
           "the token's scp claim is neither a string nor an array of strings"}),
    [](auto const& row) { return row.param.name; });

// Claims that look borderline and are fine.
struct claims_accepted_case {
    std::string name;
    std::function<void(json::object&)> change;

    friend void PrintTo(claims_accepted_case const& row, std::ostream* os) { *os << row.name; }
};

class AccessTokenClaimsAccepted : public ::testing::TestWithParam<claims_accepted_case> {};

TEST_P(AccessTokenClaimsAccepted, VerifiesTheToken) {
    auto c = claims();
    GetParam().change(c);
    auto const verified = verify_access_token(rs256_token(c), server_keys(), rules(), now);
    EXPECT_TRUE(verified.has_value()) << verified.error().description;
}

using CA = claims_accepted_case;

INSTANTIATE_TEST_SUITE_P(
    AccessToken, AccessTokenClaimsAccepted,
    ::testing::Values(CA{"ExpWithinLeeway",
                         [](json::object& c) {
                             c["exp"] = now_s - 29;
                         }},
                      CA{"NbfWithinLeeway",
                         [](json::object& c) {
                             c["nbf"] = now_s + 29;
                         }},
                      CA{"IatWithinLeeway",
                         [](json::object& c) {
                             c["iat"] = now_s + 29;
                         }},
                      CA{"AudienceString",
                         [](json::object& c) {
                             c["aud"] = "https://mcp.example/mcp";
                         }},
                      CA{"AudienceArrayWithUs",
                         [](json::object& c) {
                             c["aud"] = json::array{"https://other.example", "https://mcp.example/mcp"};
                         }},
                      CA{"FractionalDates",
                         [](json::object& c) {
                             c["exp"] = static_cast<double>(now_s) + 600.5;
                             c["iat"] = static_cast<double>(now_s) - 0.25;
                         }},
                      CA{"ExpFarInTheFuture",
                         [](json::object& c) {
                             c["exp"] = std::uint64_t(18'000'000'000'000'000'000u);
                         }},
                      CA{"NoNbfNoIatNoSub",
                         [](json::object& c) {
                             c.erase("nbf");
                             c.erase("iat");
                             c.erase("sub");
                         }}),
    [](auto const& row) { return row.param.name; });

TEST(AccessToken, ZeroLeewayRefusesATokenAtItsExpiry) {
    auto c = claims();
    c["exp"] = now_s;
    auto r = rules();
    r.leeway = seconds(0);
    auto const verified = verify_access_token(rs256_token(c), server_keys(), r, now);
    ASSERT_FALSE(verified.has_value());
    EXPECT_EQ(verified.error().description, "the token expired at 2026-05-28T20:26:40Z");
}

// ---------------------------------------------------------------------------------------------------------------
// What the token grants: scope (RFC 9068 §2.2.3) or scp, and the client (client_id, else azp).

struct grant_case {
    std::string name;
    std::function<void(json::object&)> change;
    std::vector<std::string> scopes;
    std::string client_id;

    friend void PrintTo(grant_case const& row, std::ostream* os) { *os << row.name; }
};

class AccessTokenGrants : public ::testing::TestWithParam<grant_case> {};

TEST_P(AccessTokenGrants, ReadsScopesAndClient) {
    auto c = claims();
    GetParam().change(c);
    auto const verified = verify_access_token(rs256_token(c), server_keys(), rules(), now);
    ASSERT_TRUE(verified.has_value()) << verified.error().description;
    EXPECT_EQ(verified->scopes, GetParam().scopes);
    EXPECT_EQ(verified->client_id, GetParam().client_id);
}

using GC = grant_case;
using scope_names = std::vector<std::string>;

INSTANTIATE_TEST_SUITE_P(
    AccessToken, AccessTokenGrants,
    ::testing::Values(GC{"ScopeString", [](json::object&) {}, scope_names{"files:read", "files:write"},
                         "client-7"},
                      GC{"ScopeWithExtraSpacesAndDuplicates",
                         [](json::object& c) { c["scope"] = " a  b a "; }, scope_names{"a", "b"}, "client-7"},
                      GC{"EmptyScope", [](json::object& c) { c["scope"] = ""; }, scope_names{}, "client-7"},
                      GC{"NoScope", [](json::object& c) { c.erase("scope"); }, scope_names{}, "client-7"},
                      GC{"ScpArray",
                         [](json::object& c) {
                             c.erase("scope");
                             c["scp"] = json::array{"mail.read", "mail.send", "mail.read"};
                         },
                         scope_names{"mail.read", "mail.send"}, "client-7"},
                      GC{"ScpSpaceSeparatedString",
                         [](json::object& c) {
                             c.erase("scope");
                             c["scp"] = "User.Read Mail.Send";
                         },
                         scope_names{"User.Read", "Mail.Send"}, "client-7"},
                      GC{"ScopeWinsOverScp", [](json::object& c) { c["scp"] = json::array{"other"}; },
                         scope_names{"files:read", "files:write"}, "client-7"},
                      GC{"AzpWithoutClientId",
                         [](json::object& c) {
                             c.erase("client_id");
                             c["azp"] = "spa-client";
                         },
                         scope_names{"files:read", "files:write"}, "spa-client"},
                      GC{"ClientIdWinsOverAzp", [](json::object& c) { c["azp"] = "spa-client"; },
                         scope_names{"files:read", "files:write"}, "client-7"},
                      GC{"NoClient", [](json::object& c) { c.erase("client_id"); },
                         scope_names{"files:read", "files:write"}, ""}),
    [](auto const& row) { return row.param.name; });

// ---------------------------------------------------------------------------------------------------------------
// RFC 7515 §7.1 and §2: the compact form, checked before any JSON is parsed or key is used.

struct form_case {
    std::string name;
    std::function<std::string(std::string const&)> change; ///< of a good RS256 token
    std::string description;

    friend void PrintTo(form_case const& row, std::ostream* os) { *os << row.name; }
};

class AccessTokenFormRefused : public ::testing::TestWithParam<form_case> {};

TEST_P(AccessTokenFormRefused, SaysWhatIsWrong) {
    auto const t = GetParam().change(rs256_token());
    auto const verified = verify_access_token(t, server_keys(), rules(), now);
    ASSERT_FALSE(verified.has_value());
    EXPECT_EQ(verified.error().description, GetParam().description);
    EXPECT_FALSE(verified.error().unknown_key);
    expect_no_echo(verified.error().description, t);
}

std::string first_two_parts(std::string const& t) {
    return t.substr(0, t.rfind('.'));
}
std::string with_claims(std::string const& t, std::string const& part) {
    auto const first = t.find('.');
    auto const second = t.find('.', first + 1);
    return t.substr(0, first + 1) + part + t.substr(second);
}

using FC = form_case;

INSTANTIATE_TEST_SUITE_P(
    AccessToken, AccessTokenFormRefused,
    ::testing::Values(
        FC{"TwoParts", first_two_parts,
           "the token has 2 parts, not the three of a signed JWT (header.claims.signature)"},
        FC{"OnePart", [](std::string const&) { return std::string("abc"); },
           "the token has 1 part, not the three of a signed JWT (header.claims.signature)"},
        FC{"Empty", [](std::string const&) { return std::string(); },
           "the token has 1 part, not the three of a signed JWT (header.claims.signature)"},
        FC{"FourParts", [](std::string const& token) { return token + ".AAAA"; },
           "the token has 4 parts, not the three of a signed JWT (header.claims.signature)"},
        FC{"FivePartsOfAnEncryptedJwt", [](std::string const& token) { return token + ".AAAA.AAAA"; },
           "the token has 5 parts, not the three of a signed JWT (header.claims.signature); an encrypted "
           "JWT is not accepted"},
        FC{"SixtyFourKiB", [](std::string const&) { return std::string(64 * 1024, '!'); },
           "the token is 65536 bytes, over the limit of 8192"},
        FC{"PlusSign", [](std::string const& token) { return with_claims(token, "eyJ+IjoxfQ"); },
           "the token's claims part is not base64url: '+' at offset 3 is not base64url"},
        FC{"Slash", [](std::string const& token) { return with_claims(token, "eyJ/IjoxfQ"); },
           "the token's claims part is not base64url: '/' at offset 3 is not base64url"},
        FC{"PaddingInTheHeader",
           [](std::string const& token) {
               auto const dot = token.find('.');
               return token.substr(0, dot) + "=" + token.substr(dot);
           },
           "the token's header part is not base64url: '=' at offset 59 is not base64url (a JWT's parts carry "
           "no "
           "padding)"},
        FC{"Space", [](std::string const& token) { return token.substr(0, 5) + " " + token.substr(5); },
           "the token's header part is not base64url: byte 0x20 at offset 5 is not base64url"},
        FC{"Newline", [](std::string const& token) { return token + "\n"; },
           "the token's signature part is not base64url: byte 0x0a at offset 342 is not base64url"},
        FC{"LoneCharacter", [](std::string const& token) { return with_claims(token, "eyJhIjoxfQAAA"); },
           "the token's claims part is not base64url: its length leaves a lone character"},
        FC{"NonCanonicalTrailingBits",
           [](std::string const& token) { return with_claims(token, "eyJhIjoxfR"); },
           "the token's claims part is not base64url: its last character has bits set past the data"}),
    [](auto const& row) { return row.param.name; });

// Header and claims texts signed as they are, to reach the checks after the form.
struct texts_case {
    std::string name;
    std::string header_text;
    std::string claims_text;
    std::string description;

    friend void PrintTo(texts_case const& row, std::ostream* os) { *os << row.name; }
};

class AccessTokenTextsRefused : public ::testing::TestWithParam<texts_case> {};

TEST_P(AccessTokenTextsRefused, SaysWhatIsWrong) {
    auto const t = sign_texts(rsa_key(), "RS256", GetParam().header_text, GetParam().claims_text);
    auto const verified = verify_access_token(t, server_keys(), rules(), now);
    ASSERT_FALSE(verified.has_value());
    EXPECT_EQ(verified.error().description, GetParam().description);
    expect_no_echo(verified.error().description, t);
}

std::string const good_claims_text =
    R"({"iss":"https://as.example","aud":"https://mcp.example/mcp","exp":1780000600})";

using TC = texts_case;

INSTANTIATE_TEST_SUITE_P(
    AccessToken, AccessTokenTextsRefused,
    ::testing::Values(
        TC{"ClaimsAnArray", R"({"alg":"RS256","kid":"rsa-1"})", R"(["https://as.example"])",
           "the token's claims are not a JSON object"},
        TC{"ClaimsAString", R"({"alg":"RS256","kid":"rsa-1"})", R"("claims")",
           "the token's claims are not a JSON object"},
        TC{"ClaimsNotJson", R"({"alg":"RS256","kid":"rsa-1"})", "iss=https://as.example",
           "the token's claims are not a JSON object"},
        TC{"HeaderNotJson", "RS256", good_claims_text, "the token's header is not a JSON object"},
        TC{"HeaderAnArray", R"(["RS256"])", good_claims_text, "the token's header is not a JSON object"},
        TC{"HeaderWithoutAlg", R"({"kid":"rsa-1"})", good_claims_text,
           "the token's header has no alg string"},
        TC{"AlgNotAString", R"({"alg":256,"kid":"rsa-1"})", good_claims_text,
           "the token's header has no alg string"},
        TC{"AlgInLowerCase", R"({"alg":"rs256","kid":"rsa-1"})", good_claims_text,
           "alg \"rs256\" is not among the accepted algorithms (RS256, PS256, ES256, EdDSA)"},
        TC{"KidNotAString", R"({"alg":"RS256","kid":1})", good_claims_text,
           "the token's kid is not a string"},
        TC{"Crit", R"({"alg":"RS256","kid":"rsa-1","crit":["exp"],"exp":1})", good_claims_text,
           "the token's header has crit, naming extensions this verifier does not implement"}),
    [](auto const& row) { return row.param.name; });

// ---------------------------------------------------------------------------------------------------------------
// RFC 8725 §2.1 and §3.1: the algorithm is the verifier's, never the token's.

TEST(AccessToken, MaxBytesCountsTheTokensOwnBytes) {
    auto const t = rs256_token();
    auto r = rules();
    r.max_bytes = t.size();
    EXPECT_TRUE(verify_access_token(t, server_keys(), r, now).has_value());
    r.max_bytes = t.size() - 1;
    auto const verified = verify_access_token(t, server_keys(), r, now);
    ASSERT_FALSE(verified.has_value());
    EXPECT_EQ(verified.error().description, "the token is " + std::to_string(t.size()) +
                                                " bytes, over the limit of " + std::to_string(t.size() - 1));
}

TEST(AccessToken, RefusesAlgNoneEvenWhenTheRulesListIt) {
    auto const t = duet::auth::base64url(R"({"alg":"none"})") + "." +
                   duet::auth::base64url(duet::jsonrpc::to_json_text(claims())) + ".";
    auto r = rules();
    r.algorithms.push_back("none");
    for (auto const& rr : {rules(), r}) {
        auto const verified = verify_access_token(t, server_keys(), rr, now);
        ASSERT_FALSE(verified.has_value());
        EXPECT_EQ(verified.error().description, "alg none is never accepted: the token is unsigned");
    }
}

// The classic confusion: a verifier that let the token choose HMAC would key it with the public key it holds,
// which anyone can read. HS256 "signed" with the RSA key's public bytes, as DER and as its JWK text.
TEST(AccessToken, RefusesHS256SignedWithThePublicKeyBytes) {
    unsigned char* der = nullptr;
    int const der_size = i2d_PUBKEY(rsa_key(), &der);
    ASSERT_GT(der_size, 0);
    std::string const der_secret(reinterpret_cast<char*>(der), static_cast<std::size_t>(der_size));
    OPENSSL_free(der);
    std::string const jwk_secret = duet::jsonrpc::to_json_text(public_jwk(rsa_key(), "rsa-1"));

    auto r = rules();
    r.algorithms.push_back("HS256"); // not even a misconfigured allow-list opens HMAC
    for (auto const& secret : {der_secret, jwk_secret}) {
        auto const input = duet::auth::base64url(R"({"alg":"HS256","kid":"rsa-1"})") + "." +
                           duet::auth::base64url(duet::jsonrpc::to_json_text(claims()));
        unsigned char mac[EVP_MAX_MD_SIZE];
        std::size_t mac_size = 0;
        ASSERT_NE(EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA256", nullptr, secret.data(), secret.size(),
                            reinterpret_cast<unsigned char const*>(input.data()), input.size(), mac,
                            sizeof mac, &mac_size),
                  nullptr);
        auto const t =
            input + "." + duet::auth::base64url(std::string_view(reinterpret_cast<char*>(mac), mac_size));
        for (auto const& rr : {rules(), r}) {
            auto const verified = verify_access_token(t, server_keys(), rr, now);
            ASSERT_FALSE(verified.has_value());
            EXPECT_TRUE(verified.error().description.starts_with(
                "alg \"HS256\" is not among the accepted algorithms ("))
                << verified.error().description;
            EXPECT_NE(verified.error().description.find("an HMAC needs a shared secret"), std::string::npos);
            EXPECT_FALSE(verified.error().unknown_key);
        }
    }
}

TEST(AccessToken, RefusesRS256NamingAnEcKey) {
    auto const t = sign_token(rsa_key(), header("RS256", "ec-1"), claims());
    auto const verified = verify_access_token(t, server_keys(), rules(), now);
    ASSERT_FALSE(verified.has_value());
    EXPECT_EQ(verified.error().description, "the key \"ec-1\" is an EC P-256 key, which cannot verify RS256");
    EXPECT_FALSE(verified.error().unknown_key);
}

TEST(AccessToken, RefusesES256NamingAnRsaKey) {
    auto const t = sign_token(p256_key(), header("ES256", "rsa-1"), claims());
    auto const verified = verify_access_token(t, server_keys(), rules(), now);
    ASSERT_FALSE(verified.has_value());
    EXPECT_EQ(verified.error().description, "the key \"rsa-1\" is an RSA key, which cannot verify ES256");
}

TEST(AccessToken, RefusesAnAlgOtherThanTheKeysOwn) {
    auto const keys = key_set_of({public_jwk(rsa_key(), "rsa-pss", "PS256")});
    auto const t = sign_token(rsa_key(), header("RS256", "rsa-pss"), claims());
    auto const verified = verify_access_token(t, keys, rules(), now);
    ASSERT_FALSE(verified.has_value());
    EXPECT_EQ(verified.error().description, "the key \"rsa-pss\" is for alg PS256, not RS256");
    EXPECT_TRUE(
        verify_access_token(sign_token(rsa_key(), header("PS256", "rsa-pss"), claims()), keys, rules(), now)
            .has_value());
}

TEST(AccessToken, RefusesAnES256SignatureOfTheWrongLength) {
    auto const good = sign_token(p256_key(), header("ES256", "ec-1"), claims());
    auto const dot = good.rfind('.');
    // DER where JOSE wants r||s: what a signer that forgot RFC 7518 §3.4 sends.
    auto const input = good.substr(0, dot);
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
    ASSERT_EQ(EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, p256_key()), 1);
    std::size_t size = 0;
    ASSERT_EQ(EVP_DigestSign(ctx.get(), nullptr, &size, reinterpret_cast<unsigned char const*>(input.data()),
                             input.size()),
              1);
    std::string der(size, '\0');
    ASSERT_EQ(EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(der.data()), &size,
                             reinterpret_cast<unsigned char const*>(input.data()), input.size()),
              1);
    der.resize(size);
    auto const verified =
        verify_access_token(input + "." + duet::auth::base64url(der), server_keys(), rules(), now);
    ASSERT_FALSE(verified.has_value());
    EXPECT_EQ(verified.error().description,
              "the ES256 signature is " + std::to_string(der.size()) + " bytes, not 64");
}

TEST(AccessToken, RefusesASignatureByAnotherKeyUnderTheSameKid) {
    auto const t = sign_token(other_rsa_key(), header("RS256", "rsa-1"), claims());
    auto const verified = verify_access_token(t, server_keys(), rules(), now);
    ASSERT_FALSE(verified.has_value());
    EXPECT_EQ(verified.error().description, "the token's signature does not verify with the key \"rsa-1\"");
}

// RFC 9068 §2.1: typ at+jwt, when the rules ask for it; media types compare without case (RFC 7515 §4.1.9).
TEST(AccessToken, RequiresTypAtJwtOnlyWhenAsked) {
    auto strict = rules();
    strict.require_at_jwt_typ = true;
    auto with_typ = [](std::string const& typ) {
        json::object h{{"alg", "RS256"}, {"kid", "rsa-1"}};
        if (!typ.empty())
            h["typ"] = typ;
        return sign_token(rsa_key(), h, claims());
    };
    EXPECT_TRUE(verify_access_token(with_typ("at+jwt"), server_keys(), strict, now).has_value());
    EXPECT_TRUE(verify_access_token(with_typ("application/at+jwt"), server_keys(), strict, now).has_value());
    EXPECT_TRUE(verify_access_token(with_typ("AT+JWT"), server_keys(), strict, now).has_value());
    EXPECT_TRUE(verify_access_token(with_typ("JWT"), server_keys(), rules(), now).has_value());
    EXPECT_TRUE(verify_access_token(with_typ(""), server_keys(), rules(), now).has_value());

    auto const jwt = verify_access_token(with_typ("JWT"), server_keys(), strict, now);
    ASSERT_FALSE(jwt.has_value());
    EXPECT_EQ(jwt.error().description, "the token's typ is \"JWT\", not \"at+jwt\"");
    auto const none = verify_access_token(with_typ(""), server_keys(), strict, now);
    ASSERT_FALSE(none.has_value());
    EXPECT_EQ(none.error().description, "the token has no typ \"at+jwt\" (RFC 9068 §2.1)");
}

// ---------------------------------------------------------------------------------------------------------------
// RFC 7515 §4.1.4: choosing the key.

TEST(AccessToken, AnUnknownKidAsksForTheKeySetAgain) {
    auto const t = sign_token(rsa_key(), header("RS256", "rsa-2"), claims());
    auto const verified = verify_access_token(t, server_keys(), rules(), now);
    ASSERT_FALSE(verified.has_value());
    EXPECT_TRUE(verified.error().unknown_key);
    EXPECT_EQ(
        verified.error().description,
        "no key of the key set has the kid \"rsa-2\"; the authorization server may have rotated its keys");
    // Once the set holds the new key, the same token verifies.
    auto const rotated = key_set_of({public_jwk(rsa_key(), "rsa-2")});
    EXPECT_TRUE(verify_access_token(t, rotated, rules(), now).has_value());
}

TEST(AccessToken, AnEmptyKeySetKnowsNoKid) {
    auto const verified = verify_access_token(rs256_token(), jwk_set(), rules(), now);
    ASSERT_FALSE(verified.has_value());
    EXPECT_TRUE(verified.error().unknown_key);
}

TEST(AccessToken, AnUnknownKidIsQuotedSafely) {
    auto const t = sign_token(rsa_key(), header("RS256", "a\"b\nc" + std::string(100, 'k')), claims());
    auto const verified = verify_access_token(t, server_keys(), rules(), now);
    ASSERT_FALSE(verified.has_value());
    EXPECT_TRUE(verified.error().unknown_key);
    EXPECT_TRUE(verified.error().description.starts_with("no key of the key set has the kid \"a?b?ckkk"))
        << verified.error().description;
    EXPECT_NE(verified.error().description.find("k...\""), std::string::npos) << verified.error().description;
}

TEST(AccessToken, AcceptsAKidlessTokenWhenOneKeyFits) {
    // The set holds one key of each type, so ES256 and EdDSA each have exactly one candidate.
    auto const es = sign_token(p256_key(), header("ES256", ""), claims());
    auto const ed = sign_token(ed25519_key(), header("EdDSA", ""), claims());
    EXPECT_TRUE(verify_access_token(es, server_keys(), rules(), now).has_value());
    EXPECT_TRUE(verify_access_token(ed, server_keys(), rules(), now).has_value());
    // And a set of one kid-less key.
    auto const single = key_set_of({public_jwk(rsa_key(), "")});
    auto const verified =
        verify_access_token(sign_token(rsa_key(), header("RS256", ""), claims()), single, rules(), now);
    EXPECT_TRUE(verified.has_value()) << verified.error().description;
}

TEST(AccessToken, RefusesAKidlessTokenWhenSeveralKeysFit) {
    auto const keys = key_set_of({public_jwk(rsa_key(), "a"), public_jwk(other_rsa_key(), "b")});
    auto const verified =
        verify_access_token(sign_token(rsa_key(), header("RS256", ""), claims()), keys, rules(), now);
    ASSERT_FALSE(verified.has_value());
    EXPECT_EQ(verified.error().description,
              "the token names no kid and 2 keys of the key set could verify RS256");
    EXPECT_FALSE(verified.error().unknown_key);
}

TEST(AccessToken, RefusesAKidlessTokenWhenNoKeyFits) {
    auto const keys = key_set_of({public_jwk(p256_key(), "ec")});
    auto const verified =
        verify_access_token(sign_token(rsa_key(), header("RS256", ""), claims()), keys, rules(), now);
    ASSERT_FALSE(verified.has_value());
    EXPECT_EQ(verified.error().description,
              "the token names no kid and no key of the key set can verify RS256");
}

TEST(AccessToken, AKeySetWithAnUnreadableKeyStillServesTheOthers) {
    auto broken = public_jwk(rsa_key(), "broken");
    broken["n"] = "not base64url!";
    auto const keys = key_set_of({broken, public_jwk(rsa_key(), "rsa-1")});
    ASSERT_EQ(keys.size(), 1u);
    ASSERT_EQ(keys.skipped().size(), 1u);
    auto const verified = verify_access_token(rs256_token(), keys, rules(), now);
    EXPECT_TRUE(verified.has_value()) << verified.error().description;
    // The broken key's kid is not a usable key: a token naming it asks for a refetch.
    auto const named =
        verify_access_token(sign_token(rsa_key(), header("RS256", "broken"), claims()), keys, rules(), now);
    ASSERT_FALSE(named.has_value());
    EXPECT_TRUE(named.error().unknown_key);
}

TEST(AccessToken, RefusesEveryTokenWithoutAConfiguredIssuerOrAudience) {
    auto no_issuer = rules();
    no_issuer.issuer.clear();
    auto no_audience = rules();
    no_audience.audience.clear();
    for (auto const& r : {no_issuer, no_audience}) {
        auto const verified = verify_access_token(rs256_token(), server_keys(), r, now);
        ASSERT_FALSE(verified.has_value());
        EXPECT_EQ(verified.error().description,
                  "the resource server has no issuer or audience configured, so it accepts no token");
    }
}

} // namespace access_token_suite
