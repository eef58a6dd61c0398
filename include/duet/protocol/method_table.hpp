/// @file duet/protocol/method_table.hpp
///
/// One constexpr table of every MCP method Duet knows, and the facts dispatch, admission and shaping read
/// from it: which eras (and since which legacy version) have it, which direction it flows, which server
/// capability gates it, whether its modern result carries cache hints, whether it may end in
/// `input_required`, and which param an HTTP `Mcp-Name` header mirrors.
///
///     auto const* m = find_method("tools/list");
///     m->available_in(version::v2026_07_28);    // true
///     m->gate == capability::tools;
#pragma once

#include <duet/protocol/capabilities.hpp>
#include <duet/protocol/version.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace duet::protocol {

enum class method_id : std::uint8_t {
    // client -> server requests
    initialize,
    ping,
    logging_set_level,
    resources_subscribe,
    resources_unsubscribe,
    server_discover,
    subscriptions_listen,
    tools_list,
    tools_call,
    prompts_list,
    prompts_get,
    resources_list,
    resources_templates_list,
    resources_read,
    completion_complete,
    tasks_get,    ///< 2025-11-25 experimental tasks, and the modern tasks extension
    tasks_update, ///< the modern tasks extension only
    tasks_cancel, ///< both
    tasks_result, ///< 2025-11-25 only
    tasks_list,   ///< 2025-11-25 only
    // server -> client requests (legacy), or embedded input requests (modern)
    sampling_create_message,
    elicitation_create,
    roots_list,
    // notifications
    notification_initialized,
    notification_cancelled,
    notification_progress,
    notification_message,
    notification_roots_list_changed,
    notification_tools_list_changed,
    notification_prompts_list_changed,
    notification_resources_list_changed,
    notification_resources_updated,
    notification_subscriptions_acknowledged,
    notification_elicitation_complete,
    notification_tasks_status, ///< 2025-11-25
    notification_tasks,        ///< the modern tasks extension
};

/// How many methods the table has (method_id's values are 0 to method_count - 1).
inline constexpr std::size_t method_count = static_cast<std::size_t>(method_id::notification_tasks) + 1;

enum class message_kind : std::uint8_t { request, notification };

/// Who sends it. `both` is legacy `ping`, progress and cancellation.
enum class direction : std::uint8_t { client_to_server, server_to_client, both };

/// Which param an HTTP `Mcp-Name` header mirrors (DIGEST §9).
enum class name_source : std::uint8_t { none, name, uri, task_id };

/// The param an `Mcp-Name` header mirrors: "name", "uri" or "taskId" (empty for none).
[[nodiscard]] constexpr std::string_view name_param(name_source s) noexcept {
    switch (s) {
    case name_source::name:
        return "name";
    case name_source::uri:
        return "uri";
    case name_source::task_id:
        return "taskId";
    case name_source::none:
        break;
    }
    return {};
}

struct method_info {
    std::string_view name;
    method_id id;
    message_kind kind;
    protocol::direction direction;
    /// Oldest legacy version that has it; empty when no legacy version has it.
    std::optional<version> legacy_since;
    bool modern;            ///< exists in 2026-07-28
    capability gate;        ///< server capability that must be advertised, or none
    bool cacheable;         ///< modern complete results carry ttlMs / cacheScope
    bool may_require_input; ///< may return InputRequiredResult (tools/call, prompts/get, resources/read)
    name_source mcp_name;

    /// Whether version `v` has this method (in any direction).
    [[nodiscard]] constexpr bool available_in(version v) const noexcept {
        if (is_modern_version(v))
            return modern;
        return legacy_since && v >= *legacy_since;
    }
    [[nodiscard]] constexpr bool client_sends() const noexcept {
        return direction != protocol::direction::server_to_client;
    }
};

/// The whole table, in method_id order.
[[nodiscard]] std::span<method_info const> method_table() noexcept;

/// The row of a method name, or null for a method MCP does not define.
[[nodiscard]] method_info const* find_method(std::string_view name) noexcept;

[[nodiscard]] method_info const& info(method_id id) noexcept;

/// The member of a list method's result that holds its items ("tools", "prompts", "resources",
/// "resourceTemplates"); empty for a method that is not a list.
[[nodiscard]] std::string_view list_items_key(method_id list) noexcept;

} // namespace duet::protocol
