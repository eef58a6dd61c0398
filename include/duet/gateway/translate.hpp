/// @file duet/gateway/translate.hpp
///
/// The gateway's pure translations between a downstream request and its upstream: what an upstream says about
/// itself (InitializeResult or DiscoverResult: its capabilities are protocol::server_capabilities::from_json)
/// as a server's description, the params a forwarded request
/// carries upstream (the downstream's envelope and input-round fields belong to the gateway), a result's own
/// cache hints, and an upstream's error as the downstream's.
///
///     auto info = implementation_from_json(init.at("serverInfo").as_object());
///     auto up = upstream_params(method_id::tools_call, params, /*lenient_args=*/false);  // or -32602
#pragma once

#include <duet/protocol/capabilities.hpp>
#include <duet/protocol/errors.hpp>
#include <duet/protocol/method_table.hpp>
#include <duet/protocol/shaping.hpp>
#include <duet/server/server.hpp>

#include <boost/json/object.hpp>
#include <boost/system/result.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace duet::gateway {

/// An Implementation object (serverInfo) as a server's description; missing name/version become "unknown".
[[nodiscard]] server::implementation_info implementation_from_json(boost::json::object const& info);

/// The params of `method` as they go upstream: without `requestState` and `inputResponses` (the gateway's
/// own input rounds), without the downstream's envelope keys and progress token in `_meta` (the upstream
/// connection writes its own; other `_meta` keys pass). tools/call arguments sent flat in `payload` are moved
/// into `arguments` when `lenient_args`, and refused with -32602 otherwise.
[[nodiscard]] boost::system::result<boost::json::object, protocol::error_object>
upstream_params(protocol::method_id method, boost::json::object const& params, bool lenient_args);

/// Takes a result's own modern fields out of it: `resultType`, and `ttlMs` / `cacheScope` as the hints to
/// serve it with (defaults when absent or malformed), plus the upstream's serverInfo in `_meta`.
[[nodiscard]] protocol::cache_hints take_result_hints(boost::json::object& result);

/// Whether an upstream's error says a resource was not found, in any era's spelling: -32002, -32602 with
/// `data.uri`, or -32602 saying so in words (the TypeScript SDK's servers).
[[nodiscard]] bool is_resource_not_found(protocol::error_object const& e) noexcept;

/// resources/read's resource-not-found, the one error each era spells its own way (legacy -32002; modern
/// -32602 with `data.uri`; ERA-POLICY), as the `downstream` era spells it for the URI the read asked for
/// (`read_params.uri`). None when `upstream` is another error or the read named no URI: it passes as it came.
[[nodiscard]] std::optional<protocol::error_object> respell_not_found(protocol::error_object const& upstream,
                                                                      boost::json::object const& read_params,
                                                                      protocol::era downstream);

/// The downstream's error for an upstream that failed without a JSON-RPC error of its own (gone, timed out,
/// broke the protocol): -32603 naming the upstream and what happened.
[[nodiscard]] protocol::error_object upstream_unavailable(std::string_view upstream, std::string_view what);

/// Whether `e` is an upstream_unavailable error (of any upstream): what a circuit breaker counts as a
/// failure, where the upstream's own errors are answers.
[[nodiscard]] bool is_upstream_unavailable(protocol::error_object const& e) noexcept;

} // namespace duet::gateway
