// Where --store points: redis://HOST[:PORT][/DB] and every way to get it wrong, each refused in words.
#include <duet/store/redis.hpp>

#include <gtest/gtest.h>

namespace duet::store {
namespace {

TEST(RedisUrl, HostAloneTakesTheDefaultPortAndDatabase) {
    auto const o = parse_redis_url("redis://cache.internal");
    ASSERT_TRUE(o.has_value()) << o.error();
    EXPECT_EQ(o->host, "cache.internal");
    EXPECT_EQ(o->port, 6379);
    EXPECT_EQ(o->database, 0);
}

TEST(RedisUrl, PortAndDatabaseAreRead) {
    auto const o = parse_redis_url("redis://127.0.0.1:6380/3");
    ASSERT_TRUE(o.has_value()) << o.error();
    EXPECT_EQ(o->host, "127.0.0.1");
    EXPECT_EQ(o->port, 6380);
    EXPECT_EQ(o->database, 3);
}

TEST(RedisUrl, BracketedIpv6HostLosesItsBrackets) {
    auto const o = parse_redis_url("redis://[::1]:7000/");
    ASSERT_TRUE(o.has_value()) << o.error();
    EXPECT_EQ(o->host, "::1");
    EXPECT_EQ(o->port, 7000);
    EXPECT_EQ(o->database, 0);
}

TEST(RedisUrl, EachMistakeIsRefusedSayingWhatIsWrong) {
    struct bad {
        char const* url;
        char const* says;
    };
    for (auto const& [url, says] : {
             bad{"http://127.0.0.1:6379", "not a redis:// URL"},
             bad{"127.0.0.1:6379", "not a redis:// URL"},
             bad{"redis://", "names no host"},
             bad{"redis://:6379", "names no host"},
             bad{"redis://h:0", "not a port"},
             bad{"redis://h:65536", "not a port"},
             bad{"redis://h:63x9", "not a port"},
             bad{"redis://h:", "not a port"},
             bad{"redis://h/x", "not a Redis database number"},
             bad{"redis://h/-1", "not a Redis database number"},
             bad{"redis://user:secret@h", "no credentials"},
             bad{"redis://h?db=1", "no query"},
             bad{"redis://[::1", "closing ']'"},
             bad{"redis://[::1]x", "':PORT'"},
             bad{"rediss://h:6379", "TLS"},
         }) {
        auto const o = parse_redis_url(url);
        ASSERT_FALSE(o.has_value()) << url;
        EXPECT_NE(o.error().find(says), std::string::npos) << url << ": " << o.error();
    }
}

} // namespace
} // namespace duet::store
