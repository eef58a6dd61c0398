// What the server reads of a request's head: a header by name, whether Accept lists a type, and the headers
// admission checks (protocol::http_facts). Fields are found by walking the request's few fields in order
// (request.hpp keeps no lookup structure, which would cost more than the walk). Pure.
#pragma once

#include <duet/protocol/admission.hpp>

#include "request.hpp"

#include <boost/beast/http/field.hpp>

#include <memory>
#include <optional>
#include <string_view>

namespace duet::transport::http {

/// The first field with this known name.
[[nodiscard]] std::optional<std::string_view> header(request const& req, boost::beast::http::field name);
/// The first field with this name, ignoring case (for names Beast does not know).
[[nodiscard]] std::optional<std::string_view> header(request const& req, std::string_view name);

/// Whether the Accept header lists `type` (or */*).
[[nodiscard]] bool accepts(request const& req, std::string_view type);

/// The request target's path: what precedes its query.
[[nodiscard]] inline std::string_view path_of(request const& req) {
    std::string_view const target(req.target().data(), req.target().size());
    return target.substr(0, target.find('?'));
}

/// The request's MCP-Protocol-Version, Mcp-Method, Mcp-Name and Mcp-Param-* headers, for admission, and
/// `caller`: who the connection that carried it established (mutual TLS; null otherwise).
[[nodiscard]] protocol::http_facts facts_of(request const& req,
                                            std::shared_ptr<protocol::caller_identity const> caller);

} // namespace duet::transport::http
