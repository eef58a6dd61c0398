// A client's proof of identity as a signed JWT (RFC 7523 §2.2, `private_key_jwt`): iss and sub the client id,
// aud the authorization server, a short lifetime and a unique jti, signed with the client's private key.
#pragma once

#include <duet/client/error.hpp>

#include <chrono>
#include <string>

namespace duet::auth::detail {

/// ES256 (a P-256 key), ES384 (P-384), RS256 or PS256 (RSA), from a PEM private key (PKCS#8 or traditional).
[[nodiscard]] client::result<std::string> sign_client_assertion(std::string const& private_key_pem,
                                                                std::string const& algorithm,
                                                                std::string const& client_id,
                                                                std::string const& audience,
                                                                std::chrono::system_clock::time_point now);

} // namespace duet::auth::detail
