/// @file duet/auth/key_source.hpp
///
/// The resource server's copy of an authorization server's published keys (its JWK Set at `jwks_uri`, RFC
/// 8414 §2, RFC 7517 §5): fetched when first needed, kept as long as the answer's Cache-Control allows
/// (within bounds), and refetched when a token names a key the copy lacks (a key rotation), no more often
/// than a rate limit allows. Verifying a token is `verify_access_token` (access_token.hpp) against that copy.
///
///     auto keys = auth::jwks_key_source::make(ex, "https://as.example/jwks.json", {}).value();
///     auto token = co_await keys->async_verify(std::move(bearer), rules);
///     if (!token) challenge(token.error().description);
///
/// One fetch at a time: callers that need the keys while a fetch is under way wait for it and share its
/// answer. A fetch that fails while a set is held keeps serving that set (stale) and is retried no sooner
/// than `refetch_interval` later. Use from one thread (or one strand). Errors are values; nothing throws.
#pragma once

#include <duet/auth/access_token.hpp>
#include <duet/client/error.hpp>
#include <duet/tls/config.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/system/result.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

namespace duet::auth {

struct jwks_options {
    /// What an https `jwks_uri` is trusted with.
    tls::client_config tls;
    /// How long one fetch may take, connection to last byte.
    std::chrono::milliseconds request_timeout{std::chrono::seconds(10)};
    /// How long a set is fresh when its answer says nothing (no Cache-Control max-age).
    std::chrono::milliseconds default_lifetime{std::chrono::minutes(5)};
    /// Bounds on the lifetime an answer asks for; `no-store` or `no-cache` gets the minimum.
    std::chrono::milliseconds min_lifetime{std::chrono::seconds(30)};
    std::chrono::milliseconds max_lifetime{std::chrono::hours(24)};
    /// No fetch sooner than this after the previous one: a token naming an unknown key, or a failed fetch,
    /// does not send one request per token to the authorization server.
    std::chrono::milliseconds refetch_interval{std::chrono::seconds(30)};
    /// A larger JWK Set document is refused.
    std::size_t max_document_bytes = 1024 * 1024;
};

class jwks_key_source : public std::enable_shared_from_this<jwks_key_source> {
public:
    struct state;

    /// A key source for the JWK Set at `jwks_url`; a usage error when that is no http(s) URL or the options
    /// contradict themselves (min_lifetime over max_lifetime, a negative duration, no document size).
    [[nodiscard]] static client::result<std::shared_ptr<jwks_key_source>>
    make(boost::asio::any_io_executor ex, std::string const& jwks_url, jwks_options options);

    /// Use make().
    jwks_key_source(boost::asio::any_io_executor ex, std::string jwks_url, jwks_options options);
    ~jwks_key_source();
    jwks_key_source(jwks_key_source const&) = delete;
    jwks_key_source& operator=(jwks_key_source const&) = delete;

    /// The key set: the copy held while it is fresh, else a fetched one. When the fetch fails (or may not
    /// happen yet), the copy held, however old; the error only when there has never been a set.
    [[nodiscard]] boost::asio::awaitable<client::result<jwk_set>> async_keys();

    /// Verifies `token` (without "Bearer ") against the key set as of now. When the token names a key the set
    /// lacks, the set is refetched once (if the rate limit allows) and the token verified again; a rejection
    /// returned then has `unknown_key` false, since the refetch has been done. When no key set can be had,
    /// a rejection saying so, with `server_unavailable` set.
    [[nodiscard]] boost::asio::awaitable<boost::system::result<verified_token, token_rejection>>
    async_verify(std::string token, token_rules rules);

    /// The set held now and until when it is fresh (a caller keeping a copy for other threads); nullopt
    /// before the first set arrived.
    struct held_keys {
        jwk_set keys;
        std::chrono::steady_clock::time_point fresh_until;
    };
    [[nodiscard]] std::optional<held_keys> held() const;

    /// How many fetches have been started (for diagnostics and tests).
    [[nodiscard]] std::size_t fetch_count() const noexcept;

private:
    std::unique_ptr<state> state_;
};

} // namespace duet::auth
