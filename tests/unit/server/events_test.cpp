// Server changes announced at runtime (DIGEST §7, §11): modern listens get only the kinds they opted into,
// tagged with their subscription id in the request id's own JSON type; legacy sessions get list_changed only
// after notifications/initialized, and resources/updated only for what they subscribed to.
#include <duet/server/server.hpp>

#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "unit/server/harness.hpp"
#include "unit/server/test_server.hpp"

#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

namespace json = boost::json;
using namespace duet::test;
using duet::server::server;

json::object listen_params(json::object filter) {
    return json::object{{"notifications", std::move(filter)}};
}

void add_tool(server& srv, std::string name) {
    srv.add_tool(plain_tool(std::move(name)), [](json::object const&, duet::server::request_context&) {
        return duet::server::tool_result::text("");
    });
}

/// The messages about subscription `id` (its notifications and its response), in order.
std::vector<json::value> about(harness& h, json::value const& id) {
    std::vector<json::value> out;
    for (auto const& m : h.messages()) {
        auto const sid = subscription_id_of(m);
        if ((sid.kind() == id.kind() && sid == id) || is_response_to(m, id))
            out.push_back(m);
    }
    return out;
}

/// Waits until the answer to a barrier request: everything announced before it has been delivered.
void barrier(harness& h, json::value const& id) {
    h.send(modern_request(id, "server/discover"));
    h.response(id);
}

// DIGEST §7: only what the server can honour is acknowledged (no resources, no prompts here).
TEST(ConnectionListen, AcknowledgementListsOnlyHonouredKinds) {
    server srv(test_options());
    add_tool(srv, "only");
    harness h(srv);
    h.send(modern_request("L", "subscriptions/listen",
                          listen_params({{"toolsListChanged", true},
                                         {"promptsListChanged", true},
                                         {"resourcesListChanged", true},
                                         {"resourceSubscriptions", json::array{"test://doc"}}})));
    auto const i = h.wait_for([](json::value const& m) { return subscription_id_of(m) == "L"; });
    ASSERT_TRUE(i);
    auto const& ack = h.messages()[*i];
    ASSERT_TRUE(is_notification(ack, "notifications/subscriptions/acknowledged")) << ack;
    EXPECT_EQ(ack.at("params").at("notifications"), (json::object{{"toolsListChanged", true}}));
}

struct id_case {
    char const* name;
    json::value id;
};

void PrintTo(id_case const& c, std::ostream* os) {
    *os << c.name;
}

class ConnectionListenId : public testing::TestWithParam<id_case> {};

// DIGEST §7: tools added and removed at runtime reach the listen, tagged with the id in its own JSON type;
// the acknowledgement is the first message for the subscription.
TEST_P(ConnectionListenId, RuntimeToolChangesAreTaggedWithTheRequestIdType) {
    auto const& id = GetParam().id;
    server srv(test_options());
    add_tool(srv, "first");
    harness h(srv);
    h.send(modern_request(id, "subscriptions/listen", listen_params({{"toolsListChanged", true}})));
    ASSERT_TRUE(h.wait_for([&](json::value const& m) { return subscription_id_of(m) == id; }));
    add_tool(srv, "second");
    EXPECT_TRUE(srv.remove_tool("first"));
    barrier(h, "barrier");
    auto const seen = about(h, id);
    ASSERT_EQ(seen.size(), 3u);
    EXPECT_TRUE(is_notification(seen[0], "notifications/subscriptions/acknowledged")) << seen[0];
    for (std::size_t i = 1; i < 3; ++i) {
        EXPECT_TRUE(is_notification(seen[i], "notifications/tools/list_changed")) << seen[i];
        auto const sid = subscription_id_of(seen[i]);
        EXPECT_EQ(sid.kind(), id.kind()) << seen[i];
        EXPECT_EQ(sid, id);
    }
    h.finish();
    auto const end = about(h, id).back();
    // A modern result like any other (ERA-POLICY): resultType and serverInfo, no cache hints.
    expect_modern_result(end, false);
    EXPECT_EQ(result_of(end).at("_meta").at(key_subscription_id).kind(), id.kind());
    if (auto* schemas = schemas_or_skip()) {
        EXPECT_GT(h.log().expect_schema_valid(*schemas), 0u);
    }
}

