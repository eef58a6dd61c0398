// Who the client is to one authorization server, in the spec's order: credentials registered beforehand for
// that issuer, a registration this client made there earlier, its Client ID Metadata Document URL where the
// server accepts one, else a dynamic registration (RFC 7591) kept for next time. Never a client id issued
// by another server.
#pragma once

#include <duet/auth/credentials.hpp>
#include <duet/auth/oauth.hpp>

#include "discover.hpp"
#include "token_endpoint.hpp"

#include <boost/asio/awaitable.hpp>

namespace duet::auth::detail {

[[nodiscard]] boost::asio::awaitable<client::result<client_auth>>
async_identify(fetcher const& f, oauth_options const& options, credential_store& store,
               authorization_context const& ctx);

/// Who asks for a refresh of `held`: the client it was granted to, with that client's credentials (registered
/// beforehand or kept from its registration), else as a public client (a metadata document URL, say).
[[nodiscard]] client::result<client_auth> refresh_identity(oauth_options const& options,
                                                           credential_store& store,
                                                           authorization_context const& ctx,
                                                           token_set const& held);

/// The body of a dynamic registration request (RFC 7591 §2, with the spec's `application_type`).
[[nodiscard]] std::string registration_body(oauth_options const& options, server_metadata const& as,
                                            std::string const& auth_method);

/// The authentication method to register with: `none` where the server takes it (a native client with
/// PKCE needs no secret), else a secret the way it prefers.
[[nodiscard]] std::string registration_auth_method(server_metadata const& as);

} // namespace duet::auth::detail
