/// @file duet/auth/credentials.hpp
///
/// What an OAuth client keeps between requests and between runs: the tokens it holds for a protected server
/// (keyed by the server's canonical URI, with the issuer that granted them), and the client registration it
/// made with an authorization server (keyed by issuer: a client id is only valid where it was issued, so a
/// new authorization server means a new registration). A store is where they live: in memory for a process,
/// in files for the CLI (file_store.hpp).
#pragma once

#include <duet/client/error.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace duet::auth {

struct token_set {
    std::string issuer;   ///< the authorization server that granted them
    std::string resource; ///< the server they are for (canonical URI)
    std::string access_token;
    std::string token_type = "Bearer";
    std::string refresh_token; ///< empty: none was granted
    std::optional<std::chrono::system_clock::time_point> expires_at;
    std::optional<std::chrono::system_clock::time_point> obtained_at; ///< when the token endpoint answered
    std::vector<std::string> scopes; ///< as granted (or as requested, when the answer named none)
    std::string client_id;           ///< the client they were granted to: a refresh comes from it alone

    /// Whether it expires within `margin` of `now` (never, without an expiry).
    [[nodiscard]] bool expires_within(
        std::chrono::seconds margin,
        std::chrono::system_clock::time_point now = std::chrono::system_clock::now()) const noexcept {
        return expires_at && *expires_at <= now + margin;
    }

    /// Whether to refresh it before it is sent: within `margin` of its expiry, or past half its lifetime when
    /// it lives shorter than twice `margin` (else a short-lived token is refreshed before every request).
    [[nodiscard]] bool due_for_refresh(
        std::chrono::seconds margin,
        std::chrono::system_clock::time_point now = std::chrono::system_clock::now()) const noexcept {
        if (!expires_at)
            return false;
        auto effective = std::chrono::system_clock::duration(margin);
        if (obtained_at && *expires_at - *obtained_at < 2 * effective)
            effective = (*expires_at - *obtained_at) / 2;
        return *expires_at <= now + effective;
    }
};

struct client_registration {
    std::string issuer;
    std::string client_id;
    std::string client_secret; ///< empty: a public client
    std::string token_endpoint_auth_method = "none";
    /// When the secret stops working (RFC 7591 `client_secret_expires_at`); none: never.
    std::optional<std::chrono::system_clock::time_point> secret_expires_at;
};

/// Where tokens and registrations live. Calls come from one executor at a time.
class credential_store {
public:
    virtual ~credential_store() = default;
    [[nodiscard]] virtual client::result<std::optional<token_set>>
    load_tokens(std::string const& resource) = 0;
    [[nodiscard]] virtual client::result<void> save_tokens(token_set const& tokens) = 0;
    [[nodiscard]] virtual client::result<void> erase_tokens(std::string const& resource) = 0;
    [[nodiscard]] virtual client::result<std::optional<client_registration>>
    load_registration(std::string const& issuer) = 0;
    [[nodiscard]] virtual client::result<void> save_registration(client_registration const& registration) = 0;
};

/// A store that lives as long as the process.
class memory_store final : public credential_store {
public:
    client::result<std::optional<token_set>> load_tokens(std::string const& resource) override;
    client::result<void> save_tokens(token_set const& tokens) override;
    client::result<void> erase_tokens(std::string const& resource) override;
    client::result<std::optional<client_registration>> load_registration(std::string const& issuer) override;
    client::result<void> save_registration(client_registration const& registration) override;

private:
    std::vector<token_set> tokens_;
    std::vector<client_registration> registrations_;
};

} // namespace duet::auth
