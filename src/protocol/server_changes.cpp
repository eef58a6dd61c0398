#include <duet/protocol/server_changes.hpp>

#include <array>

namespace duet::protocol {

namespace {

using enum method_id;

constexpr std::array<method_id, 1> tools_lists{tools_list};
constexpr std::array<method_id, 1> prompts_lists{prompts_list};
// Templates are announced with the resources (the spec has no list_changed of their own).
constexpr std::array<method_id, 2> resources_lists{resources_list, resources_templates_list};
constexpr std::array<method_id, 1> resource_reads{resources_read};

// what, notification, stale, listen flag, advertised, and where it sits in ServerCapabilities
constexpr std::array<change_info, 4> table{{
    {server_change::tools_changed, notification_tools_list_changed, tools_lists, "toolsListChanged",
     &server_capabilities::tools_list_changed, "tools", "listChanged", &server_capabilities::tools},
    {server_change::prompts_changed, notification_prompts_list_changed, prompts_lists, "promptsListChanged",
     &server_capabilities::prompts_list_changed, "prompts", "listChanged", &server_capabilities::prompts},
    {server_change::resources_changed, notification_resources_list_changed, resources_lists,
     "resourcesListChanged", &server_capabilities::resources_list_changed, "resources", "listChanged",
     &server_capabilities::resources},
    {server_change::resource_updated,
     notification_resources_updated,
     resource_reads,
     {},
     &server_capabilities::resources_subscribe,
     "resources",
     "subscribe",
     &server_capabilities::resources},
}};

constexpr bool table_in_change_order() {
    for (std::size_t i = 0; i < table.size(); ++i)
        if (static_cast<std::size_t>(table[i].what) != i)
            return false;
    return true;
}
static_assert(table_in_change_order(), "change table rows must follow server_change order");

} // namespace

std::span<change_info const> change_table() noexcept {
    return table;
}

change_info const& info(server_change what) noexcept {
    return table[static_cast<std::size_t>(what)];
}

change_info const* change_of(method_id notification) noexcept {
    for (auto const& row : table)
        if (row.notification == notification)
            return &row;
    return nullptr;
}

change_info const* change_of(std::string_view notification) noexcept {
    auto const* m = find_method(notification);
    return m ? change_of(m->id) : nullptr;
}

} // namespace duet::protocol
