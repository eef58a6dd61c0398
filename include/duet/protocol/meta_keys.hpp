/// @file duet/protocol/meta_keys.hpp
///
/// The reserved `_meta` keys of MCP 2026-07-28 (DIGEST §2), spelled once.
#pragma once

#include <string_view>

namespace duet::protocol::meta_key {

inline constexpr std::string_view protocol_version = "io.modelcontextprotocol/protocolVersion";
inline constexpr std::string_view client_capabilities = "io.modelcontextprotocol/clientCapabilities";
inline constexpr std::string_view client_info = "io.modelcontextprotocol/clientInfo";
inline constexpr std::string_view log_level = "io.modelcontextprotocol/logLevel";
inline constexpr std::string_view server_info = "io.modelcontextprotocol/serverInfo";
inline constexpr std::string_view subscription_id = "io.modelcontextprotocol/subscriptionId";
inline constexpr std::string_view progress_token = "progressToken";
/// W3C Trace Context in `_meta` (not MCP's own: the convention of OpenTelemetry and the Python SDK).
inline constexpr std::string_view traceparent = "traceparent";
inline constexpr std::string_view tracestate = "tracestate";

} // namespace duet::protocol::meta_key
