// Lowercase hexadecimal text of bytes, and back: how Duet makes opaque tokens (pagination cursors, session
// ids) that are visible ASCII whatever bytes they carry. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace duet::support {

/// Two lowercase hex digits per byte.
[[nodiscard]] std::string to_hex(std::string_view bytes);

/// The bytes `hex` spells; nullopt for an odd length or anything but lowercase hex digits.
[[nodiscard]] std::optional<std::string> from_hex(std::string_view hex);

} // namespace duet::support
