/// @file duet/auth/token_verifier.hpp
///
/// What a protected server asks of every bearer token: is it good, and whose is it. One seam, three
/// built-ins: JWT access tokens (RFC 9068) checked against the authorization server's JWK Set, opaque tokens
/// asked about at its introspection endpoint (RFC 7662), and a static token the operator set. An HTTP server
/// takes one through http_options::authorization (transport/protected_resource.hpp); the built-ins are in
/// auth/verifiers.hpp.
///
///     auto verifier = auth::make_jwt_verifier(io.get_executor(), "https://as.example/jwks",
///                                             {.issuer = "https://as.example",
///                                              .audience = "https://mcp.example/mcp"}).value();
///     if (auto now = verifier->verify_now(token)) use(*now);         // cached, or checked against keys held
///     else use(co_await verifier->async_verify(std::string(token))); // fetches keys or asks the endpoint
///
/// Verified tokens are kept (by their SHA-256; the token itself is kept nowhere) until they expire or
/// `cache_lifetime` passes, at most `cache_entries` of them, so a client's next requests cost a hash and a
/// lookup instead of a signature check or a round trip. Every member may be called from any thread at once.
#pragma once

#include <duet/auth/access_token.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/system/result.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace duet::auth {

/// A verified token (shared: one verification serves every request that presents it) or why it is refused.
using token_verdict = boost::system::result<std::shared_ptr<verified_token const>, token_rejection>;

class token_verifier {
public:
    virtual ~token_verifier() = default;

    /// The verdict when it can be had without waiting: a token verified before, or one checked against the
    /// keys held. nullopt when only async_verify can tell (no fresh keys, a key the set lacks, a token never
    /// introspected). `token` is the credential without "Bearer ".
    [[nodiscard]] virtual std::optional<token_verdict> verify_now(std::string_view token) = 0;

    /// The verdict, fetching what it needs. Resumes on the caller's executor.
    [[nodiscard]] virtual boost::asio::awaitable<token_verdict> async_verify(std::string token) = 0;
};

/// The verified-token cache every built-in keeps.
struct verified_cache_options {
    std::size_t cache_entries = 10000; ///< 0 keeps none
    /// The longest a verdict is reused (never past the token's `exp`): a revoked JWT stops working within it
    /// only where the authorization server also rotates keys, so keep it short where revocation matters.
    std::chrono::milliseconds cache_lifetime{std::chrono::minutes(5)};
};

} // namespace duet::auth
