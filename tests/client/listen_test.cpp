// Listening for change notifications (DIGEST §7): modern subscriptions/listen (acknowledged first, tagged
// notifications after) and the legacy session's notifications, both over HTTP against the demo server
// in-process, where a tool added at runtime announces tools/list_changed. A change also invalidates the
// client's cached list at once.
#include "client/sync_client.hpp"
#include "http/servers.hpp"

#include <boost/asio/detached.hpp>

#include <chrono>
#include <string>

namespace {

using namespace duet;
using namespace duet::test::client_side;
namespace json = boost::json;

class ClientListen : public ::testing::TestWithParam<client::connect_mode> {};

boost::asio::awaitable<void> listen_into(std::shared_ptr<client::client> c,
                                         std::shared_ptr<std::vector<client::listen_event>> events,
                                         std::shared_ptr<client::cancellation> cancel,
                                         std::shared_ptr<bool> ended) {
    client::listen_filter filter;
    filter.tools_list_changed = true;
    client::request_options o;
    o.cancel = cancel;
    std::function<void(client::listen_event const&)> sink = [events](client::listen_event const& e) {
        events->push_back(e);
    };
    auto r = co_await c->async_listen(std::move(filter), std::move(sink), o);
    EXPECT_TRUE(r) << (r ? "" : r.error().to_string());
    *ended = true;
}

TEST_P(ClientListen, DeliversListChangedUntilCancelled) {
    test::http::inproc_server http;
    sync_client c;
    client::client_options o;
    o.mode = GetParam();
    o.verdicts = nullptr;
    ASSERT_TRUE(c.connect(client::http_target{"http://" + http.ep().authority() + http.ep().path, {}}, o));
    auto events = std::make_shared<std::vector<client::listen_event>>();
    auto cancel = std::make_shared<client::cancellation>();
    auto ended = std::make_shared<bool>(false);
    boost::asio::co_spawn(c.io(), listen_into(c.get(), events, cancel, ended), boost::asio::detached);

    if (GetParam() == client::connect_mode::modern) {
        ASSERT_TRUE(c.pump_until([&] { return !events->empty(); }));
        EXPECT_EQ(events->front().what, client::listen_event::kind::acknowledged);
    }
    // A legacy session's notifications ride its GET stream, which the client opens in the background, and a
    // new GET stream carries only what follows it (replay is for Last-Event-ID): until the stream is there, a
    // change is announced to nobody. So the change is made again until one announcement arrives (a modern
    // listen, acknowledged above, hears the first).
    auto const heard = [&] {
        return std::any_of(events->begin(), events->end(),
                           [](auto const& e) { return e.method == "notifications/tools/list_changed"; });
    };
    int added = 0;
    for (auto const deadline = std::chrono::steady_clock::now() + client_wait;
         !heard() && std::chrono::steady_clock::now() < deadline;) {
        test::http::add_runtime_tool(http.srv(), "late_tool_" + std::to_string(added++));
        c.pump_while_not(heard, std::chrono::milliseconds(250));
    }
    ASSERT_TRUE(heard()) << "no list_changed after " << added << " changes";
    auto tools = c.run(c->async_list_tools());
    ASSERT_TRUE(tools);
    EXPECT_TRUE(std::any_of(tools->begin(), tools->end(), [](json::value const& t) {
        return t.as_object().at("name") == "late_tool_0";
    })) << "the list is fetched again after list_changed";
    cancel->cancel();
    EXPECT_TRUE(c.pump_until([&] { return *ended; }));
}

INSTANTIATE_TEST_SUITE_P(Http, ClientListen,
                         ::testing::Values(client::connect_mode::legacy, client::connect_mode::modern),
                         [](auto const& row) { return std::string(to_string(row.param)); });

} // namespace
