// Announcements go through the server's event bus (store/event_bus.hpp): two servers on one bus and topic
// stand for two processes serving one endpoint, so a change made at one reaches the listeners of both; a
// server on another topic hears none of it.
#include <duet/server/server.hpp>
#include <duet/store/memory.hpp>

#include "unit/server/test_server.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace {

using duet::server::server;
using duet::server::server_event;

struct recorder final : duet::server::event_listener {
    std::vector<server_event> heard;
    void on_server_event(server_event const& e) override { heard.push_back(e); }
};

duet::server::server_options on_bus(std::shared_ptr<duet::store::event_bus> bus, std::string topic) {
    auto o = duet::test::test_options();
    o.event_bus = std::move(bus);
    o.event_topic = std::move(topic);
    return o;
}

TEST(SharedEventBus, AChangeAtOneServerReachesTheListenersOfEveryServerOnItsTopic) {
    auto const bus = duet::store::make_memory_event_bus();
    server here(on_bus(bus, "endpoint"));
    server there(on_bus(bus, "endpoint"));
    server elsewhere(on_bus(bus, "another endpoint"));
    auto const near = std::make_shared<recorder>();
    auto const far = std::make_shared<recorder>();
    auto const apart = std::make_shared<recorder>();
    here.subscribe(near);
    there.subscribe(far);
    elsewhere.subscribe(apart);

    here.notify_list_changed(server_event::kind::tools_changed);
    here.notify_resource_updated("file:///dir/a b.txt");

    for (auto const* r : {near.get(), far.get()}) {
        ASSERT_EQ(r->heard.size(), 2u);
        EXPECT_EQ(r->heard[0].what, server_event::kind::tools_changed);
        EXPECT_EQ(r->heard[1].what, server_event::kind::resource_updated);
        EXPECT_EQ(r->heard[1].uri, "file:///dir/a b.txt");
    }
    EXPECT_TRUE(apart->heard.empty());
}

TEST(SharedEventBus, AServerGoneFromTheBusLeavesItsTopicToTheOthers) {
    auto const bus = duet::store::make_memory_event_bus();
    server here(on_bus(bus, "endpoint"));
    auto const r = std::make_shared<recorder>();
    here.subscribe(r);
    {
        server gone(on_bus(bus, "endpoint"));
        gone.notify_list_changed(server_event::kind::tools_changed);
    }
    // The destroyed server left the bus: this reaches only `here` (the sanitizer build would see a use after
    // free otherwise).
    here.notify_list_changed(server_event::kind::prompts_changed);
    ASSERT_EQ(r->heard.size(), 2u);
    EXPECT_EQ(r->heard[0].what, server_event::kind::tools_changed);
    EXPECT_EQ(r->heard[1].what, server_event::kind::prompts_changed);
}

} // namespace
