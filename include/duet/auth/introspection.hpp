/// @file duet/auth/introspection.hpp
///
/// The resource server's other way to check a bearer token: ask the authorization server (OAuth 2.0 Token
/// Introspection, RFC 7662). For opaque tokens, which carry nothing a resource server could verify itself.
/// Each new token is POSTed to the introspection endpoint (`token=...&token_type_hint=access_token`, the
/// resource server authenticated with HTTP Basic, RFC 6749 §2.3.1); an active answer is kept until the token
/// expires or `max_cache` passes, whichever is first, so a client's next requests cost no round trip.
///
///     auto introspect = auth::introspection_verifier::make(ex, "https://as.example/introspect",
///                                                           {.client_id = "mcp", .client_secret =
///                                                           s}).value();
///     auto token = co_await introspect->async_verify(std::move(bearer), rules);
///     if (!token) token.error().server_unavailable ? answer_503() : challenge(token.error().description);
///
/// Accepted: an answer of HTTP 200 with a JSON object whose `active` is true, whose `iss` (when present) is
/// `rules.issuer` byte for byte, whose `aud` is or contains `rules.audience`, and whose `exp` (when present)
/// has not passed (within `rules.leeway`). `rules.algorithms` and `require_at_jwt_typ` do not apply. A server
/// that fails (unreachable, too slow, not 200, not a JSON object) gives a rejection with `server_unavailable`
/// set.
///
/// Cached: active answers only, keyed by the SHA-256 of the token (the token itself is never kept), at most
/// `max_entries` of them (the oldest dropped first); every use of a cached answer checks it against that
/// call's rules and clock again. Concurrent verifications of one token share one request. Use from one thread
/// (or one strand). Errors are values; nothing throws.
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
#include <string>

namespace duet::auth {

struct introspection_options {
    /// What an https introspection endpoint is trusted with.
    tls::client_config tls;
    /// The resource server's credentials at the authorization server (HTTP Basic); `client_id` is required.
    std::string client_id;
    std::string client_secret;
    /// How long one introspection request may take, connection to last byte.
    std::chrono::milliseconds request_timeout{std::chrono::seconds(10)};
    /// The longest an active answer is reused (never past the token's `exp`); 0 caches nothing.
    std::chrono::milliseconds max_cache{std::chrono::minutes(5)};
    /// At most this many answers cached; the oldest is dropped to make room. 0 caches nothing.
    std::size_t max_entries = 10000;
    /// A longer token is refused without asking the server.
    std::size_t max_token_bytes = 8192;
};

class introspection_verifier : public std::enable_shared_from_this<introspection_verifier> {
public:
    struct state;

    /// A verifier asking the endpoint at `introspection_url`; a usage error when that is no http(s) URL, the
    /// options name no client id, have a negative duration or a zero token size.
    [[nodiscard]] static client::result<std::shared_ptr<introspection_verifier>>
    make(boost::asio::any_io_executor ex, std::string const& introspection_url,
         introspection_options options);

    /// Use make().
    introspection_verifier(boost::asio::any_io_executor ex, std::string introspection_url,
                           introspection_options options);
    ~introspection_verifier();
    introspection_verifier(introspection_verifier const&) = delete;
    introspection_verifier& operator=(introspection_verifier const&) = delete;

    /// Verifies `token` (without "Bearer ") as of now: from the cache when an active answer for it is held,
    /// else by asking the endpoint. `claims` of the result is the endpoint's answer.
    [[nodiscard]] boost::asio::awaitable<boost::system::result<verified_token, token_rejection>>
    async_verify(std::string token, token_rules rules);

    /// How many introspection requests have been started (for diagnostics and tests).
    [[nodiscard]] std::size_t request_count() const noexcept;
    /// How many answers are cached now.
    [[nodiscard]] std::size_t cached() const noexcept;

private:
    std::unique_ptr<state> state_;
};

} // namespace duet::auth
