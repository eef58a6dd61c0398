// What a protected server (http_options::authorization) asks of a request's head after the other guards:
// no token in the query, a bearer token its verifier accepts, the scopes every request needs; and the
// Protected Resource Metadata (RFC 9728) it publishes. The answers it refuses with: 400, 401 and 403 with
// their `WWW-Authenticate` challenges (RFC 6750 §3), 503 when the verifier cannot reach its authorization
// server. Pure but for the verifier, which it only asks.
#pragma once

#include <duet/transport/http_server.hpp>

#include "remembered_token.hpp"
#include "reply.hpp"
#include "request.hpp"

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace duet::transport::http {

class bearer_guard {
public:
    using token_ptr = std::shared_ptr<protocol::verified_token const>;
    /// The token's verdict is not known yet: the verifier must be asked with async_verify.
    struct pending {
        std::string token;
    };

    /// `authorization` must outlive the guard. `route_paths` are the endpoints served; `scopes_supported` is
    /// what the metadata lists when authorization.scopes_supported is empty.
    bearer_guard(protected_resource const& authorization, std::vector<std::string> const& route_paths,
                 std::vector<std::string> const& scopes_supported);

    /// The endpoints changed (http_server::add_route, remove_route): the metadata is published at theirs from
    /// now on, listing `scopes_supported` as the constructor's does. Thread-safe against metadata(); changes
    /// are the caller's to serialise.
    void set_routes(std::vector<std::string> const& route_paths,
                    std::vector<std::string> const& scopes_supported);

    /// The metadata when `path` is one of its well-known URLs: GET answered 200, OPTIONS (a CORS
    /// preflight) 204, anything else 405.
    [[nodiscard]] std::optional<reply> metadata(request const& req, std::string_view path) const;

    /// The verified token, the refusal, or the token to verify asynchronously. `last` is the connection's
    /// memory of its previous token, read and updated here.
    [[nodiscard]] std::variant<token_ptr, reply, pending> check_now(request const& req,
                                                                    remembered_token& last) const;
    /// After async_verify of `token`: the token when good and holding the required scopes, else the refusal.
    [[nodiscard]] std::variant<token_ptr, reply> settle(auth::token_verdict const& verdict, std::string token,
                                                        remembered_token& last) const;

    /// The 403 challenge when `token` lacks a scope of `needed` or of the required ones, naming all of them;
    /// nullopt when it holds every one.
    [[nodiscard]] std::optional<reply> insufficient(protocol::verified_token const& token,
                                                    std::vector<std::string> const& needed) const;

    [[nodiscard]] auth::token_verifier& verifier() const noexcept { return *authorization_.verifier; }

private:
    [[nodiscard]] reply challenge(boost::beast::http::status status, std::string_view error,
                                  std::string_view description, std::vector<std::string> const& scopes) const;

    // What the metadata's well-known paths answer, replaced whole when the endpoints change.
    struct published_metadata {
        std::vector<std::string> paths; ///< the well-known paths served
        std::string body;
    };

    protected_resource const& authorization_;
    std::string metadata_url_;  ///< resource_metadata in challenges; empty without metadata
    std::string resource_path_; ///< the resource identifier's path, empty for "/"
    mutable std::mutex metadata_mutex_;
    std::shared_ptr<published_metadata const> metadata_; ///< null without metadata; under metadata_mutex_
    std::string cache_control_;
};

} // namespace duet::transport::http
