// Tests for duet/client/result_cache.hpp (SEP-2549, DIGEST §5): freshness by ttlMs, stale on 0 / missing /
// negative, invalidation by list_changed and resources/updated, pages cached independently, no caching of
// retries, input_required results or uncacheable methods. The clock is passed in: no sleeps.
#include <duet/client/result_cache.hpp>

#include <gtest/gtest.h>

namespace {

using duet::client::result_cache;
namespace json = boost::json;
using namespace std::chrono_literals;

auto const t0 = result_cache::clock::time_point{} + 1h;

json::object tools_result(std::int64_t ttl) {
    return json::object{
        {"resultType", "complete"}, {"tools", json::array{}}, {"ttlMs", ttl}, {"cacheScope", "public"}};
}

TEST(ResultCache, FreshUntilTtlPasses) {
    result_cache c;
    c.store("tools/list", {}, tools_result(1000), t0);
    EXPECT_TRUE(c.fresh("tools/list", {}, t0 + 999ms));
    EXPECT_FALSE(c.fresh("tools/list", {}, t0 + 1000ms));
    EXPECT_TRUE(c.any("tools/list", {})) << "a stale copy stays available";
}

TEST(ResultCache, ZeroMissingOrNegativeTtlIsStaleAtOnce) {
    result_cache c;
    c.store("tools/list", {}, tools_result(0), t0);
    EXPECT_FALSE(c.fresh("tools/list", {}, t0));
    c.store("prompts/list", {}, json::object{{"prompts", json::array{}}}, t0); // a legacy server
    EXPECT_FALSE(c.fresh("prompts/list", {}, t0));
    c.store("resources/list", {}, json::object{{"resources", json::array{}}, {"ttlMs", -5}}, t0);
    EXPECT_FALSE(c.fresh("resources/list", {}, t0));
}

TEST(ResultCache, PagesAreKeyedByCursorAndEnvelopeIsIgnored) {
    result_cache c;
    c.store("tools/list", json::object{{"cursor", "2"}}, tools_result(1000), t0);
    EXPECT_FALSE(c.fresh("tools/list", {}, t0));
    json::object with_meta{{"cursor", "2"}, {"_meta", {{"progressToken", 1}}}};
    EXPECT_TRUE(c.fresh("tools/list", with_meta, t0));
}

TEST(ResultCache, ListChangedDropsThatListOnly) {
    result_cache c;
    c.store("tools/list", {}, tools_result(60000), t0);
    c.store("tools/list", json::object{{"cursor", "x"}}, tools_result(60000), t0);
    c.store("prompts/list", {}, json::object{{"prompts", json::array{}}, {"ttlMs", 60000}}, t0);
    c.on_notification("notifications/tools/list_changed", {});
    EXPECT_FALSE(c.any("tools/list", {}));
    EXPECT_FALSE(c.any("tools/list", json::object{{"cursor", "x"}}));
    EXPECT_TRUE(c.fresh("prompts/list", {}, t0));
}

TEST(ResultCache, ResourceUpdatedDropsReadsOfThatUriAndUnderIt) {
    result_cache c;
    json::object const read{{"contents", json::array{}}, {"ttlMs", 60000}};
    c.store("resources/read", json::object{{"uri", "file:///dir/a"}}, read, t0);
    c.store("resources/read", json::object{{"uri", "file:///other"}}, read, t0);
    c.on_notification("notifications/resources/updated", json::object{{"uri", "file:///dir"}});
    EXPECT_FALSE(c.any("resources/read", json::object{{"uri", "file:///dir/a"}}));
    EXPECT_TRUE(c.any("resources/read", json::object{{"uri", "file:///other"}}));
}

TEST(ResultCache, NeverStoresInputRequiredRetriesOrUncacheableMethods) {
    result_cache c;
    c.store("resources/read", json::object{{"uri", "u"}},
            json::object{{"resultType", "input_required"}, {"requestState", "s"}}, t0);
    c.store("resources/read", json::object{{"uri", "u"}, {"requestState", "s"}},
            json::object{{"contents", json::array{}}, {"ttlMs", 60000}}, t0);
    c.store("tools/call", json::object{{"name", "x"}},
            json::object{{"content", json::array{}}, {"ttlMs", 60000}}, t0);
    EXPECT_EQ(c.size(), 0u);
    EXPECT_FALSE(result_cache::cacheable("completion/complete"));
    EXPECT_TRUE(result_cache::cacheable("server/discover"));
}

TEST(ResultCache, DropMethodDiscardsEveryPage) {
    result_cache c;
    c.store("resources/templates/list", {}, json::object{{"resourceTemplates", json::array{}}, {"ttlMs", 9}},
            t0);
    c.store("resources/templates/list", json::object{{"cursor", "c"}},
            json::object{{"resourceTemplates", json::array{}}, {"ttlMs", 9}}, t0);
    c.drop_method("resources/templates/list");
    EXPECT_EQ(c.size(), 0u);
}

} // namespace
