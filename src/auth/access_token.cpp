#include <duet/auth/scopes.hpp>

#include "jose.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <boost/throw_exception.hpp>

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/rsa.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace duet::auth {

namespace json = boost::json;
using clock_type = std::chrono::system_clock;

namespace {

template<class T, void (*Free)(T*)>
struct freer {
    void operator()(T* p) const noexcept { Free(p); }
};
using md_ctx_ptr = std::unique_ptr<EVP_MD_CTX, freer<EVP_MD_CTX, EVP_MD_CTX_free>>;
using ecdsa_sig_ptr = std::unique_ptr<ECDSA_SIG, freer<ECDSA_SIG, ECDSA_SIG_free>>;
using bn_ptr = std::unique_ptr<BIGNUM, freer<BIGNUM, BN_free>>;

token_rejection refuse(std::string description) {
    return token_rejection{std::move(description), false};
}

// The signature algorithms this verifier implements (RFC 7518 §3.1, RFC 8037 §3.1), and what each needs of
// its key.
struct jws_algorithm {
    std::string_view name;
    std::string_view kty;
    std::string_view crv;      ///< empty for RSA
    EVP_MD const* (*digest)(); ///< nullptr for EdDSA, which hashes internally
    bool pss;                  ///< RSASSA-PSS, salt the digest's length (RFC 7518 §3.5)
    std::size_t ec_half;       ///< ECDSA: bytes of r and of s in JOSE's r||s (RFC 7518 §3.4)
};

constexpr jws_algorithm supported[] = {
    {"RS256", "RSA", "", EVP_sha256, false, 0},      {"RS384", "RSA", "", EVP_sha384, false, 0},
    {"RS512", "RSA", "", EVP_sha512, false, 0},      {"PS256", "RSA", "", EVP_sha256, true, 0},
    {"PS384", "RSA", "", EVP_sha384, true, 0},       {"PS512", "RSA", "", EVP_sha512, true, 0},
    {"ES256", "EC", "P-256", EVP_sha256, false, 32}, {"ES384", "EC", "P-384", EVP_sha384, false, 48},
    {"EdDSA", "OKP", "Ed25519", nullptr, false, 0},
};

jws_algorithm const* find_algorithm(std::string_view name) {
    for (auto const& a : supported)
        if (a.name == name)
            return &a;
    return nullptr;
}

bool fits(jwk_summary const& key, jws_algorithm const& alg) {
    return key.kty == alg.kty && key.crv == alg.crv;
}

std::string key_kind(jwk_summary const& key) {
    return key.crv.empty() ? key.kty : key.kty + " " + key.crv;
}

std::string key_name(jwk_summary const& key) {
    return key.kid.empty() ? "the key set's " + key_kind(key) + " key" : "the key " + detail::quoted(key.kid);
}

std::string joined(std::vector<std::string> const& names) {
    std::string out;
    for (auto const& n : names)
        out += (out.empty() ? "" : ", ") + n;
    return out.empty() ? "none" : out;
}

// RFC 7518 §3.4: JOSE writes an ECDSA signature as r||s, each the curve's size; OpenSSL verifies DER.
std::optional<std::string> ecdsa_der(std::string const& jose, std::size_t half) {
    auto const* raw = reinterpret_cast<unsigned char const*>(jose.data());
    bn_ptr r(BN_bin2bn(raw, static_cast<int>(half), nullptr));
    bn_ptr s(BN_bin2bn(raw + half, static_cast<int>(half), nullptr));
    ecdsa_sig_ptr sig(ECDSA_SIG_new());
    if (!r || !s || !sig || ECDSA_SIG_set0(sig.get(), r.get(), s.get()) != 1)
        return std::nullopt;
    r.release(); // owned by sig now
    s.release();
    unsigned char* der = nullptr;
    int const size = i2d_ECDSA_SIG(sig.get(), &der);
    if (size <= 0)
        return std::nullopt;
    std::string out(reinterpret_cast<char const*>(der), static_cast<std::size_t>(size));
    OPENSSL_free(der);
    return out;
}

bool signature_verifies(EVP_PKEY* key, jws_algorithm const& alg, std::string_view input,
                        std::string const& signature) {
    md_ctx_ptr ctx(EVP_MD_CTX_new());
    EVP_PKEY_CTX* pctx = nullptr;
    bool ok =
        ctx && EVP_DigestVerifyInit(ctx.get(), &pctx, alg.digest ? alg.digest() : nullptr, nullptr, key) == 1;
    if (ok && alg.kty == "RSA")
        ok = alg.pss ? EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) == 1 &&
                           EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST) == 1
                     : EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PADDING) == 1;
    ok = ok && EVP_DigestVerify(ctx.get(), reinterpret_cast<unsigned char const*>(signature.data()),
                                signature.size(), reinterpret_cast<unsigned char const*>(input.data()),
                                input.size()) == 1;
    // A failed verification leaves errors on the thread's OpenSSL queue; nobody else should read them.
    ERR_clear_error();
    return ok;
}

