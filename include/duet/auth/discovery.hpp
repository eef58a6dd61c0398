/// @file duet/auth/discovery.hpp
///
/// Where a client looks for the documents that describe a protected MCP server and its authorization server,
/// in the order the MCP authorization spec gives (2025-11-25 and 2026-07-28, "Discovery"), and how their
/// identifiers are compared. Pure functions over URLs: the fetching is the flow's (oauth.hpp).
///
///     resource_metadata_urls(*parse_http_url("https://mcp.example/api/mcp"), std::nullopt)
///       == {"https://mcp.example/.well-known/oauth-protected-resource/api/mcp",
///           "https://mcp.example/.well-known/oauth-protected-resource"}
///     authorization_server_metadata_urls("https://auth.example/tenant")
///       == {"https://auth.example/.well-known/oauth-authorization-server/tenant",
///           "https://auth.example/.well-known/openid-configuration/tenant",
///           "https://auth.example/tenant/.well-known/openid-configuration"}
#pragma once

#include <duet/client/error.hpp>
#include <duet/client/target.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace duet::auth {

/// `scheme://host[:port]`, the host in lower case and the port only when it is not the scheme's default.
[[nodiscard]] std::string origin_of(client::http_url const& url);

/// The server's canonical URI (RFC 8707 §2, the spec's "Canonical Server URI"): lower-case scheme and host,
/// no default port, no fragment, no trailing slash after a path.
[[nodiscard]] std::string canonical_resource(client::http_url const& server);

/// The protected resource metadata URLs to try (RFC 9728 §3.1): the challenge's `resource_metadata` when
/// given, then the path-based well-known URL (for a server URL with a path), then the root one.
[[nodiscard]] std::vector<std::string> resource_metadata_urls(client::http_url const& server,
                                                              std::optional<std::string_view> from_challenge);

/// The authorization server metadata URLs to try for an issuer (RFC 8414 §3.1 and OpenID Connect Discovery
/// 1.0 §4): with a path, OAuth path-inserted, OpenID path-inserted, OpenID path-appended; without, OAuth
/// then OpenID at the root. A usage error when the issuer is no https/http URL or has a query or fragment.
[[nodiscard]] client::result<std::vector<std::string>>
authorization_server_metadata_urls(std::string_view issuer);

/// Whether the protected resource metadata's `resource` names this server (RFC 9728 §3.3, the spec's
/// resource check): the same origin, and its path the server's path or a parent of it on a segment boundary.
[[nodiscard]] bool resource_covers(std::string_view resource, client::http_url const& server);

} // namespace duet::auth
