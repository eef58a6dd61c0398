/// @file duet/protocol/envelope.hpp
///
/// The per-request `_meta` envelope of a modern request (DIGEST §2), read and checked once. The envelope
/// lives in `params._meta`; a `_meta` that is present but not an object counts as absent (ERA-POLICY step 1).
///
///     auto claim = read_version_claim(params);   // what `_meta` says about the version, if anything
///     auto env = read_envelope(params, version::v2026_07_28);   // result<request_envelope, error_object>
///     write_envelope(params, env);                               // what a modern client sends
#pragma once

#include <duet/protocol/errors.hpp>
#include <duet/protocol/version.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/system/result.hpp>

#include <cstdint>
#include <optional>
#include <string_view>

namespace duet::protocol {

/// notifications/message severities, in increasing order (RFC 5424).
enum class log_level : std::uint8_t { debug, info, notice, warning, error, critical, alert, emergency };

[[nodiscard]] std::optional<log_level> parse_log_level(std::string_view s) noexcept;
[[nodiscard]] std::string_view to_string(log_level l) noexcept;

/// What `params._meta` says about the protocol version.
struct version_claim {
    enum class kind : std::uint8_t {
        absent,     ///< no `_meta` object, or no version key in it
        not_string, ///< the key is there with a non-string value
        text,       ///< the key holds a string (which may or may not name a version)
    };
    kind what = kind::absent;
    std::string_view text; ///< the string, when what == text (points into the params)
};

/// Reads the claim. Never fails: every outcome is one of the three kinds.
[[nodiscard]] version_claim read_version_claim(boost::json::value const& params) noexcept;

/// The checked envelope of a modern request.
struct request_envelope {
    protocol::version version = version::v2026_07_28;
    boost::json::object client_capabilities;
    std::optional<boost::json::object> client_info; ///< optional on the wire (SHOULD)
    std::optional<protocol::log_level> log_level;   ///< absent: no notifications/message for this request
    boost::json::value progress_token;              ///< null when the request asked for no progress
};

/// Checks the rest of a modern envelope whose version is known to be modern: clientCapabilities must be an
/// object, clientInfo (when present) an Implementation, logLevel (when present) a known level, progressToken
/// (when present) a string or integer. Each failure is -32602 naming the key.
[[nodiscard]] boost::system::result<request_envelope, error_object>
read_envelope(boost::json::value const& params, version v);

/// The client side: writes `env` into `params._meta` (created when absent, replaced when not an object),
/// keeping every other `_meta` key. read_envelope() reads back exactly what this wrote.
void write_envelope(boost::json::object& params, request_envelope const& env);

} // namespace duet::protocol
