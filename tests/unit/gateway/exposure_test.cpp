// What of an upstream the gateway shows (duet/gateway/exposure.hpp): globs, allow before deny, renames both
// ways, and the policies refused in words. Merged names (src/gateway/merged_names.hpp): prefixes, routing
// back to the member and the upstream's name, the lists as shown, and the merged lists' cursors.
#include <duet/gateway/exposure.hpp>

#include "gateway/merged_names.hpp"

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

namespace {

using namespace duet::gateway;
using namespace duet::gateway::detail;
namespace json = boost::json;

TEST(Glob, StarMatchesAnyRunAndQuestionMarkOneCharacter) {
    EXPECT_TRUE(glob_match("*", ""));
    EXPECT_TRUE(glob_match("read_*", "read_file"));
    EXPECT_TRUE(glob_match("read_*", "read_"));
    EXPECT_FALSE(glob_match("read_*", "rea"));
    EXPECT_TRUE(glob_match("*_file", "write_file"));
    EXPECT_TRUE(glob_match("a*b*c", "axxbyyc"));
    EXPECT_FALSE(glob_match("a*b*c", "axxbyy"));
    EXPECT_TRUE(glob_match("file:///docs/*", "file:///docs/a/b.txt"));
    EXPECT_TRUE(glob_match("t?p", "tip"));
    EXPECT_FALSE(glob_match("t?p", "tp"));
    EXPECT_FALSE(glob_match("exact", "exactly"));
    EXPECT_TRUE(glob_match("**", "anything"));
}

TEST(Glob, EmptyOrNonPrintablePatternsAreNotGlobs) {
    EXPECT_FALSE(valid_glob(""));
    EXPECT_FALSE(valid_glob("a\nb"));
    EXPECT_FALSE(valid_glob("caf\xc3\xa9"));
    EXPECT_TRUE(valid_glob("read_*"));
}

TEST(Exposure, AllowListsWhatIsShownAndDenyHidesFromIt) {
    kind_policy p;
    EXPECT_TRUE(admitted(p, "anything")) << "no rules: everything shown";
    p.allow = {"read_*", "list_*"};
    p.deny = {"read_secrets"};
    EXPECT_TRUE(admitted(p, "read_file"));
    EXPECT_TRUE(admitted(p, "list_dir"));
    EXPECT_FALSE(admitted(p, "write_file")) << "not allowed";
    EXPECT_FALSE(admitted(p, "read_secrets")) << "allowed, then denied";
}

TEST(Exposure, RenameIsShownAndRoutedBack) {
    kind_policy p;
    p.rename = {{"read_file", "read"}};
    EXPECT_EQ(exposed_name(p, "read_file"), "read");
    EXPECT_EQ(exposed_name(p, "other"), "other");
    EXPECT_EQ(upstream_name(p, "read"), "read_file");
    EXPECT_EQ(upstream_name(p, "other"), "other");
    EXPECT_EQ(upstream_name(p, "read_file"), std::nullopt) << "the old name is no longer shown";
}

TEST(Exposure, HiddenNamesAreNeitherShownNorRouted) {
    kind_policy p;
    p.deny = {"delete_*"};
    EXPECT_EQ(exposed_name(p, "delete_all"), std::nullopt);
    EXPECT_EQ(upstream_name(p, "delete_all"), std::nullopt);
}

TEST(Exposure, BadPoliciesAreRefusedInWords) {
    kind_policy empty_glob;
    empty_glob.allow = {""};
    ASSERT_TRUE(check_policy(empty_glob, "tools"));
    EXPECT_NE(check_policy(empty_glob, "tools")->find("tools: \"\" is not a glob"), std::string::npos);

    kind_policy two_to_one;
    two_to_one.rename = {{"a", "x"}, {"b", "x"}};
    EXPECT_NE(check_policy(two_to_one, "tools")->find("two names are renamed to \"x\""), std::string::npos);

    kind_policy to_nothing;
    to_nothing.rename = {{"a", ""}};
    EXPECT_NE(check_policy(to_nothing, "prompts")->find("renamed to an empty name"), std::string::npos);

    kind_policy hidden;
    hidden.deny = {"a"};
    hidden.rename = {{"a", "b"}};
    EXPECT_NE(check_policy(hidden, "tools")->find("hidden by allow/deny"), std::string::npos);

    kind_policy fine;
    fine.allow = {"*"};
    fine.rename = {{"a", "b"}};
    EXPECT_EQ(check_policy(fine, "tools"), std::nullopt);
}

TEST(MergedNames, NamesArePrefixedPerMemberAndRoutedBack) {
    exposure_policy files, search;
    files.tools.rename = {{"read_file", "read"}};
    std::vector<named_member> members{{"files__", &files}, {"search__", &search}};
    EXPECT_EQ(shown_name(members[0], name_kind::tool, "read_file"), "files__read");
    auto routed = route_name(members, name_kind::tool, "files__read");
    ASSERT_TRUE(routed);
    EXPECT_EQ(routed->member, 0u);
    EXPECT_EQ(routed->upstream, "read_file");
    routed = route_name(members, name_kind::tool, "search__query");
    ASSERT_TRUE(routed);
    EXPECT_EQ(routed->member, 1u);
    EXPECT_EQ(routed->upstream, "query");
    EXPECT_FALSE(route_name(members, name_kind::tool, "query")) << "an unprefixed name belongs to no member";
    EXPECT_FALSE(route_name(members, name_kind::tool, "other__query"));
}

TEST(MergedNames, LongerPrefixWinsWhereOneMemberNameStartsAnother) {
    exposure_policy a, ab;
    std::vector<named_member> members{{"a__", &a}, {"a__b__", &ab}};
    auto routed = route_name(members, name_kind::tool, "a__b__x");
    ASSERT_TRUE(routed);
    EXPECT_EQ(routed->member, 1u);
    EXPECT_EQ(routed->upstream, "x");
    routed = route_name(members, name_kind::tool, "a__y");
    ASSERT_TRUE(routed);
    EXPECT_EQ(routed->member, 0u);
}

TEST(MergedNames, ListsLeaveOutHiddenItemsAndShowNamesAndDescriptions) {
    exposure_policy p;
    p.tools.deny = {"write_*"};
    p.tools.describe = {{"read_file", "Reads one file."}};
    named_member m{"files__", &p};
    auto items = json::parse(R"([{"name":"read_file","description":"old"},{"name":"write_file"},
                                 {"name":"stat"},{"description":"no name"}])")
                     .as_array();
    auto shown = shown_items(m, list_kind::tools, items);
    ASSERT_EQ(shown.size(), 2u);
    EXPECT_EQ(shown[0].at("name"), "files__read_file");
    EXPECT_EQ(shown[0].at("description"), "Reads one file.");
    EXPECT_EQ(shown[1].at("name"), "files__stat");
}

