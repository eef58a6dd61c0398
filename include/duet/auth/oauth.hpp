/// @file duet/auth/oauth.hpp
///
/// OAuth 2.1 for an MCP client, as the MCP authorization spec (2025-11-25 and 2026-07-28) has it: a 401
/// starts discovery (protected resource metadata, then the authorization server's), the client identifies
/// itself (pre-registered credentials, a Client ID Metadata Document, or dynamic registration), the user
/// authorizes (authorization code with PKCE S256, `state`, `resource`, and RFC 9207's `iss` checked), and the
/// token then rides on every request, refreshed before it expires. A 403 `insufficient_scope` steps up to the
/// union of the scopes held and those asked for. Machines without a user take the client credentials grant
/// instead.
///
///     auth::oauth_options o;
///     o.user_step = auth::loopback_user_step(ex, open_browser);        // or your own UI
///     auto provider = auth::oauth_authorization::make(ex, url, std::move(o)).value();
///     client::http_target t{url};
///     t.authorization = provider;                                      // the client does the rest
///
/// @par Thread safety
/// Calls come from the client's executor, one at a time. Concurrent refusals share one authorization.
#pragma once

#include <duet/auth/credentials.hpp>
#include <duet/auth/metadata.hpp>
#include <duet/client/authorization.hpp>
#include <duet/client/target.hpp>
#include <duet/tls/config.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace duet::auth {

/// The user's part of an authorization code grant: show `authorization_url` to the user (a browser) and
/// return the URL the authorization server redirected the browser to, with its `code` and `state`.
using user_step =
    std::function<boost::asio::awaitable<client::result<std::string>>(std::string const& authorization_url)>;

/// A client without a user (a service, the gateway's upstream): the client credentials grant, with a secret
/// (client_secret_basic) or a private key (private_key_jwt, RFC 7523).
struct machine_credentials {
    std::string client_id;
    std::string client_secret;
    std::string private_key_pem;
    std::string signing_algorithm = "ES256";
};

struct oauth_options {
    /// Client credentials issued beforehand. Each is used only with its `issuer`; an empty issuer means any
    /// authorization server (a CLI's `--client-id`).
    std::vector<client_registration> preregistered;
    /// An https URL where this client's metadata document is served, used as its client_id by authorization
    /// servers that support Client ID Metadata Documents. Empty: none.
    std::string client_metadata_url;
    std::string client_name = "Duet";
    /// Where the authorization server sends the browser back to (loopback_redirect.hpp listens there).
    std::string redirect_uri = "http://127.0.0.1/callback";
    /// Scopes to ask for instead of those the server suggests.
    std::optional<std::vector<std::string>> scopes;
    /// The user's part of the authorization code grant; unset: there is no user to ask, and a server that
    /// needs one fails the request with "authorization needed" (a CLI without a terminal).
    user_step user;
    /// The client credentials grant instead of a user.
    std::optional<machine_credentials> machine;
    /// Where tokens and registrations live; none: in memory for this provider.
    std::shared_ptr<credential_store> store;
    /// What https metadata, registration and token endpoints are trusted with.
    tls::client_config tls;
    /// A token this close to its expiry is refreshed before it is sent.
    std::chrono::seconds refresh_margin{60};
    /// How long one metadata, registration or token request may take.
    std::chrono::milliseconds request_timeout{std::chrono::seconds(30)};
};

class oauth_authorization final : public client::http_authorization,
                                  public std::enable_shared_from_this<oauth_authorization> {
public:
    /// A provider for the MCP server at `server_url`; a usage error when that is no http(s) URL.
    [[nodiscard]] static client::result<std::shared_ptr<oauth_authorization>>
    make(boost::asio::any_io_executor ex, std::string const& server_url, oauth_options options);

    boost::asio::awaitable<client::result<std::string>> async_header() override;
    boost::asio::awaitable<client::result<bool>>
    async_refused(unsigned status, std::vector<std::string> const& www_authenticate,
                  std::string const& sent) override;

    /// Authorizes now, without waiting for the server to refuse a request (`duet login`), and returns the
    /// tokens granted.
    boost::asio::awaitable<client::result<token_set>> async_login();

    /// The tokens held for this server, if any (`duet auth status`).
    [[nodiscard]] client::result<std::optional<token_set>> tokens() const;
    /// Forgets the tokens held for this server (`duet logout`).
    [[nodiscard]] client::result<void> forget();

    /// The server's canonical URI, under which its tokens are kept.
    [[nodiscard]] std::string const& resource_key() const noexcept;

    ~oauth_authorization() override;

    struct state;
    oauth_authorization(boost::asio::any_io_executor ex, client::http_url url, oauth_options options);

private:
    std::unique_ptr<state> state_;
};

} // namespace duet::auth