// ---------------------------------------------------------------------------------------------------------------
// Dates. A NumericDate is seconds since the epoch, integer or not (RFC 7519 §2). Held as system_clock's
// nanoseconds, whose range ends in 2262, so values far out are clamped first: every one of them is simply
// "far past" or "far future".

constexpr double date_limit = 9'000'000'000.0; // about the year 2255

std::optional<clock_type::time_point> numeric_date(json::value const& v) {
    double seconds = 0;
    if (v.is_int64())
        seconds = static_cast<double>(std::clamp<std::int64_t>(v.get_int64(), -9'000'000'000, 9'000'000'000));
    else if (v.is_uint64())
        seconds = static_cast<double>(std::min<std::uint64_t>(v.get_uint64(), 9'000'000'000));
    else if (v.is_double() && std::isfinite(v.get_double()))
        seconds = std::clamp(v.get_double(), -date_limit, date_limit);
    else
        return std::nullopt;
    return clock_type::time_point(
        std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(seconds)));
}

std::string utc_text(clock_type::time_point t) {
    using namespace std::chrono;
    auto const secs = floor<seconds>(t);
    auto const day = floor<days>(secs);
    year_month_day const date{day};
    hh_mm_ss const time{secs - day};
    char text[48];
    std::snprintf(text, sizeof text, "%04d-%02u-%02uT%02d:%02d:%02dZ", static_cast<int>(date.year()),
                  static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                  static_cast<int>(time.hours().count()), static_cast<int>(time.minutes().count()),
                  static_cast<int>(time.seconds().count()));
    return text;
}

// ---------------------------------------------------------------------------------------------------------------
// The compact serialization's parts (RFC 7515 §7.1).

struct decoded_part {
    std::string bytes;
    std::optional<token_rejection> rejection;
};

decoded_part decode_part(std::string_view text, std::string_view what) {
    std::string fault;
    auto bytes = detail::base64url_decode(text, fault);
    if (!bytes)
        return {{}, refuse("the token's " + std::string(what) + " part is not base64url: " + fault)};
    return {std::move(*bytes), std::nullopt};
}

std::optional<json::object> parse_object(std::string const& text) {
    boost::system::error_code ec;
    auto v = json::parse(text, ec);
    if (ec || !v.is_object())
        return std::nullopt;
    return std::move(v.get_object());
}

// The key for this header: by kid, else the single key that fits the algorithm.
boost::system::result<jwk_set::impl::entry const*, token_rejection>
choose_key(jwk_set::impl const& set, jws_algorithm const& alg, std::optional<std::string> const& kid) {
    if (kid) {
        jwk_set::impl::entry const* named = nullptr;
        for (auto const& e : set.entries) {
            if (e.summary.kid != *kid)
                continue;
            // Two keys may share a kid across types (RFC 7517 §4.5 only asks it to tell them apart), so the
            // one that fits the algorithm is taken.
            if (fits(e.summary, alg))
                return &e;
            named = &e;
        }
        if (!named)
            return token_rejection{"no key of the key set has the kid " + detail::quoted(*kid) +
                                       "; the authorization server may have rotated its keys",
                                   true};
        return refuse(key_name(named->summary) + " is an " + key_kind(named->summary) +
                      " key, which cannot verify " + std::string(alg.name));
    }
    jwk_set::impl::entry const* only = nullptr;
    std::size_t fitting = 0;
    for (auto const& e : set.entries) {
        if (fits(e.summary, alg) && (e.summary.alg.empty() || e.summary.alg == alg.name)) {
            only = &e;
            ++fitting;
        }
    }
    if (fitting == 0)
        return refuse("the token names no kid and no key of the key set can verify " + std::string(alg.name));
    if (fitting > 1)
        return refuse("the token names no kid and " + std::to_string(fitting) +
                      " keys of the key set could verify " + std::string(alg.name));
    return only;
}

// ---------------------------------------------------------------------------------------------------------------
// The claims (RFC 7519 §4.1, RFC 9068 §4).

std::optional<token_rejection> optional_string(json::object const& claims, std::string_view name,
                                               std::string& out) {
    auto const* v = claims.if_contains(name);
    if (!v)
        return std::nullopt;
    if (!v->is_string())
        return refuse("the token's " + std::string(name) + " claim is not a string");
    out = v->get_string();
    return std::nullopt;
}

std::optional<token_rejection> check_audience(json::value const& aud, std::string const& audience) {
    // RFC 7519 §4.1.3: a single string, or an array of strings one of which identifies this resource.
    if (aud.is_string()) {
        if (aud.get_string() == audience)
            return std::nullopt;
        return refuse("the token is for audience " + detail::quoted(aud.get_string(), 200) + ", not " +
                      detail::quoted(audience, 200));
    }
    if (!aud.is_array())
        return refuse("the token's aud claim is neither a string nor an array of strings");
    std::string listed;
    for (auto const& a : aud.get_array()) {
        if (!a.is_string())
            return refuse("the token's aud claim is neither a string nor an array of strings");
        if (a.get_string() == audience)
            return std::nullopt;
        if (listed.size() < 400)
            listed += (listed.empty() ? "" : ", ") + detail::quoted(a.get_string(), 200);
    }
    if (listed.empty())
        return refuse("the token's aud claim is an empty array, not " + detail::quoted(audience, 200));
    return refuse("the token is for audiences " + listed + ", not " + detail::quoted(audience, 200));
}

std::optional<token_rejection> read_scopes(json::object const& claims, std::vector<std::string>& scopes) {
    if (auto const* scope = claims.if_contains("scope")) {
        if (!scope->is_string())
            return refuse("the token's scope claim is not a string");
        scopes = split_scopes(scope->get_string());
        return std::nullopt;
    }
    auto const* scp = claims.if_contains("scp");
    if (!scp)
        return std::nullopt;
    if (scp->is_string()) {
        scopes = split_scopes(scp->get_string());
        return std::nullopt;
    }
    if (!scp->is_array())
        return refuse("the token's scp claim is neither a string nor an array of strings");
    for (auto const& s : scp->get_array()) {
        if (!s.is_string())
            return refuse("the token's scp claim is neither a string nor an array of strings");
        auto const name = std::string(s.get_string());
        if (!name.empty() && std::find(scopes.begin(), scopes.end(), name) == scopes.end())
            scopes.push_back(name);
    }
    return std::nullopt;
}

} // namespace

