// Tests for list_change_flag (duet/client/client.hpp): every list change of protocol/server_changes.hpp has
// its own member of listen_filter, and resource updates have none (a listen asks for them by URI).
#include <duet/client/client.hpp>

#include <gtest/gtest.h>

#include <set>
#include <tuple>

namespace {

using namespace duet;

TEST(ListenFilterFlag, EveryListChangeSetsItsOwnMember) {
    std::set<std::tuple<bool, bool, bool>> asked;
    for (auto const& change : protocol::change_table()) {
        if (!change.is_list_change())
            continue;
        auto const flag = client::list_change_flag(change.what);
        ASSERT_NE(flag, nullptr) << change.listen_flag;
        client::listen_filter f;
        f.*flag = true;
        EXPECT_EQ(int(f.tools_list_changed) + int(f.prompts_list_changed) + int(f.resources_list_changed), 1);
        EXPECT_TRUE(
            asked.emplace(f.tools_list_changed, f.prompts_list_changed, f.resources_list_changed).second)
            << change.listen_flag;
    }
    EXPECT_EQ(asked.size(), 3u);
}

TEST(ListenFilterFlag, NamesTheMemberOfItsListenFlag) {
    client::listen_filter f;
    f.*client::list_change_flag(protocol::server_change::prompts_changed) = true;
    EXPECT_TRUE(f.prompts_list_changed);
    EXPECT_FALSE(f.tools_list_changed);
    EXPECT_FALSE(f.resources_list_changed);
}

TEST(ListenFilterFlag, ResourceUpdatesHaveNoMember) {
    EXPECT_EQ(client::list_change_flag(protocol::server_change::resource_updated), nullptr);
}

} // namespace
