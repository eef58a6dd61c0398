/// @file duet/protocol/caller.hpp
///
/// Who sent a request, as far as its transport established it: the client certificate mutual TLS verified,
/// the bearer token a protected HTTP server verified (auth/token_verifier.hpp). Handlers read it through
/// request_context::caller(); it is null where the transport established nothing (stdio, plain HTTP without
/// tokens).
#pragma once

#include <boost/json/object.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace duet::protocol {

/// An access token that passed every check of the resource server (auth::verify_access_token, token
/// introspection, or a static token).
struct verified_token {
    std::string subject;   ///< `sub`; empty when absent
    std::string client_id; ///< `client_id` (RFC 9068 §2.2), else `azp` (OpenID Connect); empty when neither
    std::string issuer;    ///< `iss`
    /// `scope` split at spaces (RFC 9068 §2.2.3, RFC 6749 §3.3); without it, `scp` (an array of strings, or
    /// one space-separated string, as some servers write it). Duplicates dropped, order kept.
    std::vector<std::string> scopes;
    std::optional<std::chrono::system_clock::time_point> expires_at; ///< `exp`
    boost::json::object claims;                                      ///< every claim, as signed

    [[nodiscard]] bool has_scope(std::string_view scope) const noexcept {
        return std::find(scopes.begin(), scopes.end(), scope) != scopes.end();
    }
};

struct caller_identity {
    /// The subject (RFC 2253) of the client certificate mutual TLS verified; empty without one.
    std::string tls_subject;
    /// The bearer token the server verified for this request; null when it checks none.
    std::shared_ptr<verified_token const> token;
};

} // namespace duet::protocol
