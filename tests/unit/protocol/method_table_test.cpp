// Tests for duet/protocol/method_table.hpp: the one constexpr table every other layer reads.
//
// Requirements: DIGEST §1 (which methods exist in which era and direction; capability gates), §3 and §5
// (cacheable results: discover, the four lists, resources/read), §4 (InputRequiredResult only from call, get
// and read), §9 (`Mcp-Name` mirrors params.name or params.uri); STYLE §6 rule 4 (one table drives
// everything).
#include <duet/protocol/method_table.hpp>

#include <gtest/gtest.h>

#include <ostream>
#include <set>
#include <string>
#include <string_view>

namespace {

using namespace duet::protocol;

// Availability per version, oldest first: 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28.
using availability = std::string_view;

struct method_row {
    std::string_view name; // test name
    std::string_view method;
    method_id id;
    message_kind kind;
    direction dir;
    availability in; // "1" where the version has the method
    capability gate;
    bool cacheable;
    bool may_require_input;
    name_source mcp_name;
};

void PrintTo(method_row const& row, std::ostream* os) {
    *os << row.method;
}

constexpr auto req = message_kind::request;
constexpr auto note = message_kind::notification;
constexpr auto c2s = direction::client_to_server;
constexpr auto s2c = direction::server_to_client;
constexpr auto both = direction::both;
constexpr auto no_gate = capability::none;
constexpr auto no_name = name_source::none;

// DIGEST §1 restated, one row per method, in method_id order.
constexpr method_row method_rows[] = {
    {"Initialize", "initialize", method_id::initialize, req, c2s, "11110", no_gate, false, false, no_name},
    {"Ping", "ping", method_id::ping, req, both, "11110", no_gate, false, false, no_name},
    {"LoggingSetLevel", "logging/setLevel", method_id::logging_set_level, req, c2s, "11110",
     capability::logging, false, false, no_name},
    {"ResourcesSubscribe", "resources/subscribe", method_id::resources_subscribe, req, c2s, "11110",
     capability::resources_subscribe, false, false, no_name},
    {"ResourcesUnsubscribe", "resources/unsubscribe", method_id::resources_unsubscribe, req, c2s, "11110",
     capability::resources_subscribe, false, false, no_name},
    {"ServerDiscover", "server/discover", method_id::server_discover, req, c2s, "00001", no_gate, true, false,
     no_name},
    {"SubscriptionsListen", "subscriptions/listen", method_id::subscriptions_listen, req, c2s, "00001",
     no_gate, false, false, no_name},
    {"ToolsList", "tools/list", method_id::tools_list, req, c2s, "11111", capability::tools, true, false,
     no_name},
    {"ToolsCall", "tools/call", method_id::tools_call, req, c2s, "11111", capability::tools, false, true,
     name_source::name},
    {"PromptsList", "prompts/list", method_id::prompts_list, req, c2s, "11111", capability::prompts, true,
     false, no_name},
    {"PromptsGet", "prompts/get", method_id::prompts_get, req, c2s, "11111", capability::prompts, false, true,
     name_source::name},
    {"ResourcesList", "resources/list", method_id::resources_list, req, c2s, "11111", capability::resources,
     true, false, no_name},
    {"ResourcesTemplatesList", "resources/templates/list", method_id::resources_templates_list, req, c2s,
     "11111", capability::resources, true, false, no_name},
    {"ResourcesRead", "resources/read", method_id::resources_read, req, c2s, "11111", capability::resources,
     true, true, name_source::uri},
    {"CompletionComplete", "completion/complete", method_id::completion_complete, req, c2s, "11111",
     capability::completions, false, false, no_name},
    // Tasks: 2025-11-25's experimental core methods and the modern extension's (SEP-2663, spec/ext-tasks).
    {"TasksGet", "tasks/get", method_id::tasks_get, req, c2s, "00011", capability::tasks, false, false,
     name_source::task_id},
    {"TasksUpdate", "tasks/update", method_id::tasks_update, req, c2s, "00001", capability::tasks, false,
     false, name_source::task_id},
    {"TasksCancel", "tasks/cancel", method_id::tasks_cancel, req, c2s, "00011", capability::tasks, false,
     false, name_source::task_id},
    {"TasksResult", "tasks/result", method_id::tasks_result, req, c2s, "00010", capability::tasks, false,
     false, no_name},
    {"TasksList", "tasks/list", method_id::tasks_list, req, c2s, "00010", capability::tasks, false, false,
     no_name},
    {"SamplingCreateMessage", "sampling/createMessage", method_id::sampling_create_message, req, s2c, "11111",
     no_gate, false, false, no_name},
    {"ElicitationCreate", "elicitation/create", method_id::elicitation_create, req, s2c, "00111", no_gate,
     false, false, no_name},
    {"RootsList", "roots/list", method_id::roots_list, req, s2c, "11111", no_gate, false, false, no_name},
    {"NotificationInitialized", "notifications/initialized", method_id::notification_initialized, note, c2s,
     "11110", no_gate, false, false, no_name},
    {"NotificationCancelled", "notifications/cancelled", method_id::notification_cancelled, note, both,
     "11111", no_gate, false, false, no_name},
    {"NotificationProgress", "notifications/progress", method_id::notification_progress, note, both, "11111",
     no_gate, false, false, no_name},
    {"NotificationMessage", "notifications/message", method_id::notification_message, note, s2c, "11111",
     no_gate, false, false, no_name},
    {"NotificationRootsListChanged", "notifications/roots/list_changed",
     method_id::notification_roots_list_changed, note, c2s, "11110", no_gate, false, false, no_name},
    {"NotificationToolsListChanged", "notifications/tools/list_changed",
     method_id::notification_tools_list_changed, note, s2c, "11111", no_gate, false, false, no_name},
    {"NotificationPromptsListChanged", "notifications/prompts/list_changed",
     method_id::notification_prompts_list_changed, note, s2c, "11111", no_gate, false, false, no_name},
    {"NotificationResourcesListChanged", "notifications/resources/list_changed",
     method_id::notification_resources_list_changed, note, s2c, "11111", no_gate, false, false, no_name},
    {"NotificationResourcesUpdated", "notifications/resources/updated",
     method_id::notification_resources_updated, note, s2c, "11111", no_gate, false, false, no_name},
    {"NotificationSubscriptionsAcknowledged", "notifications/subscriptions/acknowledged",
     method_id::notification_subscriptions_acknowledged, note, s2c, "00001", no_gate, false, false, no_name},
    {"NotificationElicitationComplete", "notifications/elicitation/complete",
     method_id::notification_elicitation_complete, note, s2c, "00010", no_gate, false, false, no_name},
    {"NotificationTasksStatus", "notifications/tasks/status", method_id::notification_tasks_status, note, s2c,
     "00010", no_gate, false, false, no_name},
    {"NotificationTasks", "notifications/tasks", method_id::notification_tasks, note, s2c, "00001", no_gate,
     false, false, no_name},
};

class MethodRow : public ::testing::TestWithParam<method_row> {};

// DIGEST §1: each method exists in exactly the versions the schemas define, flows in its direction, is gated
// by its capability, and carries its cache / input-required / Mcp-Name facts.
TEST_P(MethodRow, MatchesTheSpec) {
    auto const& want = GetParam();
    auto const* row = find_method(want.method);
    ASSERT_NE(row, nullptr) << want.method;
    EXPECT_EQ(row->name, want.method);
    EXPECT_EQ(row->id, want.id);
    EXPECT_EQ(row->kind, want.kind);
    EXPECT_EQ(row->direction, want.dir);
    EXPECT_EQ(row->client_sends(), want.dir != direction::server_to_client);
    EXPECT_EQ(row->gate, want.gate);
    EXPECT_EQ(row->cacheable, want.cacheable);
    EXPECT_EQ(row->may_require_input, want.may_require_input);
    EXPECT_EQ(row->mcp_name, want.mcp_name);
    ASSERT_EQ(want.in.size(), version_registry.size());
    for (std::size_t i = 0; i < version_registry.size(); ++i)
        EXPECT_EQ(row->available_in(version_registry[i].id), want.in[i] == '1') << version_registry[i].name;
    EXPECT_EQ(row->modern, want.in.back() == '1');
}

INSTANTIATE_TEST_SUITE_P(MethodTable, MethodRow, ::testing::ValuesIn(method_rows),
                         [](auto const& p) { return std::string(p.param.name); });

// The restatement above covers the whole table, and the table is in method_id order (info(id) finds its row).
TEST(MethodTable, RowsFollowMethodIdOrderAndTheSpecCoversEveryRow) {
    auto const table = method_table();
    ASSERT_EQ(table.size(), std::size(method_rows));
    for (std::size_t i = 0; i < table.size(); ++i) {
        EXPECT_EQ(static_cast<std::size_t>(table[i].id), i) << table[i].name;
        EXPECT_EQ(table[i].name, method_rows[i].method);
        EXPECT_EQ(&info(table[i].id), &table[i]) << table[i].name;
    }
}

TEST(MethodTable, EveryNameRoundTripsThroughFindMethod) {
    std::set<std::string_view> names;
    for (auto const& row : method_table()) {
        EXPECT_TRUE(names.insert(row.name).second) << "duplicate " << row.name;
        EXPECT_EQ(find_method(row.name), &row) << row.name;
    }
}

// DIGEST §1: names are exact.
TEST(MethodTable, UnknownOrMisspelledNamesAreNotFound) {
    for (std::string_view const name :
         {"", "tools/List", "tools/list ", " tools/list", "tasks/Get", "tasks/delete", "server/Discover",
          "foo/bar", "notifications/tasks/Status", "initialize/", "rpc.discover"})
        EXPECT_EQ(find_method(name), nullptr) << '"' << name << '"';
}

// DIGEST §3, §5 (and §15.4): server/discover, the four lists and resources/read carry cache hints.
TEST(MethodTable, CacheableSetIsDiscoverTheFourListsAndRead) {
    std::set<std::string_view> cacheable;
    for (auto const& row : method_table())
        if (row.cacheable)
            cacheable.insert(row.name);
    EXPECT_EQ(cacheable,
              (std::set<std::string_view>{"server/discover", "tools/list", "prompts/list", "resources/list",
                                          "resources/templates/list", "resources/read"}));
}

// DIGEST §4, §15.5: core MRTR covers tools/call, prompts/get and resources/read only.
TEST(MethodTable, MayRequireInputOnlyCallGetAndRead) {
    std::set<std::string_view> mrtr;
    for (auto const& row : method_table())
        if (row.may_require_input)
            mrtr.insert(row.name);
    EXPECT_EQ(mrtr, (std::set<std::string_view>{"tools/call", "prompts/get", "resources/read"}));
}

// DIGEST §1: methods the modern protocol removed, and methods it added.
TEST(MethodTable, ModernRemovesTheLifecycleAndAddsDiscoverAndListen) {
    for (std::string_view const name :
         {"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe",
          "notifications/initialized", "notifications/roots/list_changed",
          "notifications/elicitation/complete"}) {
        auto const* row = find_method(name);
        ASSERT_NE(row, nullptr) << name;
        EXPECT_FALSE(row->available_in(version::v2026_07_28)) << name;
        EXPECT_TRUE(row->available_in(version::v2025_11_25)) << name;
    }
    for (std::string_view const name :
         {"server/discover", "subscriptions/listen", "notifications/subscriptions/acknowledged"}) {
        auto const* row = find_method(name);
        ASSERT_NE(row, nullptr) << name;
        EXPECT_TRUE(row->available_in(version::v2026_07_28)) << name;
        for (auto v : handshake_versions)
            EXPECT_FALSE(row->available_in(v)) << name << " in " << to_string(v);
    }
}

// DIGEST §11: form elicitation arrived in 2025-06-18.
TEST(MethodTable, ElicitationCreateExistsSince20250618) {
    auto const& row = info(method_id::elicitation_create);
    EXPECT_FALSE(row.available_in(version::v2024_11_05));
    EXPECT_FALSE(row.available_in(version::v2025_03_26));
    EXPECT_TRUE(row.available_in(version::v2025_06_18));
    EXPECT_TRUE(row.available_in(version::v2025_11_25));
    EXPECT_TRUE(row.available_in(version::v2026_07_28));
    EXPECT_FALSE(row.client_sends());
}

// DIGEST §1: every method whose name starts with "notifications/" is a notification, and no other is.
TEST(MethodTable, NotificationsAreExactlyTheNotificationsPrefix) {
    for (auto const& row : method_table())
        EXPECT_EQ(row.kind == message_kind::notification, row.name.starts_with("notifications/")) << row.name;
}

} // namespace

namespace method_table_lists {

TEST(MethodTable, EachListNamesTheResultMemberHoldingItsItems) {
    using duet::protocol::list_items_key;
    using duet::protocol::method_id;
    EXPECT_EQ(list_items_key(method_id::tools_list), "tools");
    EXPECT_EQ(list_items_key(method_id::prompts_list), "prompts");
    EXPECT_EQ(list_items_key(method_id::resources_list), "resources");
    EXPECT_EQ(list_items_key(method_id::resources_templates_list), "resourceTemplates");
    EXPECT_EQ(list_items_key(method_id::tools_call), "") << "not a list";
}

} // namespace method_table_lists