INSTANTIATE_TEST_SUITE_P(Ids, ConnectionListenId,
                         testing::Values(id_case{"Integer", json::value(7)},
                                         id_case{"DigitString", json::value("7")},
                                         id_case{"String", json::value("listen-α")}),
                         [](auto const& p) { return std::string(p.param.name); });

// DIGEST §7: strictly opt-in; a listen never hears of a kind it did not ask for.
TEST(ConnectionListen, OnlyOptedInKindsAreDelivered) {
    server srv(test_options());
    add_test_features(srv);
    harness h(srv);
    h.send(modern_request(1, "subscriptions/listen", listen_params({{"promptsListChanged", true}})));
    h.send(modern_request(2, "subscriptions/listen",
                          listen_params({{"resourceSubscriptions", json::array{"test://items"}}})));
    ASSERT_TRUE(h.wait_for([](json::value const& m) { return subscription_id_of(m) == 2; }));
    add_tool(srv, "new-tool");
    srv.remove_resource("test://doc");
    srv.notify_resource_updated("test://other");
    srv.notify_resource_updated("test://items/9"); // below a watched URI
    srv.add_prompt(duet::server::prompt{.name = "new-prompt"},
                   [](auto const&, auto&) { return duet::server::prompt_result{}; });
    barrier(h, "b");
    auto const one = about(h, 1);
    ASSERT_EQ(one.size(), 2u);
    EXPECT_TRUE(is_notification(one[1], "notifications/prompts/list_changed")) << one[1];
    auto const two = about(h, 2);
    ASSERT_EQ(two.size(), 2u);
    EXPECT_TRUE(is_notification(two[1], "notifications/resources/updated")) << two[1];
    EXPECT_EQ(two[1].at("params").at("uri"), "test://items/9");
    for (auto const& m : h.messages())
        EXPECT_FALSE(is_notification(m, "notifications/tools/list_changed")) << m;
}

// DIGEST §7: a listen cancelled by the client ends silently; others keep hearing.
TEST(ConnectionListen, CancelledListenEndsSilently) {
    server srv(test_options());
    add_tool(srv, "t");
    harness h(srv);
    h.send(modern_request("a", "subscriptions/listen", listen_params({{"toolsListChanged", true}})));
    h.send(modern_request("b", "subscriptions/listen", listen_params({{"toolsListChanged", true}})));
    ASSERT_TRUE(h.wait_for([](json::value const& m) { return subscription_id_of(m) == "b"; }));
    h.send(cancelled_notification("a"));
    barrier(h, 1);
    add_tool(srv, "u");
    barrier(h, 2);
    h.finish();
    EXPECT_EQ(about(h, "a").size(), 1u); // the acknowledgement only
    auto const b = about(h, "b");
    ASSERT_EQ(b.size(), 3u);
    EXPECT_TRUE(is_notification(b[1], "notifications/tools/list_changed"));
    EXPECT_TRUE(is_response_to(b[2], "b"));
}

// DIGEST §11: before notifications/initialized a legacy session hears no list_changed; after it, it does.
TEST(ConnectionLegacyEvents, ListChangedOnlyAfterInitialized) {
    server srv(test_options());
    add_tool(srv, "t");
    harness h(srv);
    h.send(initialize_request(1, "2025-11-25"));
    h.response(1);
    add_tool(srv, "before-initialized");
    h.send(legacy_request(2, "ping"));
    h.response(2);
    for (auto const& m : h.messages())
        EXPECT_FALSE(is_notification(m, "notifications/tools/list_changed")) << m;
    h.send(initialized_notification());
    add_tool(srv, "after-initialized");
    h.send(legacy_request(3, "ping"));
    auto const pong = h.wait_for([](json::value const& m) { return is_response_to(m, 3); });
    ASSERT_TRUE(pong);
    auto const changed = h.wait_for(
        [](json::value const& m) { return is_notification(m, "notifications/tools/list_changed"); });
    ASSERT_TRUE(changed);
    EXPECT_LT(*changed, *pong);
    auto const& n = h.messages()[*changed].as_object();
    // Legacy notifications carry no subscription tag.
    EXPECT_TRUE(subscription_id_of(n).is_null()) << json::value(n);
    if (auto* schemas = schemas_or_skip()) {
        EXPECT_GT(h.log().expect_schema_valid(*schemas), 0u);
    }
}

