/// @file duet/auth/pkce.hpp
///
/// Proof Key for Code Exchange with S256 (RFC 7636 §4), the only method the MCP authorization spec allows,
/// and the unguessable values an authorization request carries (`state`, the verifier): 32 random bytes from
/// OpenSSL's generator, base64url without padding (43 characters).
///
///     auto p = make_pkce();
///     s256_challenge(p->verifier) == p->challenge
#pragma once

#include <duet/client/error.hpp>

#include <string>
#include <string_view>

namespace duet::auth {

struct pkce {
    std::string verifier;
    std::string challenge; ///< BASE64URL(SHA-256(verifier))
};

/// An error only when OpenSSL's generator cannot produce bytes (no entropy source).
[[nodiscard]] client::result<pkce> make_pkce();
[[nodiscard]] std::string s256_challenge(std::string_view verifier);
/// `bytes` random bytes, base64url without padding.
[[nodiscard]] client::result<std::string> random_url_token(std::size_t bytes = 32);
/// Base64url without padding (RFC 4648 §5), as PKCE and JWTs write it.
[[nodiscard]] std::string base64url(std::string_view bytes);

} // namespace duet::auth
