// Fuzz target over the resource server's check of a bearer token (auth/access_token.hpp,
// verify_access_token), which any client sends. The first byte picks the mode:
// - even: the rest is a token as sent. Its keys are made at start-up, so no input can carry a signature they
//   verify: a token accepted here is a forgery, and the law is that none is;
// - odd: the rest is a header's extra members and the claims, split at the first NUL, which the harness signs
//   with its Ed25519 key (kid "k1"), so the claim checks run on whatever the fuzzer writes. The law: an
//   accepted token has the rules' issuer, an audience naming the resource, an expiry not past (within the
//   leeway), and an algorithm on the allow-list.
#include <duet/auth/access_token.hpp>

#include "unit/auth/jose_minting.hpp"

#include <boost/json/parse.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

namespace json = boost::json;
using namespace jose_minting;

duet::auth::token_rules const rules{.issuer = "https://as.example",
                                    .audience = "https://mcp.example/mcp",
                                    .algorithms = {"RS256", "ES256", "EdDSA"},
                                    .leeway = std::chrono::seconds(30)};

duet::auth::jwk_set const& keys() {
    static auto const set = key_set_of({public_jwk(ed25519_key(), "k1"), public_jwk(p256_key(), "k2")});
    return set;
}

bool audience_names_resource(json::value const& aud) {
    if (aud.is_string())
        return aud.get_string() == rules.audience;
    if (aud.is_array())
        for (auto const& a : aud.get_array())
            if (a.is_string() && a.get_string() == rules.audience)
                return true;
    return false;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    if (size < 1)
        return 0;
    auto const now = std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000));
    std::string_view const rest(reinterpret_cast<char const*>(data + 1), size - 1);
    if (data[0] % 2 == 0) {
        if (duet::auth::verify_access_token(rest, keys(), rules, now))
            std::abort(); // a signature nobody made
        return 0;
    }
    auto const nul = rest.find('\0');
    auto const header_text = rest.substr(0, nul);
    auto const claims_text = nul == std::string_view::npos ? std::string_view("{}") : rest.substr(nul + 1);
    boost::system::error_code ec;
    auto extra = json::parse(header_text, ec);
    json::object header = !ec && extra.is_object() ? extra.get_object() : json::object();
    header["alg"] = "EdDSA";
    if (!header.contains("kid"))
        header["kid"] = "k1";
    auto const token =
        sign_texts(ed25519_key(), "EdDSA", duet::jsonrpc::to_json_text(header), std::string(claims_text));
    auto const verified = duet::auth::verify_access_token(token, keys(), rules, now);
    if (!verified)
        return 0;
    auto const claims = json::parse(claims_text, ec);
    if (ec || !claims.is_object())
        std::abort();
    auto const& c = claims.get_object();
    auto const* iss = c.if_contains("iss");
    auto const* aud = c.if_contains("aud");
    auto const* exp = c.if_contains("exp");
    if (!iss || !iss->is_string() || iss->get_string() != rules.issuer || !aud ||
        !audience_names_resource(*aud) || !exp || !exp->is_number() ||
        exp->to_number<double>() + 30 < 1'800'000'000.0 || verified->issuer != rules.issuer)
        std::abort();
    return 0;
}
