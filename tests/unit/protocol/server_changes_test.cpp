// Tests for duet/protocol/server_changes.hpp: the one table of what a server announces as changed.
//
// Requirements: DIGEST §1 (the list_changed and resources/updated notifications flow server to client), §5 (a
// matching list_changed or updated notification invalidates the cached results at once), §7
// (subscriptions/listen's filter fields toolsListChanged, promptsListChanged, resourcesListChanged and
// resourceSubscriptions, offered only when the server advertises them).
#include <duet/protocol/server_changes.hpp>

#include <gtest/gtest.h>

#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace duet::protocol;

struct change_row {
    std::string_view test_name;
    server_change what;
    std::string_view notification;
    std::vector<std::string_view> stale;
    std::string_view listen_flag;
    bool server_capabilities::*advertised;
};

void PrintTo(change_row const& row, std::ostream* os) {
    *os << row.notification;
}

// The spec restated, one row per change, in server_change order.
change_row const change_rows[] = {
    {"ToolsChanged",
     server_change::tools_changed,
     "notifications/tools/list_changed",
     {"tools/list"},
     "toolsListChanged",
     &server_capabilities::tools_list_changed},
    {"PromptsChanged",
     server_change::prompts_changed,
     "notifications/prompts/list_changed",
     {"prompts/list"},
     "promptsListChanged",
     &server_capabilities::prompts_list_changed},
    {"ResourcesChanged",
     server_change::resources_changed,
     "notifications/resources/list_changed",
     {"resources/list", "resources/templates/list"},
     "resourcesListChanged",
     &server_capabilities::resources_list_changed},
    {"ResourceUpdated",
     server_change::resource_updated,
     "notifications/resources/updated",
     {"resources/read"},
     "",
     &server_capabilities::resources_subscribe},
};

class ChangeRow : public ::testing::TestWithParam<change_row> {};

// Each change is announced by its notification, outdates exactly its methods' results, is asked for by its
// listen flag and offered with its capability flag; both lookups find the same row.
TEST_P(ChangeRow, MatchesTheSpec) {
    auto const& want = GetParam();
    auto const& row = info(want.what);
    EXPECT_EQ(row.what, want.what);
    EXPECT_EQ(info(row.notification).name, want.notification);
    std::vector<std::string_view> stale;
    for (auto const m : row.stale)
        stale.push_back(info(m).name);
    EXPECT_EQ(stale, want.stale);
    EXPECT_EQ(row.listen_flag, want.listen_flag);
    EXPECT_EQ(row.is_list_change(), !want.listen_flag.empty());
    EXPECT_EQ(row.advertised, want.advertised);
    EXPECT_EQ(change_of(want.notification), &row);
    EXPECT_EQ(change_of(row.notification), &row);
}

INSTANTIATE_TEST_SUITE_P(ServerChanges, ChangeRow, ::testing::ValuesIn(change_rows),
                         [](auto const& p) { return std::string(p.param.test_name); });

TEST(ServerChanges, RowsFollowTheEnumOrderAndTheSpecCoversEveryRow) {
    auto const table = change_table();
    ASSERT_EQ(table.size(), std::size(change_rows));
    for (std::size_t i = 0; i < table.size(); ++i) {
        EXPECT_EQ(static_cast<std::size_t>(table[i].what), i);
        EXPECT_EQ(&info(table[i].what), &table[i]);
    }
}

// Every notification a server sends about its lists or a resource has a row, and only those: the client's
// roots/list_changed, progress, log lines and listen acknowledgements change nothing on a server.
TEST(ServerChanges, EveryServerChangeNotificationHasARowAndNoOtherMethodDoes) {
    std::set<std::string_view> announced;
    for (auto const& row : change_table())
        announced.insert(info(row.notification).name);
    for (auto const& m : method_table()) {
        bool const is_change =
            m.kind == message_kind::notification && m.direction == direction::server_to_client &&
            (m.name.ends_with("/list_changed") || m.name == "notifications/resources/updated");
        EXPECT_EQ(announced.contains(m.name), is_change) << m.name;
        EXPECT_EQ(change_of(m.name) != nullptr, is_change) << m.name;
    }
    EXPECT_EQ(change_of("notifications/roots/list_changed"), nullptr);
    EXPECT_EQ(change_of("notifications/unknown/list_changed"), nullptr);
    EXPECT_EQ(change_of(""), nullptr);
}

// A change outdates only results a client may cache at all (DIGEST §5): nothing else is kept to drop.
TEST(ServerChanges, OutdatesOnlyCacheableResults) {
    for (auto const& row : change_table())
        for (auto const m : row.stale)
            EXPECT_TRUE(info(m).cacheable) << info(m).name;
}

// The listen flags are the filter's distinct field names; the capability flags differ per list.
TEST(ServerChanges, ListenFlagsAndCapabilitiesAreDistinct) {
    auto const table = change_table();
    std::set<std::string_view> flags;
    for (auto const& row : table) {
        if (row.is_list_change()) {
            EXPECT_TRUE(flags.insert(row.listen_flag).second) << row.listen_flag;
        }
    }
    EXPECT_EQ(flags.size(), 3u);
    for (std::size_t i = 0; i < table.size(); ++i)
        for (std::size_t j = i + 1; j < table.size(); ++j)
            EXPECT_NE(table[i].advertised, table[j].advertised) << i << " " << j;
}

} // namespace
