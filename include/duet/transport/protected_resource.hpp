/// @file duet/transport/protected_resource.hpp
///
/// An HTTP server as an OAuth 2.1 resource server (the MCP authorization spec): every request needs a bearer
/// token its verifier accepts, and the server publishes where tokens come from (Protected Resource Metadata,
/// RFC 9728). Both eras, POST, GET and DELETE alike; stdio is not affected.
///
///     http_options opts;
///     opts.authorization = protected_resource{
///         .verifier = auth::make_jwt_verifier(io.get_executor(), jwks_url, rules).value(),
///         .resource = "https://mcp.example/mcp",
///         .authorization_servers = {"https://as.example"},
///         .required_scopes = {"mcp"}};
///
/// Answers: a missing token 401 with `WWW-Authenticate: Bearer resource_metadata="…", scope="…"`; a bad one
/// the same with `error="invalid_token"`; a token without a scope the request needs 403 with
/// `error="insufficient_scope"` and every needed scope; a token in the query string 400; a verifier that
/// cannot reach its authorization server 503. The metadata is served at the path-based well-known URL of
/// `resource` and of each route, and at the root one, to any origin (CORS), cacheable.
#pragma once

#include <duet/auth/token_verifier.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace duet::transport {

struct protected_resource {
    /// Says whether a bearer token is good and whose it is; required.
    std::shared_ptr<auth::token_verifier> verifier;
    /// This resource's identifier (RFC 8707, RFC 9728 `resource`): the URL clients use for the endpoint,
    /// which tokens must name as their audience. Its origin is where the metadata's URL points. Empty only
    /// without authorization servers (a static token): no metadata is published then.
    std::string resource;
    /// The issuers clients get tokens from (RFC 9728 `authorization_servers`).
    std::vector<std::string> authorization_servers;
    /// Scopes every request needs; the challenge's `scope` names them.
    std::vector<std::string> required_scopes;
    /// The scopes clients may ask for (RFC 9728 `scopes_supported`); empty: the required ones and every
    /// scope a tool, prompt or resource of the served routes needed when the server started.
    std::vector<std::string> scopes_supported;
    std::string resource_name;          ///< RFC 9728 `resource_name`, for people
    std::string resource_documentation; ///< a URL, RFC 9728 `resource_documentation`
    /// How long clients may cache the metadata (Cache-Control max-age).
    std::chrono::seconds metadata_max_age{3600};
};

} // namespace duet::transport
