// The three ways the provider gets tokens from a token endpoint: the authorization code grant with PKCE
// (a user), the refresh token grant, and the client credentials grant (a machine). Each sends `resource`
// (RFC 8707) so the token is for this server only.
#pragma once

#include <duet/auth/oauth.hpp>

#include "discover.hpp"
#include "token_endpoint.hpp"

#include <boost/asio/awaitable.hpp>

#include <optional>
#include <string>
#include <vector>

namespace duet::auth::detail {

/// The authorization URL the user is sent to.
[[nodiscard]] std::string authorization_url(authorization_context const& ctx, client_auth const& identity,
                                            std::string const& redirect_uri, std::string const& state,
                                            std::string const& code_challenge,
                                            std::optional<std::vector<std::string>> const& scopes);

/// The code a redirect carries, once its `state`, `error` and `iss` (RFC 9207) are checked; an error in
/// words otherwise, and then no token request is made.
[[nodiscard]] client::result<std::string> read_redirect(std::string const& redirect, std::string const& state,
                                                        server_metadata const& as);

[[nodiscard]] boost::asio::awaitable<client::result<token_set>>
async_authorization_code(fetcher const& f, oauth_options const& options, authorization_context const& ctx,
                         client_auth const& identity, std::optional<std::vector<std::string>> const& scopes);

[[nodiscard]] boost::asio::awaitable<client::result<token_set>>
async_refresh(fetcher const& f, authorization_context const& ctx, client_auth const& identity,
              token_set const& held);

[[nodiscard]] boost::asio::awaitable<client::result<token_set>>
async_client_credentials(fetcher const& f, authorization_context const& ctx,
                         machine_credentials const& machine,
                         std::optional<std::vector<std::string>> const& scopes);

} // namespace duet::auth::detail
