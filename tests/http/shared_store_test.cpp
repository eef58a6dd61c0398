// Several `duet serve` processes sharing one Redis (--store): an announcement raised on one process reaches
// the listens and legacy sessions held by every other, each once; Redis absent at start is exit 3 in words;
// Redis lost later leaves the modern requests that need nothing shared being served. Real processes, a real
// redis-server on loopback.
#include "http/mcp_http.hpp"
#include "http/servers.hpp"
#include "stdio/messages.hpp"
#include "support/redis_server.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>

namespace {

using namespace duet;
using namespace duet::test;
using namespace duet::test::http;
namespace json = boost::json;

constexpr char const* readme = "duet://demo/readme";

class SharedStore : public ::testing::Test {
protected:
    void SetUp() override {
        if (auto why = test::redis_server::missing(); !why.empty())
            GTEST_SKIP() << why;
        redis_ = std::make_unique<test::redis_server>();
    }
    // A `duet serve` of this test's deployment (its own key prefix on the shared Redis).
    std::unique_ptr<child_server> process() {
        return std::make_unique<child_server>(
            std::vector<std::string>{"--store", redis_->url(), "--store-prefix",
                                     "shared-store-test:" + std::to_string(::getpid()) + ':'});
    }
    std::unique_ptr<test::redis_server> redis_;
};

std::unique_ptr<response_stream> open_readme_listen(mcp_http& c, std::string const& id) {
    auto listen =
        c.open(modern_request(json::string(id), "subscriptions/listen",
                              {{"notifications", {{"resourceSubscriptions", json::array{readme}}}}}));
    EXPECT_TRUE(is_notification(c.next(*listen), "notifications/subscriptions/acknowledged"));
    return listen;
}

bool is_readme_update(json::value const& m) {
    return is_notification(m, "notifications/resources/updated") &&
           m.at("params").at("uri") == json::value(readme);
}

TEST_F(SharedStore, AnUpdateRaisedOnOneProcessReachesListensAndSessionsOnEveryProcessOnce) {
    auto const a = process(), b = process();
    mcp_http on_a(a->ep()), on_b(b->ep()), legacy(a->ep());
    auto listen_a = open_readme_listen(on_a, "LA");
    auto listen_b = open_readme_listen(on_b, "LB");
    legacy.initialize("2025-11-25");
    auto const subscribed = legacy.post(legacy_request(2, "resources/subscribe", {{"uri", readme}})).json();
    ASSERT_EQ(code_of(subscribed), 0) << subscribed;
    auto get = legacy.open_spec(stream_spec(legacy));
    ASSERT_EQ(get->status(), 200u);

    auto const touched = on_b.post(modern_request(1, "tools/call", call_params("touch_readme"))).json();
    ASSERT_EQ(code_of(touched), 0) << touched;

    auto const heard_a = on_a.next(*listen_a);
    EXPECT_TRUE(is_readme_update(heard_a)) << heard_a;
    EXPECT_EQ(subscription_id_of(heard_a), "LA");
    auto const heard_b = on_b.next(*listen_b);
    EXPECT_TRUE(is_readme_update(heard_b)) << heard_b;
    auto const heard_session = legacy.next(*get);
    EXPECT_TRUE(is_readme_update(heard_session)) << heard_session;

    // Once each: a second touch is the next thing every stream carries.
    on_a.post(modern_request(2, "tools/call", call_params("touch_readme")));
    EXPECT_TRUE(is_readme_update(on_a.next(*listen_a)));
    EXPECT_TRUE(is_readme_update(on_b.next(*listen_b)));
    EXPECT_TRUE(is_readme_update(legacy.next(*get)));
    on_a.expect_schema_valid();
    legacy.expect_schema_valid();
}

TEST_F(SharedStore, WhileRedisIsAwayModernRequestsAreServedAndAnnouncementsResumeAfter) {
    auto const a = process(), b = process();
    mcp_http on_a(a->ep()), on_b(b->ep());
    auto listen_a = open_readme_listen(on_a, "LA");
    // Both connected to Redis first: an announcement from b reaches a.
    on_b.post(modern_request(100, "tools/call", call_params("touch_readme")));
    ASSERT_TRUE(is_readme_update(on_a.next(*listen_a)));
    redis_->kill();
    auto const echoed =
        on_b.post(modern_request(1, "tools/call", call_params("echo", {{"text", "still here"}}))).json();
    EXPECT_EQ(code_of(echoed), 0) << echoed;
    EXPECT_NE(json::serialize(echoed).find("still here"), std::string::npos) << echoed;
    redis_->start();
    // Back once its connections reconnect (backoff under 2 s): touched until the listen hears it.
    std::atomic<bool> heard{false};
    std::thread toucher([&] {
        for (int id = 2; !heard && id < 400; ++id) {
            on_b.post(modern_request(id, "tools/call", call_params("touch_readme")));
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    });
    auto const update = on_a.next(*listen_a);
    heard = true;
    toucher.join();
    EXPECT_TRUE(is_readme_update(update)) << update << "\n" << b->stderr_text();
    EXPECT_NE(b->stderr_text().find("announcements are dropped"), std::string::npos) << b->stderr_text();
}

TEST(SharedStoreStart, UnreachableRedisIsExit3SayingWhere) {
    auto const port = std::to_string(test::free_loopback_port());
    auto const r = run_duet_to_exit({"serve", "--port", "0", "--store", "redis://127.0.0.1:" + port});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("127.0.0.1:" + port + " cannot be reached"), std::string::npos) << r.err;
}

TEST(SharedStoreStart, AMalformedStoreUrlOrAStdioServerIsAUsageError) {
    auto const bad = run_duet_to_exit({"serve", "--port", "0", "--store", "http://127.0.0.1:6379"});
    EXPECT_EQ(bad.exit_code, 2) << bad.err;
    EXPECT_NE(bad.err.find("not a redis:// URL"), std::string::npos) << bad.err;
    auto const stdio = run_duet_to_exit({"serve", "--stdio", "--store", "redis://127.0.0.1:6379"});
    EXPECT_EQ(stdio.exit_code, 2) << stdio.err;
    EXPECT_NE(stdio.err.find("stdio server has one client"), std::string::npos) << stdio.err;
    auto const empty =
        run_duet_to_exit({"serve", "--port", "0", "--store", "redis://127.0.0.1:6379", "--store-prefix", ""});
    EXPECT_EQ(empty.exit_code, 2) << empty.err;
}

} // namespace
