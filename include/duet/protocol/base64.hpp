/// @file duet/protocol/base64.hpp
///
/// Standard base64 (RFC 4648 §4, padded), as MCP carries binary data: image and audio content, resource
/// blobs, and the `=?base64?…?=` header form.
///
///     base64_encode("hi")   == "aGk="
///     base64_decode("aGk=") == "hi"
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace duet::protocol {

[[nodiscard]] std::string base64_encode(std::string_view bytes);

/// The bytes, or empty when the text is not canonical padded base64 (wrong length, foreign characters, data
/// after padding).
[[nodiscard]] std::optional<std::string> base64_decode(std::string_view text);

} // namespace duet::protocol
