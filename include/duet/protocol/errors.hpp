/// @file duet/protocol/errors.hpp
///
/// The MCP error codes (spec codes only: Duet never mints JSON-RPC codes for local conditions) and one
/// constructor per error the spec describes, each with the exact code, message and `data` it requires.
///
///     unsupported_protocol_version("2027-01-01")
///       -> {code:-32022, message:"Unsupported protocol version",
///           data:{supported:["2026-07-28"], requested:"2027-01-01"}}
///
/// A `rejection` is an error plus the HTTP status it maps to (DIGEST §9), decided here so that transports
/// never decide it.
#pragma once

#include <duet/jsonrpc/error.hpp>
#include <duet/protocol/version.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/system/error_code.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace duet::protocol {

/// Every JSON-RPC error code MCP defines. Guidance: return the most specific one that applies.
enum class errc : std::int32_t {
    parse_error = -32700,                        ///< the bytes are not JSON
    invalid_request = -32600,                    ///< valid JSON, not a valid JSON-RPC request
    method_not_found = -32601,                   ///< no such method in this era, or its capability is off
    invalid_params = -32602,                     ///< params or `_meta` malformed; modern resource not found
    internal_error = -32603,                     ///< the server failed; never carries internal detail
    resource_not_found = -32002,                 ///< legacy (<= 2025-11-25) resource-not-found only
    header_mismatch = -32020,                    ///< an HTTP header missing or not mirroring the body
    missing_required_client_capability = -32021, ///< the request did not declare what the handler needs
    unsupported_protocol_version = -32022,       ///< `_meta` names a version that is not modern
    url_elicitation_required = -32042,           ///< 2025-11-25 URL elicitation (legacy only)
};

[[nodiscard]] boost::system::error_category const& error_category() noexcept;
[[nodiscard]] boost::system::error_code make_error_code(errc e) noexcept;

/// All enumerators, for tests and tables.
inline constexpr errc all_errc[] = {
    errc::parse_error,
    errc::invalid_request,
    errc::method_not_found,
    errc::invalid_params,
    errc::internal_error,
    errc::resource_not_found,
    errc::header_mismatch,
    errc::missing_required_client_capability,
    errc::unsupported_protocol_version,
    errc::url_elicitation_required,
};

/// The standard message of a code ("Method not found", "Unsupported protocol version", ...).
[[nodiscard]] std::string_view standard_message(errc e) noexcept;

using error_object = jsonrpc::error_object;

/// An admission failure: the error the peer gets and the HTTP status that carries it.
struct rejection {
    error_object error;
    unsigned http_status = 200;

    friend bool operator==(rejection const&, rejection const&) = default;
};

/// Lets result<T, rejection>::value() throw (edges only).
[[noreturn]] void throw_exception_from_error(rejection const& r, boost::source_location const& loc);

/// The HTTP status of a modern-era error (DIGEST §9): 400 for -32020/-32021/-32022, for -32602 (by code
/// alone, so envelope errors and every other -32602) and for a malformed message (-32700/-32600); 404 for
/// -32601; else 200 (a JSON-RPC error in a normal response).
[[nodiscard]] unsigned modern_http_status(errc e) noexcept;

// ---- constructors -----------------------------------------------------------------------------------------

[[nodiscard]] error_object make_error(errc code, std::string message, boost::json::value data = nullptr);

/// -32601. `data.method` names the method; `reason` says why (unknown, removed in this era, not advertised).
[[nodiscard]] error_object method_not_found(std::string_view method, std::string_view reason);

/// -32602 with a message saying what is wrong.
[[nodiscard]] error_object invalid_params(std::string message, boost::json::value data = nullptr);

/// -32602 for a request that carries no protocol version at all and has no session to fall back on
/// (ERA-POLICY step 9): names the `_meta` key and every version the server speaks, modern through `_meta`
/// and legacy through `initialize`.
[[nodiscard]] error_object missing_protocol_version(bool modern_enabled, bool legacy_enabled);

/// -32022: `data = {supported: <modern list>, requested: <the value as sent>}`.
[[nodiscard]] error_object unsupported_protocol_version(std::string_view requested);

/// -32020: `detail` names the header and what did not match.
[[nodiscard]] error_object header_mismatch(std::string detail);

/// -32021: `data.requiredCapabilities` is a ClientCapabilities object, e.g. {"elicitation":{}}.
[[nodiscard]] error_object missing_required_client_capability(boost::json::object required);

/// Resource not found, per era: legacy -32002, modern -32602; both with `data.uri`.
[[nodiscard]] error_object resource_not_found(era e, std::string_view uri);

/// -32603 with the fixed message "Internal error": whatever went wrong inside stays inside.
[[nodiscard]] error_object internal_error();

/// -32600 with a message saying what is wrong.
[[nodiscard]] error_object invalid_request(std::string message);
/// -32600 for a batch outside a session whose version allows batches (batches_allowed() in version.hpp),
/// on every transport.
[[nodiscard]] error_object batch_not_allowed();

} // namespace duet::protocol

/// @cond
template<>
struct boost::system::is_error_code_enum<duet::protocol::errc> : std::true_type {};
/// @endcond
