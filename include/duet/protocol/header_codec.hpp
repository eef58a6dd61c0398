/// @file duet/protocol/header_codec.hpp
///
/// The HTTP header value encoding of MCP 2026-07-28 (DIGEST §9): a value that is unsafe as plain ASCII
/// (non-ASCII, control characters, leading or trailing spaces, or text that looks like the sentinel itself)
/// is sent as `=?base64?<base64 of the UTF-8 bytes>?=`. Receivers decode before comparing with the body.
///
///     encode_header_value("héllo")             == "=?base64?aMOpbGxv?="
///     decode_header_value("=?base64?aMOpbGxv?=") == "héllo"
///     decode_header_value("plain")              == "plain"
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace duet::protocol {

/// Whether a value must travel base64-encoded.
[[nodiscard]] bool needs_header_encoding(std::string_view value) noexcept;

/// The header form of a value: itself when safe, else the base64 sentinel form.
[[nodiscard]] std::string encode_header_value(std::string_view value);

/// The value a header carries: the decoded sentinel form, or the value itself. Empty when the sentinel's
/// base64 is malformed or the header holds characters no header may hold (control characters, non-ASCII).
[[nodiscard]] std::optional<std::string> decode_header_value(std::string_view header);

/// Case-insensitive ASCII comparison, for header names.
[[nodiscard]] bool iequals(std::string_view a, std::string_view b) noexcept;

} // namespace duet::protocol
