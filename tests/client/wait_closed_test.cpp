// client::async_wait_closed: what a long-lived user of a connection (the gateway's control connection) waits
// on to learn that a stdio server died: it returns true when the connection ends, however it ends, and false
// when the caller's cancellation fires first.
#include "client/sync_client.hpp"

#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <future>
#include <memory>

namespace {

using namespace duet;
using namespace duet::test::client_side;
namespace json = boost::json;
namespace asio = boost::asio;

client::stdio_target demo_server() {
    return client::stdio_target{DUET_BINARY, {"serve", "--stdio"}};
}

TEST(ClientWaitClosed, ReturnsTrueWhenTheStdioServerDies) {
    auto const node = node_binary();
    DUET_SKIP_WITHOUT_NODE(node);
    sync_client c;
    auto r = c.connect(client::stdio_target{node, {DUET_SOURCE_DIR "/tests/gateway/crashing_upstream.mjs"}},
                       legacy_options());
    ASSERT_TRUE(r) << r.error().to_string();
    auto waited = asio::co_spawn(c.io(), c->async_wait_closed(), asio::use_future);
    auto crash = c.run(c->async_call_tool("crash", json::object{}));
    EXPECT_FALSE(crash) << "the server exits instead of answering";
    ASSERT_TRUE(
        c.pump_until([&] { return waited.wait_for(std::chrono::seconds(0)) == std::future_status::ready; }));
    EXPECT_TRUE(waited.get());
}

TEST(ClientWaitClosed, ReturnsTrueWhenTheClientClosesIt) {
    sync_client c;
    auto r = c.connect(demo_server(), legacy_options());
    ASSERT_TRUE(r) << r.error().to_string();
    auto waited = asio::co_spawn(c.io(), c->async_wait_closed(), asio::use_future);
    c.close();
    ASSERT_TRUE(
        c.pump_until([&] { return waited.wait_for(std::chrono::seconds(0)) == std::future_status::ready; }));
    EXPECT_TRUE(waited.get());
}

TEST(ClientWaitClosed, ReturnsFalseWhenCancelledWhileTheConnectionLives) {
    sync_client c;
    auto r = c.connect(demo_server(), legacy_options());
    ASSERT_TRUE(r) << r.error().to_string();
    auto cancel = std::make_shared<client::cancellation>();
    asio::steady_timer later(c.io(), std::chrono::milliseconds(50));
    later.async_wait([cancel](boost::system::error_code) { cancel->cancel(); });
    EXPECT_FALSE(c.run(c->async_wait_closed(cancel)));
    auto tools = c.run(c->async_list_tools()); // still serving
    EXPECT_TRUE(tools) << tools.error().to_string();
}

} // namespace
