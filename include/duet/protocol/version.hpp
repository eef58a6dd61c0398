/// @file duet/protocol/version.hpp
///
/// The registry of MCP protocol versions and the era each belongs to. Versions are an enum ordered by
/// release; every list (handshake versions, modern versions, what `server/discover` and -32022 advertise) is
/// derived from the one registry below, so the lists cannot drift apart. Version strings are never compared
/// as strings: an unknown string parses to nothing.
///
///     parse_version("2025-06-18") == version::v2025_06_18
///     parse_version("2026-08")    == std::nullopt      // not "newer", just unknown
///     era_of(version::v2026_07_28) == era::modern
#pragma once

#include <boost/json/array.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace duet::protocol {

/// legacy: a session opened by `initialize` (2025-11-25 and older). modern: stateless, the version travels in
/// every request's `_meta` (2026-07-28).
enum class era : std::uint8_t { legacy, modern };

[[nodiscard]] constexpr std::string_view to_string(era e) noexcept {
    return e == era::legacy ? "legacy" : "modern";
}

/// Every protocol version Duet speaks, oldest first. The enumerator order is the release order.
enum class version : std::uint8_t { v2024_11_05, v2025_03_26, v2025_06_18, v2025_11_25, v2026_07_28 };

struct version_info {
    version id;
    std::string_view name;
    protocol::era era;
};

/// The registry: one row per version, oldest first.
inline constexpr std::array<version_info, 5> version_registry{{
    {version::v2024_11_05, "2024-11-05", era::legacy},
    {version::v2025_03_26, "2025-03-26", era::legacy},
    {version::v2025_06_18, "2025-06-18", era::legacy},
    {version::v2025_11_25, "2025-11-25", era::legacy},
    {version::v2026_07_28, "2026-07-28", era::modern},
}};

[[nodiscard]] constexpr version_info const& info(version v) noexcept {
    return version_registry[static_cast<std::size_t>(v)];
}
[[nodiscard]] constexpr std::string_view to_string(version v) noexcept {
    return info(v).name;
}
[[nodiscard]] constexpr era era_of(version v) noexcept {
    return info(v).era;
}

/// The version a string names, or nothing for any string not in the registry.
[[nodiscard]] constexpr std::optional<version> parse_version(std::string_view s) noexcept {
    for (auto const& row : version_registry)
        if (row.name == s)
            return row.id;
    return std::nullopt;
}

namespace detail {
template<era E>
consteval std::size_t count_era() {
    std::size_t n = 0;
    for (auto const& row : version_registry)
        n += row.era == E ? 1 : 0;
    return n;
}
// Versions of one era, newest first.
template<era E>
consteval std::array<version, count_era<E>()> versions_of_era() {
    std::array<version, count_era<E>()> out{};
    std::size_t i = 0;
    for (auto it = version_registry.rbegin(); it != version_registry.rend(); ++it)
        if (it->era == E)
            out[i++] = it->id;
    return out;
}
} // namespace detail

/// Versions a client reaches through `initialize`, newest first.
inline constexpr auto handshake_versions = detail::versions_of_era<era::legacy>();
/// Versions a client reaches through the per-request `_meta` envelope, newest first.
inline constexpr auto modern_versions = detail::versions_of_era<era::modern>();
/// What `initialize` counter-offers when the client asks for a version it cannot have.
inline constexpr version latest_handshake_version = handshake_versions.front();
inline constexpr version latest_modern_version = modern_versions.front();

[[nodiscard]] constexpr bool is_handshake_version(version v) noexcept {
    return era_of(v) == era::legacy;
}
[[nodiscard]] constexpr bool is_modern_version(version v) noexcept {
    return era_of(v) == era::modern;
}

/// Whether a session of version `v` may send JSON-RPC batches: 2025-03-26 added them and 2025-06-18 removed
/// them again.
[[nodiscard]] constexpr bool batches_allowed(version v) noexcept {
    return v == version::v2025_03_26;
}

/// Whether a session of version `v` polls its SSE streams (SEP-1699, 2025-11-25): each stream opens with a
/// priming event (an id, empty data) and the server may end a POST's stream early for the client to resume.
/// Older clients choke on the empty data.
[[nodiscard]] constexpr bool sse_polling(version v) noexcept {
    return v >= version::v2025_11_25;
}

/// The versions as JSON strings, newest first.
[[nodiscard]] boost::json::array to_json(std::span<version const> versions);

/// What `server/discover` lists as `supportedVersions` and -32022 lists as `data.supported`: the modern list
/// (ERA-POLICY "Consequences": the two are the same list).
[[nodiscard]] boost::json::array advertised_modern_versions();

} // namespace duet::protocol
