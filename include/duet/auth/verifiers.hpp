/// @file duet/auth/verifiers.hpp
///
/// The built-in token verifiers (token_verifier.hpp): JWT access tokens against a JWK Set, opaque tokens by
/// introspection, and one static token.
#pragma once

#include <duet/auth/introspection.hpp>
#include <duet/auth/key_source.hpp>
#include <duet/auth/token_verifier.hpp>
#include <duet/client/error.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <memory>
#include <string>
#include <vector>

namespace duet::auth {

/// JWT access tokens verified against the JWK Set at `jwks_url` (key_source.hpp) by `rules`. Keys are
/// fetched on `ex` (a strand of it). A usage error for a bad URL or options, or rules without an issuer or
/// an audience.
[[nodiscard]] client::result<std::shared_ptr<token_verifier>>
make_jwt_verifier(boost::asio::any_io_executor ex, std::string const& jwks_url, token_rules rules,
                  jwks_options options = {}, verified_cache_options cache = {});

/// Opaque tokens asked about at `introspection_url` (introspection.hpp); `rules.issuer` and
/// `rules.audience` apply as there. The cache lifetime is `options.max_cache`.
[[nodiscard]] client::result<std::shared_ptr<token_verifier>>
make_introspection_token_verifier(boost::asio::any_io_executor ex, std::string const& introspection_url,
                                  token_rules rules, introspection_options options);

/// One token the operator chose, compared in constant time; it stands for a caller with `scopes` and the
/// subject "static-token". A usage error for an empty token or one with characters a bearer token cannot
/// hold (RFC 6750 §2.1).
[[nodiscard]] client::result<std::shared_ptr<token_verifier>>
make_static_token_verifier(std::string token, std::vector<std::string> scopes = {});

} // namespace duet::auth