TEST(MergedNames, ResourcesAreFilteredByUriAndKeepIt) {
    exposure_policy p;
    p.resources.deny = {"file:///secret/*"};
    named_member m{"files__", &p};
    auto items = json::parse(R"([{"uri":"file:///a.txt","name":"a"},{"uri":"file:///secret/k","name":"k"}])")
                     .as_array();
    auto shown = shown_items(m, list_kind::resources, items);
    ASSERT_EQ(shown.size(), 1u);
    EXPECT_EQ(shown[0].at("uri"), "file:///a.txt");
    EXPECT_EQ(shown[0].at("name"), "a") << "a resource's name is not prefixed";
    auto templates =
        json::parse(R"([{"uriTemplate":"file:///secret/{k}"},{"uriTemplate":"file:///{p}"}])").as_array();
    auto shown_templates = shown_items(m, list_kind::templates, templates);
    ASSERT_EQ(shown_templates.size(), 1u);
    EXPECT_EQ(shown_templates[0].at("uriTemplate"), "file:///{p}");
}

TEST(MergedCursor, RoundTripsAndRefusesForgedOnes) {
    auto text = encode_cursor({"files", "inner:cursor"});
    auto back = decode_cursor(text);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->member, "files");
    EXPECT_EQ(back->inner, "inner:cursor");
    auto first = decode_cursor(encode_cursor({"search", ""}));
    ASSERT_TRUE(first);
    EXPECT_EQ(first->member, "search");
    EXPECT_EQ(first->inner, "");
    EXPECT_FALSE(decode_cursor("nonsense"));
    EXPECT_FALSE(decode_cursor("files:x")) << "not one of ours";
    EXPECT_FALSE(decode_cursor(""));
}

} // namespace
