/// @file duet/auth/metadata.hpp
///
/// The two documents discovery finds, read into what the flow uses: a protected resource's metadata
/// (RFC 9728 §2) and an authorization server's (RFC 8414 §2, OpenID Connect Discovery §3). Reading checks the
/// fields' types and the required ones; members the flow does not use are not kept.
#pragma once

#include <duet/client/error.hpp>

#include <boost/json/fwd.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace duet::auth {

struct resource_metadata {
    std::string resource;
    std::vector<std::string> authorization_servers;
    std::optional<std::vector<std::string>> scopes_supported;
};

struct server_metadata {
    std::string issuer;
    std::string authorization_endpoint;
    std::string token_endpoint;
    std::string registration_endpoint; ///< empty: no dynamic registration
    std::optional<std::vector<std::string>> scopes_supported;
    std::optional<std::vector<std::string>> grant_types_supported;
    std::optional<std::vector<std::string>> token_endpoint_auth_methods_supported;
    std::optional<std::vector<std::string>> code_challenge_methods_supported;
    std::optional<std::vector<std::string>> token_endpoint_auth_signing_alg_values_supported;
    bool client_id_metadata_document_supported = false;
    bool authorization_response_iss_parameter_supported = false; ///< RFC 9207

    /// Whether a list field names `value`; an absent list names nothing.
    [[nodiscard]] static bool lists(std::optional<std::vector<std::string>> const& field,
                                    std::string_view value) noexcept;
};

/// A protected resource metadata document; a protocol error names the field that is missing or mistyped.
[[nodiscard]] client::result<resource_metadata> read_resource_metadata(boost::json::value const& doc);

/// An authorization server metadata document. `authorization_endpoint` may be absent (a machine-only
/// server for the client credentials grant); `token_endpoint` may not.
[[nodiscard]] client::result<server_metadata> read_server_metadata(boost::json::value const& doc);

} // namespace duet::auth