void throw_exception_from_error(token_rejection const& e, boost::source_location const& loc) {
    boost::throw_exception(std::invalid_argument(e.description), loc);
}

boost::system::result<verified_token, token_rejection> verify_access_token(std::string_view token,
                                                                           jwk_set const& keys,
                                                                           token_rules const& rules,
                                                                           clock_type::time_point now) {
    // Size first: nothing of an oversized token is decoded or parsed.
    if (token.size() > rules.max_bytes)
        return refuse("the token is " + std::to_string(token.size()) + " bytes, over the limit of " +
                      std::to_string(rules.max_bytes));
    if (rules.issuer.empty() || rules.audience.empty())
        return refuse("the resource server has no issuer or audience configured, so it accepts no token");

    auto const first = token.find('.');
    auto const second = first == std::string_view::npos ? first : token.find('.', first + 1);
    if (second == std::string_view::npos || token.find('.', second + 1) != std::string_view::npos) {
        auto const parts = std::count(token.begin(), token.end(), '.') + 1;
        return refuse("the token has " + std::to_string(parts) + (parts == 1 ? " part" : " parts") +
                      ", not the three of a signed JWT (header.claims.signature)" +
                      (parts == 5 ? "; an encrypted JWT is not accepted" : ""));
    }
    auto const header_part = decode_part(token.substr(0, first), "header");
    if (header_part.rejection)
        return *header_part.rejection;
    auto const claims_part = decode_part(token.substr(first + 1, second - first - 1), "claims");
    if (claims_part.rejection)
        return *claims_part.rejection;
    auto const signature_part = decode_part(token.substr(second + 1), "signature");
    if (signature_part.rejection)
        return *signature_part.rejection;

    // The header (RFC 7515 §4), before any key is touched.
    auto const header = parse_object(header_part.bytes);
    if (!header)
        return refuse("the token's header is not a JSON object");
    auto const* alg_member = header->if_contains("alg");
    if (!alg_member || !alg_member->is_string())
        return refuse("the token's header has no alg string");
    std::string const alg_name(alg_member->get_string());
    // RFC 8725 §3.1 and §3.2: the algorithm is the verifier's choice, never the token's, whatever the rules
    // say.
    if (alg_name == "none")
        return refuse("alg none is never accepted: the token is unsigned");
    // What the rules list and this verifier implements: never none or HS*, whatever the list says.
    std::vector<std::string> accepted;
    for (auto const& a : rules.algorithms)
        if (find_algorithm(a) && std::find(accepted.begin(), accepted.end(), a) == accepted.end())
            accepted.push_back(a);
    auto const* alg = find_algorithm(alg_name);
    if (!alg || std::find(accepted.begin(), accepted.end(), alg_name) == accepted.end())
        return refuse("alg " + detail::quoted(alg_name) + " is not among the accepted algorithms (" +
                      joined(accepted) + ")" +
                      (alg_name.starts_with("HS")
                           ? ": an HMAC needs a shared secret, and a key set holds public keys"
                           : ""));
    // RFC 7515 §4.1.11: an extension the verifier does not understand must fail the token; it understands
    // none.
    if (header->contains("crit"))
        return refuse("the token's header has crit, naming extensions this verifier does not implement");
    if (rules.require_at_jwt_typ) {
        auto const* typ = header->if_contains("typ");
        // RFC 9068 §2.1 and §4; media type names compare without regard to case (RFC 7515 §4.1.9).
        auto lower = typ && typ->is_string() ? std::string(typ->get_string()) : std::string();
        std::transform(lower.begin(), lower.end(), lower.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        if (lower != "at+jwt" && lower != "application/at+jwt")
            return refuse(typ && typ->is_string()
                              ? "the token's typ is " + detail::quoted(typ->get_string()) + ", not \"at+jwt\""
                              : "the token has no typ \"at+jwt\" (RFC 9068 §2.1)");
    }
    std::optional<std::string> kid;
    if (auto const* k = header->if_contains("kid")) {
        if (!k->is_string())
            return refuse("the token's kid is not a string");
        kid = std::string(k->get_string());
    }

    auto const chosen = choose_key(detail::jwk_set_access::of(keys), *alg, kid);
    if (!chosen)
        return chosen.error();
    auto const& key = **chosen;
    if (!key.summary.alg.empty() && key.summary.alg != alg->name)
        return refuse(key_name(key.summary) + " is for alg " + key.summary.alg + ", not " + alg_name);

    std::string signature = signature_part.bytes;
    if (alg->ec_half != 0) {
        if (signature.size() != 2 * alg->ec_half)
            return refuse("the " + alg_name + " signature is " + std::to_string(signature.size()) +
                          " bytes, not " + std::to_string(2 * alg->ec_half));
        auto der = ecdsa_der(signature, alg->ec_half);
        if (!der)
            return refuse("the " + alg_name + " signature cannot be read");
        signature = std::move(*der);
    }
    // The signing input is the token's own ASCII text up to the second dot (RFC 7515 §5.2 step 8).
    if (!signature_verifies(key.key.get(), *alg, token.substr(0, second), signature))
        return refuse("the token's signature does not verify with " + key_name(key.summary));

    // Only now, signed by the authorization server, are the claims read.
    auto claims = parse_object(claims_part.bytes);
    if (!claims)
        return refuse("the token's claims are not a JSON object");

    verified_token out;
    auto const* iss = claims->if_contains("iss");
    if (!iss)
        return refuse("the token has no iss claim");
    if (!iss->is_string())
        return refuse("the token's iss claim is not a string");
    // RFC 9068 §4 and RFC 8414 §3.3: exactly, byte for byte; no normalizing of slashes or case.
    if (iss->get_string() != rules.issuer)
        return refuse("the token is from issuer " + detail::quoted(iss->get_string(), 200) + ", not " +
                      detail::quoted(rules.issuer, 200));
    out.issuer = iss->get_string();

    auto const* aud = claims->if_contains("aud");
    if (!aud)
        return refuse("the token has no aud claim");
    if (auto bad = check_audience(*aud, rules.audience))
        return *bad;

    auto const leeway = std::clamp(rules.leeway, std::chrono::seconds(0), std::chrono::seconds(100'000'000));
    auto const* exp_member = claims->if_contains("exp");
    if (!exp_member)
        return refuse("the token has no exp claim; an access token must expire (RFC 9068 §2.2)");
    auto const exp = numeric_date(*exp_member);
    if (!exp)
        return refuse("the token's exp claim is not a number of seconds (RFC 7519 §2 NumericDate)");
    // RFC 7519 §4.1.4: the current time must be before exp.
    if (now - leeway >= *exp)
        return refuse("the token expired at " + utc_text(*exp));
    out.expires_at = *exp;
    if (auto const* nbf_member = claims->if_contains("nbf")) {
        auto const nbf = numeric_date(*nbf_member);
        if (!nbf)
            return refuse("the token's nbf claim is not a number of seconds (RFC 7519 §2 NumericDate)");
        if (now + leeway < *nbf)
            return refuse("the token is not valid before " + utc_text(*nbf));
    }
    if (auto const* iat_member = claims->if_contains("iat")) {
        auto const iat = numeric_date(*iat_member);
        if (!iat)
            return refuse("the token's iat claim is not a number of seconds (RFC 7519 §2 NumericDate)");
        if (now + leeway < *iat)
            return refuse("the token was issued in the future, at " + utc_text(*iat));
    }

    if (auto bad = optional_string(*claims, "sub", out.subject))
        return *bad;
    if (auto bad = optional_string(*claims, "client_id", out.client_id))
        return *bad;
    if (out.client_id.empty()) {
        if (auto bad = optional_string(*claims, "azp", out.client_id))
            return *bad;
    }
    if (auto bad = read_scopes(*claims, out.scopes))
        return *bad;
    out.claims = std::move(*claims);
    return out;
}

} // namespace duet::auth
