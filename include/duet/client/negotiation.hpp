/// @file duet/client/negotiation.hpp
///
/// The pure decisions of the client side of ERA-POLICY, as plain functions the connect logic calls and unit
/// tests drive exhaustively: which version a legacy connect offers, whether an InitializeResult is
/// acceptable, what a probe's answer says about the era, which version a -32022 retry uses, and what a
/// result's `resultType` means (SEP-2322).
///
///     auto offer = legacy_offer(options.version);             // 2025-11-25, or a usage error for 2026-07-28
///     if(is_modern_error(err, 404)) ... modern ...
#pragma once

#include <duet/client/error.hpp>
#include <duet/jsonrpc/error.hpp>
#include <duet/protocol/version.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <optional>

namespace duet::client {

/// The version a legacy connect offers: the pinned one when it is a handshake version, else 2025-11-25. A
/// pinned modern version is a usage error (checked before anything is spawned or sent).
[[nodiscard]] result<protocol::version> legacy_offer(std::optional<protocol::version> pinned);

/// The version a modern connect sends: the pinned one when modern, else 2026-07-28. A pinned handshake
/// version is a usage error.
[[nodiscard]] result<protocol::version> modern_offer(std::optional<protocol::version> pinned);

/// Reads the version an InitializeResult settles on. A modern or unknown version, or a missing one, is
/// refused (version_rejected / protocol_violation); a counter-offer of another handshake version is adopted.
[[nodiscard]] result<protocol::version>
accepted_handshake_version(boost::json::value const& initialize_result);

/// A recognised modern error (ERA-POLICY "Client side"): -32020, -32021, -32022, or -32601 carried by HTTP
/// 404. `http_status` is 0 on stdio, where -32601 alone is not evidence.
[[nodiscard]] bool is_modern_error(jsonrpc::error_object const& e, unsigned http_status) noexcept;

/// After -32022: the newest modern version in `data.supported` that this client speaks, if any.
[[nodiscard]] std::optional<protocol::version> retry_version(boost::json::value const& error_data);

/// After -32022 naming no modern version: the newest handshake version in `data.supported`, for a switch to
/// `initialize` (DIGEST §15.8).
[[nodiscard]] std::optional<protocol::version> handshake_fallback(boost::json::value const& error_data);

/// What a result's `resultType` says (SEP-2322): missing means complete (legacy servers never send it);
/// "complete", "input_required" and "task" (the tasks extension's CreateTaskResult) are known; anything else
/// is invalid.
enum class result_kind : std::uint8_t { complete, input_required, task, invalid };
[[nodiscard]] result_kind kind_of(boost::json::object const& result) noexcept;

/// The params of the next round of a modern multi round-trip request: the original params (without any
/// previous round's `inputResponses` / `requestState`) plus this round's answers and the server's
/// `requestState`, echoed byte-exact, or no `requestState` at all when the server sent none.
[[nodiscard]] boost::json::object retry_params(boost::json::object original,
                                               boost::json::object input_responses,
                                               boost::json::value const* request_state);

} // namespace duet::client
