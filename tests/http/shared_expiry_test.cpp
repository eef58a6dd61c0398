// A legacy session in a shared store (Redis) expires after its idle time wherever it was served, and not
// while any process serves it: two in-process servers stand for two processes, each with a store of its own
// on one redis-server.
#include <duet/store/redis.hpp>

#include "common/store_runtime.hpp"
#include "http/mcp_http.hpp"
#include "http/servers.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "support/redis_server.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace {

using namespace duet;
using namespace duet::test;
using namespace duet::test::http;
using namespace std::chrono_literals;

constexpr auto expiry = std::chrono::milliseconds(600);

class SharedExpiry : public ::testing::Test {
protected:
    void SetUp() override {
        if (auto why = test::redis_server::missing(); !why.empty())
            GTEST_SKIP() << why;
        redis_ = std::make_unique<test::redis_server>();
        for (auto& s : servers_)
            s = std::make_unique<inproc_server>(options());
    }
    transport::http_options options() {
        transport::http_options o;
        o.session_expiry = expiry;
        o.session_store =
            store::make_redis_session_store(runtime_.start(), redis_->options("expiry:"), {}, expiry);
        return o;
    }

    apps::store_runtime runtime_; // first: the servers' stores end on it
    std::unique_ptr<test::redis_server> redis_;
    std::unique_ptr<inproc_server> servers_[2];
};

TEST_F(SharedExpiry, TrafficOnEitherProcessKeepsTheSessionAndIdlenessEndsItOnBoth) {
    mcp_http on_a(servers_[0]->ep());
    on_a.initialize("2025-11-25");
    mcp_http on_b(servers_[1]->ep(), on_a);
    // Busy on b for three expiries: a, which sees none of it, does not end the session either.
    auto const until = std::chrono::steady_clock::now() + 3 * expiry;
    for (int id = 2; std::chrono::steady_clock::now() < until; ++id) {
        EXPECT_EQ(on_b.post(legacy_request(id, "ping")).status, 200u);
        std::this_thread::sleep_for(expiry / 6);
    }
    EXPECT_EQ(on_a.post(legacy_request(100, "ping")).status, 200u);
    // Idle for three expiries: gone on both.
    std::this_thread::sleep_for(3 * expiry);
    EXPECT_EQ(on_a.post(legacy_request(101, "ping")).status, 404u);
    EXPECT_EQ(on_b.post(legacy_request(102, "ping")).status, 404u);
}

} // namespace
