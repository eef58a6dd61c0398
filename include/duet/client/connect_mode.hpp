/// @file duet/client/connect_mode.hpp
///
/// How a client reaches a server's era (ERA-POLICY "Client side"), and the per-server memory of what `auto`
/// found out.
///
///  - legacy: `initialize` offering 2025-11-25 (or a pinned handshake version); a counter-offer is adopted.
///  - modern: the per-request `_meta` envelope with 2026-07-28; -32022 is retried once with a version from
///    `data.supported` that this client speaks.
///  - auto:   probe `server/discover`; a DiscoverResult or a recognised modern error means modern, anything
///    else (another error, a timeout, a stdio server that exits) means legacy.
#pragma once

#include <duet/protocol/version.hpp>

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace duet::client {

enum class connect_mode : std::uint8_t { legacy, modern, auto_detect };

[[nodiscard]] std::string_view to_string(connect_mode m) noexcept;
/// "legacy", "modern" or "auto"; nothing for anything else.
[[nodiscard]] std::optional<connect_mode> parse_connect_mode(std::string_view s) noexcept;

/// What `auto` learnt about one server.
struct era_verdict {
    protocol::era era = protocol::era::legacy;
    protocol::version version = protocol::latest_handshake_version;
};

/// Remembered verdicts by server (describe(target)). Thread-safe.
class verdict_cache {
public:
    [[nodiscard]] std::optional<era_verdict> find(std::string const& server) const;
    void remember(std::string const& server, era_verdict v);
    void forget(std::string const& server);

private:
    mutable std::mutex mutex_;
    std::map<std::string, era_verdict> verdicts_;
};

/// The process-wide cache `client_options` uses unless told otherwise.
[[nodiscard]] verdict_cache& default_verdict_cache();

} // namespace duet::client
