/// @file duet/jsonrpc/error.hpp
///
/// Two kinds of error live here, kept apart on purpose:
///
///  - `error_object`: the `error` member of a JSON-RPC response, as it goes on the wire (code, message,
///    data).
///  - `parse_errc`: why a frame could not be turned into a message. A local condition with its own
///    boost::system category; `to_error_object()` says which wire error the peer gets for it (-32700 or
///    -32600).
///
/// No MCP codes here: those belong to duet/protocol/errors.hpp.
#pragma once

#include <boost/json/value.hpp>
#include <boost/system/error_code.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

namespace duet::jsonrpc {

/// The JSON-RPC 2.0 codes this layer knows (the spec's own; MCP adds more in duet::protocol).
namespace code {
inline constexpr std::int32_t parse_error = -32700;
inline constexpr std::int32_t invalid_request = -32600;
inline constexpr std::int32_t method_not_found = -32601;
inline constexpr std::int32_t invalid_params = -32602;
inline constexpr std::int32_t internal_error = -32603;
} // namespace code

/// The `error` member of a JSON-RPC error response. `data` is null when the error carries none.
struct error_object {
    std::int32_t code = code::internal_error;
    std::string message;
    boost::json::value data; // null = absent

    friend bool operator==(error_object const&, error_object const&) = default;
};

/// Lets boost::system::result<T, error_object>::value() throw (edges only; the core reads results with `*r`).
[[noreturn]] void throw_exception_from_error(error_object const& e, boost::source_location const& loc);

/// Why a frame is not a valid JSON-RPC 2.0 message.
enum class parse_errc {
    bad_json = 1,        ///< not JSON at all, or trailing garbage (-32700)
    too_large,           ///< the frame exceeds parse_limits::max_bytes (-32600)
    too_deep,            ///< nesting exceeds parse_limits::max_depth (-32600)
    not_an_object,       ///< valid JSON that is neither an object nor an array (-32600)
    empty_batch,         ///< `[]` (-32600)
    bad_jsonrpc_version, ///< `jsonrpc` missing or not exactly "2.0" (-32600)
    bad_method,          ///< `method` not a string (-32600)
    bad_id,              ///< `id` null, boolean, fractional, out of range, array or object (-32600)
    bad_params,          ///< `params` present but neither object nor array (-32600)
    bad_response,        ///< a response without exactly one of `result` / `error`, or a malformed error
    unknown_shape,       ///< an object that is no request, notification or response (-32600)
};

[[nodiscard]] boost::system::error_category const& parse_category() noexcept;
[[nodiscard]] boost::system::error_code make_error_code(parse_errc e) noexcept;

/// The wire error a peer gets for this parse failure: -32700 for bad JSON, -32600 for everything else.
[[nodiscard]] error_object to_error_object(parse_errc e);

} // namespace duet::jsonrpc

/// @cond
template<>
struct boost::system::is_error_code_enum<duet::jsonrpc::parse_errc> : std::true_type {};
/// @endcond
