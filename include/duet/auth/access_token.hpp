/// @file duet/auth/access_token.hpp
///
/// The resource server's side of OAuth 2.1: whether a bearer token is a JWT access token (RFC 9068) that an
/// authorization server signed for this resource, checked against the server's published keys (a JWK Set,
/// RFC 7517). Pure: no I/O, no clock of its own, so a caller that fetches and caches the key set (RFC 8414
/// `jwks_uri`) decides when to refetch; a token naming a key the set lacks says so (`unknown_key`), which is
/// how a key rotation shows up.
///
///     auto keys = parse_jwk_set(jwks_json_text);         // keys it could not read are listed, not fatal
///     auto token = verify_access_token(bearer, *keys,
///                                      {.issuer = "https://as.example", .audience =
///                                      "https://mcp.example/mcp"}, std::chrono::system_clock::now());
///     if (!token && token.error().unknown_key) { /* refetch the JWKS (rate-limited), verify once more */ }
///
/// Accepted: JWS compact serialization (RFC 7515 §7.1) signed with RS256/384/512, PS256/384/512 (RSA of at
/// least 2048 bits, RFC 7518 §3.3), ES256 (P-256), ES384 (P-384) or EdDSA (Ed25519, RFC 8037), whichever of
/// those `token_rules::algorithms` lists. Never `none`, never an HMAC (HS*): a public key is no shared
/// secret, and a verifier that let a token pick HMAC would take the public key as the secret (algorithm
/// confusion, RFC 8725 §2.1, §3.1).
#pragma once

#include <duet/protocol/caller.hpp>

#include <boost/assert/source_location.hpp>
#include <boost/json/fwd.hpp>
#include <boost/json/object.hpp>
#include <boost/system/result.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace duet::auth {

namespace detail {
struct jwk_set_access;
}

/// What a key set says of one key it holds, for logs and diagnostics.
struct jwk_summary {
    std::string kid; ///< empty: the key has none
    std::string kty; ///< "RSA", "EC" or "OKP"
    std::string crv; ///< "P-256", "P-384", "Ed25519"; empty for RSA
    std::string alg; ///< empty: the key does not restrict its algorithm
};

/// A key the set could not use, and why in words ("kty oct: ...", "for encryption (use \"enc\")").
struct jwk_skipped {
    std::size_t index = 0; ///< its place in `keys`
    std::string kid;       ///< empty when it has none (or no readable one)
    std::string reason;
};

/// Public signature keys read from a JWK Set (RFC 7517 §5). Immutable once read: copies share the keys, and
/// one set may serve verifications on any number of threads at once. A default-constructed set holds no key.
class jwk_set {
public:
    struct impl;

    jwk_set() noexcept;

    [[nodiscard]] std::size_t size() const noexcept;
    [[nodiscard]] bool empty() const noexcept { return size() == 0; }
    /// The usable keys, in the document's order.
    [[nodiscard]] std::vector<jwk_summary> const& keys() const noexcept;
    /// The keys left out, in the document's order; a set with one bad key still serves the others.
    [[nodiscard]] std::vector<jwk_skipped> const& skipped() const noexcept;
    /// Whether some usable key has this `kid`.
    [[nodiscard]] bool contains(std::string_view kid) const noexcept;

private:
    friend struct detail::jwk_set_access;
    explicit jwk_set(std::shared_ptr<impl const> impl) noexcept;
    /// The keys; an empty set's for a moved-from set.
    [[nodiscard]] impl const& state() const noexcept;
    std::shared_ptr<impl const> impl_;
};

/// Why a document is not a JWK Set at all (not JSON, not an object, no `keys` array).
struct jwks_error {
    std::string description;
};
[[noreturn]] void throw_exception_from_error(jwks_error const& e, boost::source_location const& loc);

/// A JWK Set document. Each key of kty RSA (n, e), EC (crv P-256 or P-384; x, y) or OKP (crv Ed25519; x),
/// with `use` "sig" or absent and `key_ops` (when present) naming "verify", becomes usable; any other key is
/// skipped with its reason: other types and curves, symmetric keys (kty "oct"), encryption keys, malformed
/// members, points off their curve, RSA under 2048 bits, a key that publishes private members, an `alg` its
/// type cannot do. An error only when the document is no JWK Set.
[[nodiscard]] boost::system::result<jwk_set, jwks_error> read_jwk_set(boost::json::value const& document);
/// The same from the document's JSON text (a distinct name: a string literal converts to both argument
/// types).
[[nodiscard]] boost::system::result<jwk_set, jwks_error> parse_jwk_set(std::string_view json_text);

/// What the resource server accepts. `issuer` and `audience` are required: a rule left empty accepts no
/// token.
struct token_rules {
    std::string issuer;   ///< the `iss` a token must carry, compared byte for byte (RFC 9068 §4)
    std::string audience; ///< a value `aud` must be or contain: this resource's identifier (RFC 8707)
    /// The header `alg` values accepted (RFC 8725 §3.1). Names outside the supported set, "none" and HS*
    /// here accept nothing.
    std::vector<std::string> algorithms = {"RS256", "PS256", "ES256", "EdDSA"};
    std::chrono::seconds leeway{30}; ///< clock skew allowed on exp, nbf and iat (0 to 100,000,000 s)
    std::size_t max_bytes = 8192;    ///< a longer token is refused before any decoding
    bool require_at_jwt_typ = false; ///< require typ "at+jwt" (RFC 9068 §2.1); many servers still send "JWT"
};

/// A token that passed every check (protocol/caller.hpp: it is also what handlers see of their caller).
using verified_token = protocol::verified_token;

/// Why a token is refused. Its error code is always `invalid_token` (RFC 6750 §3.1); `description` says in
/// words what was wrong ("the token expired at 2026-12-04T22:00:00Z") without echoing the token, fit for the
/// challenge's `error_description` and for logs.
struct token_rejection {
    std::string description;
    /// The header's `kid` names no key of the set: the authorization server may have rotated its keys, so a
    /// caller may refetch the JWK Set (rate-limited) and verify again.
    bool unknown_key = false;
    /// The token could not be checked at all: the server that would say whether it is good (an introspection
    /// endpoint, RFC 7662) was unreachable, too slow, or answered other than 200 with a JSON object. Not the
    /// client's fault, so a resource server may answer 503 rather than 401.
    bool server_unavailable = false;
};
[[noreturn]] void throw_exception_from_error(token_rejection const& e, boost::source_location const& loc);

/// Verifies `token` (the bearer credential, without "Bearer ") as of `now`: its size, form and header, the
/// key (by `kid`; without one, the single key that fits `alg`), the signature, then the claims (`iss`, `aud`,
/// `exp` required, `nbf` and `iat` when present, `typ` when the rules require it). Never throws.
[[nodiscard]] boost::system::result<verified_token, token_rejection>
verify_access_token(std::string_view token, jwk_set const& keys, token_rules const& rules,
                    std::chrono::system_clock::time_point now);

} // namespace duet::auth