// DIGEST §11: resources/updated goes to the legacy sessions subscribed to that URI (or a parent), no others.
TEST(ConnectionLegacyEvents, ResourceUpdatedOnlyToSubscribedSessions) {
    server srv(test_options());
    add_test_features(srv);
    harness subscribed(srv);
    harness other(srv);
    for (auto* h : {&subscribed, &other}) {
        h->send(initialize_request(1, "2025-11-25"));
        h->response(1);
        h->send(initialized_notification());
    }
    subscribed.send(legacy_request(2, "resources/subscribe", {{"uri", "test://doc"}}));
    expect_legacy_result(subscribed.response(2));
    srv.notify_resource_updated("test://doc");
    srv.notify_resource_updated("test://elsewhere");
    for (auto* h : {&subscribed, &other}) {
        h->send(legacy_request(3, "ping"));
        h->response(3);
    }
    std::vector<json::value> updates;
    for (auto const& m : subscribed.messages())
        if (is_notification(m, "notifications/resources/updated"))
            updates.push_back(m);
    ASSERT_EQ(updates.size(), 1u);
    EXPECT_EQ(updates[0].at("params").at("uri"), "test://doc");
    for (auto const& m : other.messages())
        EXPECT_FALSE(is_notification(m, "notifications/resources/updated")) << m;
    // Unsubscribing stops them.
    subscribed.send(legacy_request(4, "resources/unsubscribe", {{"uri", "test://doc"}}));
    subscribed.response(4);
    srv.notify_resource_updated("test://doc");
    subscribed.send(legacy_request(5, "ping"));
    subscribed.response(5);
    std::size_t count = 0;
    for (auto const& m : subscribed.messages())
        count += is_notification(m, "notifications/resources/updated");
    EXPECT_EQ(count, 1u);
    if (auto* schemas = schemas_or_skip()) {
        EXPECT_GT(subscribed.log().expect_schema_valid(*schemas), 0u);
    }
}

// Legacy and modern on one connection: the session gets its untagged notification, the listen its tagged one.
TEST(ConnectionLegacyEvents, SessionAndListenOnOneConnectionEachGetTheirOwn) {
    server srv(test_options());
    add_tool(srv, "t");
    harness h(srv);
    h.send(initialize_request(1, "2025-11-25"));
    h.response(1);
    h.send(initialized_notification());
    h.send(modern_request("L", "subscriptions/listen", listen_params({{"toolsListChanged", true}})));
    ASSERT_TRUE(h.wait_for([](json::value const& m) { return subscription_id_of(m) == "L"; }));
    add_tool(srv, "u");
    h.send(legacy_request(2, "ping"));
    h.response(2);
    int tagged = 0, untagged = 0;
    for (auto const& m : h.messages())
        if (is_notification(m, "notifications/tools/list_changed"))
            (subscription_id_of(m) == "L" ? tagged : untagged)++;
    EXPECT_EQ(tagged, 1);
    EXPECT_EQ(untagged, 1);
}

} // namespace

// A second listen reusing the id of an open one is refused, so the first one's end stays unambiguous.
TEST(ConnectionListen, ListenReusingAnOpenIdIsInvalidRequest) {
    server srv(test_options());
    add_tool(srv, "t");
    harness h(srv);
    h.send(modern_request("L", "subscriptions/listen", listen_params({{"toolsListChanged", true}})));
    ASSERT_TRUE(h.wait_for([](json::value const& m) { return subscription_id_of(m) == "L"; }));
    h.send(modern_request("L", "subscriptions/listen", listen_params({{"toolsListChanged", true}})));
    auto const refused = h.response("L");
    EXPECT_EQ(refused.at("error").at("code").as_int64(), -32600);
    add_tool(srv, "u");
    barrier(h, 1);
    h.finish();
    // The first listen still ends once, with its own result.
    auto const about_l = about(h, "L");
    ASSERT_GE(about_l.size(), 3u);
    EXPECT_TRUE(is_response_to(about_l.back(), "L"));
    EXPECT_TRUE(about_l.back().as_object().contains("result"));
}
