/// @file duet/protocol/server_changes.hpp
///
/// What a server announces as changed, one row per kind of change: the notification that announces it, the
/// methods whose results it outdates (a client's cache drops them), the member of subscriptions/listen's
/// `notifications` that asks for it, and the capability flag a server advertises it with. The server's own
/// events (server_event::kind), the client's cache and listens and the gateway's relay all read this table.
///
///     auto const* c = change_of("notifications/tools/list_changed");
///     c->what == server_change::tools_changed;
///     info(server_change::resources_changed).stale;   // resources/list, resources/templates/list
#pragma once

#include <duet/protocol/capabilities.hpp>
#include <duet/protocol/method_table.hpp>

#include <cstdint>
#include <span>
#include <string_view>

namespace duet::protocol {

/// One of a server's lists changed, or one resource's content did.
enum class server_change : std::uint8_t {
    tools_changed,
    prompts_changed,
    resources_changed,
    resource_updated
};

struct change_info {
    server_change what;
    method_id notification; ///< what announces it
    /// The methods whose results it outdates; for resource_updated only the reads of its URI (and under it).
    std::span<method_id const> stale;
    /// Its flag in subscriptions/listen's `notifications`; empty for resource_updated, which a listen asks
    /// for by URI (`resourceSubscriptions`).
    std::string_view listen_flag;
    /// The capability flag a server offers it with (listChanged, or subscribe for resource_updated).
    bool server_capabilities::*advertised;
    /// Where that flag sits in ServerCapabilities: the capability's member ("tools") and the flag's name in
    /// it ("listChanged"), and the capability itself (offered is true wherever advertised is).
    std::string_view capability_key;
    std::string_view capability_flag;
    bool server_capabilities::*offered;

    [[nodiscard]] constexpr bool is_list_change() const noexcept { return !listen_flag.empty(); }
};

/// The whole table, in server_change order.
[[nodiscard]] std::span<change_info const> change_table() noexcept;

[[nodiscard]] change_info const& info(server_change what) noexcept;

/// The row a notification announces, or null for a notification that announces no change.
[[nodiscard]] change_info const* change_of(method_id notification) noexcept;
[[nodiscard]] change_info const* change_of(std::string_view notification) noexcept;

} // namespace duet::protocol
