#include <duet/protocol/method_table.hpp>

#include <array>

namespace duet::protocol {

namespace {

using enum method_id;
using enum message_kind;
constexpr auto none = capability::none;
constexpr auto logging = capability::logging;
constexpr auto tools = capability::tools;
constexpr auto prompts = capability::prompts;
constexpr auto resources = capability::resources;
constexpr auto completions = capability::completions;
constexpr auto c2s = direction::client_to_server;
constexpr auto s2c = direction::server_to_client;
constexpr auto both = direction::both;
constexpr std::optional<version> since_first = version::v2024_11_05;
constexpr std::optional<version> nowhere = std::nullopt;

// name, id, kind, direction, legacy since, modern, gate, cacheable, may require input, Mcp-Name
constexpr std::array<method_info, method_count> table{{
    {"initialize", initialize, request, c2s, since_first, false, none, false, false, name_source::none},
    {"ping", ping, request, both, since_first, false, none, false, false, name_source::none},
    {"logging/setLevel", logging_set_level, request, c2s, since_first, false, logging, false, false,
     name_source::none},
    {"resources/subscribe", resources_subscribe, request, c2s, since_first, false,
     capability::resources_subscribe, false, false, name_source::none},
    {"resources/unsubscribe", resources_unsubscribe, request, c2s, since_first, false,
     capability::resources_subscribe, false, false, name_source::none},
    {"server/discover", server_discover, request, c2s, nowhere, true, none, true, false, name_source::none},
    {"subscriptions/listen", subscriptions_listen, request, c2s, nowhere, true, none, false, false,
     name_source::none},
    {"tools/list", tools_list, request, c2s, since_first, true, tools, true, false, name_source::none},
    {"tools/call", tools_call, request, c2s, since_first, true, tools, false, true, name_source::name},
    {"prompts/list", prompts_list, request, c2s, since_first, true, prompts, true, false, name_source::none},
    {"prompts/get", prompts_get, request, c2s, since_first, true, prompts, false, true, name_source::name},
    {"resources/list", resources_list, request, c2s, since_first, true, resources, true, false,
     name_source::none},
    {"resources/templates/list", resources_templates_list, request, c2s, since_first, true, resources, true,
     false, name_source::none},
    {"resources/read", resources_read, request, c2s, since_first, true, resources, true, true,
     name_source::uri},
    {"completion/complete", completion_complete, request, c2s, since_first, true, completions, false, false,
     name_source::none},
    // The tasks methods: 2025-11-25's experimental ones, and the modern extension's (which the server offers
    // only where it advertises the extension, and serves only to requests that declare it).
    {"tasks/get", tasks_get, request, c2s, version::v2025_11_25, true, capability::tasks, false, false,
     name_source::task_id},
    {"tasks/update", tasks_update, request, c2s, nowhere, true, capability::tasks, false, false,
     name_source::task_id},
    {"tasks/cancel", tasks_cancel, request, c2s, version::v2025_11_25, true, capability::tasks, false, false,
     name_source::task_id},
    {"tasks/result", tasks_result, request, c2s, version::v2025_11_25, false, capability::tasks, false, false,
     name_source::none},
    {"tasks/list", tasks_list, request, c2s, version::v2025_11_25, false, capability::tasks, false, false,
     name_source::none},
    {"sampling/createMessage", sampling_create_message, request, s2c, since_first, true, none, false, false,
     name_source::none},
    {"elicitation/create", elicitation_create, request, s2c, version::v2025_06_18, true, none, false, false,
     name_source::none},
    {"roots/list", roots_list, request, s2c, since_first, true, none, false, false, name_source::none},
    {"notifications/initialized", notification_initialized, notification, c2s, since_first, false, none,
     false, false, name_source::none},
    {"notifications/cancelled", notification_cancelled, notification, both, since_first, true, none, false,
     false, name_source::none},
    {"notifications/progress", notification_progress, notification, both, since_first, true, none, false,
     false, name_source::none},
    {"notifications/message", notification_message, notification, s2c, since_first, true, none, false, false,
     name_source::none},
    {"notifications/roots/list_changed", notification_roots_list_changed, notification, c2s, since_first,
     false, none, false, false, name_source::none},
    {"notifications/tools/list_changed", notification_tools_list_changed, notification, s2c, since_first,
     true, none, false, false, name_source::none},
    {"notifications/prompts/list_changed", notification_prompts_list_changed, notification, s2c, since_first,
     true, none, false, false, name_source::none},
    {"notifications/resources/list_changed", notification_resources_list_changed, notification, s2c,
     since_first, true, none, false, false, name_source::none},
    {"notifications/resources/updated", notification_resources_updated, notification, s2c, since_first, true,
     none, false, false, name_source::none},
    {"notifications/subscriptions/acknowledged", notification_subscriptions_acknowledged, notification, s2c,
     nowhere, true, none, false, false, name_source::none},
    {"notifications/elicitation/complete", notification_elicitation_complete, notification, s2c,
     version::v2025_11_25, false, none, false, false, name_source::none},
    {"notifications/tasks/status", notification_tasks_status, notification, s2c, version::v2025_11_25, false,
     none, false, false, name_source::none},
    {"notifications/tasks", notification_tasks, notification, s2c, nowhere, true, none, false, false,
     name_source::none},
}};

constexpr bool table_in_id_order() {
    for (std::size_t i = 0; i < table.size(); ++i)
        if (static_cast<std::size_t>(table[i].id) != i)
            return false;
    return true;
}
static_assert(table_in_id_order(), "method_table rows must follow method_id order");

} // namespace

std::span<method_info const> method_table() noexcept {
    return table;
}

method_info const* find_method(std::string_view name) noexcept {
    for (auto const& row : table)
        if (row.name == name)
            return &row;
    return nullptr;
}

method_info const& info(method_id id) noexcept {
    return table[static_cast<std::size_t>(id)];
}

std::string_view list_items_key(method_id list) noexcept {
    switch (list) {
    case method_id::tools_list:
        return "tools";
    case method_id::prompts_list:
        return "prompts";
    case method_id::resources_list:
        return "resources";
    case method_id::resources_templates_list:
        return "resourceTemplates";
    default:
        return {};
    }
}

} // namespace duet::protocol
