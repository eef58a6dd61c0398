// The token endpoint's side of the flow (RFC 6749 §3.2, §4.1.3, §4.4, §6; OAuth 2.1 §3.2): the form of each
// grant, the client's authentication on it, and the reading of the answer. Pure: the flow sends what these
// build (fetch.hpp).
#pragma once

#include <duet/auth/credentials.hpp>
#include <duet/auth/metadata.hpp>

#include "fetch.hpp"

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace duet::auth::detail {

using form = std::vector<std::pair<std::string, std::string>>;

/// How the client proves itself at the token endpoint (RFC 7591 §2 method names).
struct client_auth {
    std::string client_id;
    std::string client_secret;
    std::string method = "none"; ///< none, client_secret_basic, client_secret_post, private_key_jwt
    std::string assertion;       ///< private_key_jwt: the signed JWT
};

/// The HTTP Basic `Authorization` value of a client (RFC 6749 §2.3.1: id and secret form-encoded before they
/// are joined), for the token and introspection endpoints.
[[nodiscard]] std::string basic_credentials(std::string const& client_id, std::string const& client_secret);

/// The token request for `grant`: the client's credentials added to the body or as HTTP Basic (RFC 6749
/// §2.3.1: id and secret form-encoded before base64).
[[nodiscard]] http_request token_request(std::string const& token_endpoint, form grant,
                                         client_auth const& auth);

/// The method to authenticate with, for a client with or without a secret, from what the server lists: a
/// secret goes as Basic when listed (also when nothing is listed: RFC 8414's default), else in the body.
[[nodiscard]] std::string choose_auth_method(server_metadata const& as, bool has_secret);

/// A token endpoint's answer read into tokens for `resource` from `issuer`. `requested` stands for the
/// granted scopes when the answer names none (RFC 6749 §5.1). An error carries the server's `error` and
/// `error_description` when it sent them.
[[nodiscard]] client::result<token_set>
read_token_response(http_response const& answer, std::string const& issuer, std::string const& resource,
                    std::vector<std::string> const& requested, std::chrono::system_clock::time_point now);

} // namespace duet::auth::detail
