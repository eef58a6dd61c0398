// Tests for duet/client/target.hpp and connect_mode.hpp: URL parsing (with clear usage errors), the server
// description that keys remembered verdicts, connect mode names, and the verdict cache.
#include <duet/client/connect_mode.hpp>
#include <duet/client/target.hpp>

#include <gtest/gtest.h>

namespace {

using namespace duet::client;

TEST(HttpUrl, ParsesHostPortAndTarget) {
    auto const u = parse_http_url("http://127.0.0.1:8750/mcp?x=1#frag");
    ASSERT_TRUE(u);
    EXPECT_EQ(u->host, "127.0.0.1");
    EXPECT_EQ(u->port, 8750);
    EXPECT_EQ(u->target, "/mcp?x=1");
    EXPECT_EQ(u->authority(), "127.0.0.1:8750");
}

TEST(HttpUrl, DefaultsPortAndPathAndUnbracketsIpv6) {
    auto const a = parse_http_url("http://localhost");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->port, 80);
    EXPECT_EQ(a->target, "/");
    auto const b = parse_http_url("http://[::1]:9/m");
    ASSERT_TRUE(b);
    EXPECT_EQ(b->host, "::1");
    EXPECT_EQ(b->authority(), "[::1]:9");
}

TEST(HttpUrl, HttpsDefaultsToPort443AndMarksTls) {
    auto const a = parse_http_url("https://mcp.example/mcp?x=1");
    ASSERT_TRUE(a);
    EXPECT_TRUE(a->tls);
    EXPECT_EQ(a->port, 443);
    EXPECT_EQ(a->host, "mcp.example");
    EXPECT_EQ(a->target, "/mcp?x=1");
    auto const b = parse_http_url("https://[::1]:8443/");
    ASSERT_TRUE(b);
    EXPECT_TRUE(b->tls);
    EXPECT_EQ(b->port, 8443);
    auto const c = parse_http_url("http://h/");
    ASSERT_TRUE(c);
    EXPECT_FALSE(c->tls);
}

TEST(HttpUrl, RefusesWhatItCannotSpeakWithUsageErrors) {
    for (auto const* bad : {"ftp://h", "https//h", "https://", "https://h:0/", "http://", "http://h:0/",
                            "http://h:70000/", "http://h:x/", "http://u:p@h/", "http://[::1/"}) {
        auto const u = parse_http_url(bad);
        ASSERT_FALSE(u) << bad;
        EXPECT_EQ(u.error().code, errc::usage) << bad;
    }
}

TEST(Describe, NamesTheServer) {
    EXPECT_EQ(describe(stdio_target{"duet", {"serve", "--stdio"}}), "duet serve --stdio");
    EXPECT_EQ(describe(http_target{"http://h/mcp", {}}), "http://h/mcp");
}

TEST(ConnectMode, ParsesTheThreeNames) {
    EXPECT_EQ(parse_connect_mode("legacy"), connect_mode::legacy);
    EXPECT_EQ(parse_connect_mode("modern"), connect_mode::modern);
    EXPECT_EQ(parse_connect_mode("auto"), connect_mode::auto_detect);
    EXPECT_FALSE(parse_connect_mode("Auto"));
    EXPECT_EQ(to_string(connect_mode::auto_detect), "auto");
}

TEST(VerdictCache, RemembersPerServer) {
    verdict_cache cache;
    EXPECT_FALSE(cache.find("a"));
    cache.remember("a", era_verdict{duet::protocol::era::modern, duet::protocol::version::v2026_07_28});
    ASSERT_TRUE(cache.find("a"));
    EXPECT_EQ(cache.find("a")->era, duet::protocol::era::modern);
    EXPECT_FALSE(cache.find("b"));
    cache.forget("a");
    EXPECT_FALSE(cache.find("a"));
}

TEST(ClientError, EveryCodeHasAName) {
    for (int i = 1; i <= static_cast<int>(errc::version_rejected); ++i)
        EXPECT_NE(to_string(static_cast<errc>(i)), "unknown") << i;
    EXPECT_NE(rpc_failure({-32602, "bad", nullptr}, 400).to_string().find("-32602"), std::string::npos);
}

// A child's environment is what it is given: the default names this process has set, then each extra
// entry, a name passing this process's value and NAME=VALUE setting one; nothing else of this process's.
TEST(ChildEnvironment, HoldsTheDefaultNamesSetHereThenTheExtraEntriesAndNothingElse) {
    auto const here = [](std::string const& name) -> std::optional<std::string> {
        if (name == "PATH")
            return "/usr/bin";
        if (name == "HOME")
            return "/home/ada";
        if (name == "API_TOKEN")
            return "secret";
        if (name == "PASSED")
            return "from-here";
        return std::nullopt;
    };
    std::vector<std::string> const extra{"PASSED", "SET=given", "EMPTY=", "UNSET_HERE", "PATH=/opt/bin"};
    auto const env = child_environment(extra, here);
    ASSERT_TRUE(env) << env.error().to_string();
    environment const expected{{"HOME", "/home/ada"},
                               {"PATH", "/opt/bin"}, // a later entry replaces the default's value in place
                               {"PASSED", "from-here"},
                               {"SET", "given"},
                               {"EMPTY", ""}};
    EXPECT_EQ(*env, expected);
}

TEST(ChildEnvironment, PassingANameUnsetHereDropsAnEarlierValue) {
    std::vector<std::string> const extra{"X=1", "X"};
    auto const env = child_environment(
        extra, [](std::string const&) -> std::optional<std::string> { return std::nullopt; });
    ASSERT_TRUE(env);
    EXPECT_TRUE(env->empty()) << "the later entry passes X as it is here: unset";
}

TEST(ChildEnvironment, AnEntryWithoutANameIsAUsageError) {
    std::vector<std::string> const extra{"=value"};
    auto const env = child_environment(extra);
    ASSERT_FALSE(env);
    EXPECT_EQ(env.error().code, errc::usage);
    EXPECT_NE(env.error().message.find("=value"), std::string::npos) << env.error().message;
}

TEST(ChildEnvironment, TheDefaultNamesAreTheUsualSeven) {
    std::vector<std::string_view> const names(default_environment_names().begin(),
                                              default_environment_names().end());
    EXPECT_EQ(names,
              (std::vector<std::string_view>{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG"}));
}

} // namespace
