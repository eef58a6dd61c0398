/// @file duet/protocol/request_headers.hpp
///
/// The HTTP headers a modern request carries (DIGEST §9), computed from its body so that they cannot disagree
/// with it: `MCP-Protocol-Version` (the `_meta` version), `Mcp-Method`, `Mcp-Name` (tools/call and
/// prompts/get: `params.name`; resources/read: `params.uri`) and one `Mcp-Param-{Name}` per `x-mcp-header`
/// binding whose argument is present and not null. Values unsafe as plain ASCII travel in the
/// `=?base64?...?=` form. This is the client-side mirror of what admission checks on the server side.
///
///     auto bindings = collect_param_headers(tool.at("inputSchema").as_object());
///     for(auto const& h : modern_request_headers(request, *bindings)) req.set(h.name, h.value);
#pragma once

#include <duet/jsonrpc/message.hpp>
#include <duet/protocol/admission.hpp>
#include <duet/protocol/param_headers.hpp>

#include <boost/json/value.hpp>

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace duet::protocol {

/// The header form of one mirrored argument: strings (base64 form when unsafe), `true`/`false`, decimal
/// integers. Nothing for null, absent or any other JSON type (those are never mirrored).
[[nodiscard]] std::optional<std::string> param_header_value(boost::json::value const& argument);

/// Every routing header of a modern request, in the order version, method, name, params. `bindings` are the
/// called tool's `x-mcp-header` bindings (empty for other methods, or when the tool is unknown). A request
/// whose `_meta` carries no version string gets no `MCP-Protocol-Version` header.
[[nodiscard]] std::vector<http_header> modern_request_headers(jsonrpc::request const& request,
                                                              std::span<param_header const> bindings = {});

} // namespace duet::protocol
