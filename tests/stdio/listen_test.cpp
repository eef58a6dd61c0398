// subscriptions/listen over stdio (DIGEST §7): the acknowledgement comes first for its id and lists only the
// honoured kinds, tagged with the request id in its own JSON type; a cancelled listen ends silently; end of
// input ends every open listen with its result. (Runtime list changes need an in-process server: the demo
// binary never changes its lists, so tests/unit/server covers the notifications themselves.)
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "stdio/stdio_client.hpp"

#include <gtest/gtest.h>

namespace {

namespace json = boost::json;
using namespace duet::test;

json::object listen_params(json::object filter) {
    return json::object{{"notifications", std::move(filter)}};
}

// DIGEST §7: the acknowledgement is the first message for the subscription and names only what is honoured.
TEST(StdioListen, AcknowledgementComesFirstAndListsOnlyHonouredKinds) {
    stdio_client c;
    c.send(modern_request("L1", "subscriptions/listen",
                          listen_params({{"toolsListChanged", true},
                                         {"promptsListChanged", false},
                                         {"resourceSubscriptions", json::array{"duet://demo/readme"}},
                                         {"madeUpKind", true}})));
    auto const first = c.wait_for(
        [](json::value const& m) { return subscription_id_of(m) == "L1" || is_response_to(m, "L1"); });
    ASSERT_TRUE(first);
    auto const& ack = c.messages()[*first];
    ASSERT_TRUE(is_notification(ack, "notifications/subscriptions/acknowledged")) << ack;
    EXPECT_EQ(ack.at("params").at("notifications"),
              (json::object{{"toolsListChanged", true},
                            {"resourceSubscriptions", json::array{"duet://demo/readme"}}}));
    // The listen stays open: other requests are served meanwhile.
    c.send(modern_request(2, "tools/list"));
    expect_modern_result(c.response(2), true);
    EXPECT_EQ(c.finish(), 0);
    c.expect_schema_valid();
}

// DIGEST §7: the subscriptionId is the listen's request id with the same JSON type (7 and "7" differ).
TEST(StdioListen, SubscriptionIdKeepsTheRequestIdType) {
    stdio_client c;
    c.send(modern_request(7, "subscriptions/listen", listen_params({{"toolsListChanged", true}})));
    c.send(modern_request("7", "subscriptions/listen", listen_params({{"promptsListChanged", true}})));
    auto const a = c.wait_for([](json::value const& m) {
        return is_notification(m, "notifications/subscriptions/acknowledged") &&
               subscription_id_of(m).is_int64();
    });
    auto const b = c.wait_for([](json::value const& m) {
        return is_notification(m, "notifications/subscriptions/acknowledged") &&
               subscription_id_of(m).is_string();
    });
    ASSERT_TRUE(a && b);
    EXPECT_EQ(subscription_id_of(c.messages()[*a]), 7);
    EXPECT_EQ(c.messages()[*a].at("params").at("notifications"), (json::object{{"toolsListChanged", true}}));
    EXPECT_EQ(subscription_id_of(c.messages()[*b]), "7");
    EXPECT_EQ(c.messages()[*b].at("params").at("notifications"),
              (json::object{{"promptsListChanged", true}}));

    EXPECT_EQ(c.finish(), 0);
    // End of input ends both, each result tagged with its own id in its own type.
    auto const end_int = result_of(c.response(7));
    auto const end_str = result_of(c.response("7"));
    EXPECT_EQ(end_int.at("_meta").at(key_subscription_id), 7);
    EXPECT_TRUE(end_int.at("_meta").at(key_subscription_id).is_int64());
    EXPECT_EQ(end_str.at("_meta").at(key_subscription_id), "7");
    c.expect_schema_valid();
}

// DIGEST §7: notifications/cancelled for the listen id ends it silently: no result, no further message.
TEST(StdioListen, CancelledListenEndsSilently) {
    stdio_client c;
    c.send(modern_request("gone", "subscriptions/listen", listen_params({{"toolsListChanged", true}})));
    c.send(modern_request("kept", "subscriptions/listen", listen_params({{"toolsListChanged", true}})));
    ASSERT_TRUE(c.wait_for([](json::value const& m) { return subscription_id_of(m) == "gone"; }));
    ASSERT_TRUE(c.wait_for([](json::value const& m) { return subscription_id_of(m) == "kept"; }));
    auto const acks = c.messages().size();
    c.send(cancelled_notification("gone"));
    EXPECT_EQ(c.finish(), 0);
    // After the cancel: only the kept listen's result; nothing at all about "gone".
    for (std::size_t i = acks; i < c.messages().size(); ++i) {
        auto const& m = c.messages()[i];
        EXPECT_FALSE(is_response_to(m, "gone")) << m;
        EXPECT_NE(subscription_id_of(m), "gone") << m;
    }
    auto const kept = result_of(c.response("kept"));
    EXPECT_EQ(kept.at("resultType"), "complete");
    EXPECT_EQ(kept.at("_meta").at(key_subscription_id), "kept");
    c.expect_schema_valid();
}

// DIGEST §7 "Server, graceful": end of input ends each open listen with {resultType:"complete",
// _meta:{subscriptionId}}.
TEST(StdioListen, EndOfInputEndsOpenListensWithCompleteResult) {
    stdio_client c;
    c.send(modern_request(41, "subscriptions/listen",
                          listen_params({{"resourcesListChanged", true}, {"toolsListChanged", true}})));
    ASSERT_TRUE(c.wait_for([](json::value const& m) { return subscription_id_of(m) == 41; }));
    EXPECT_EQ(c.finish(), 0);
    auto const r = c.response(41);
    auto const result = result_of(r);
    EXPECT_EQ(result.at("resultType"), "complete");
    EXPECT_EQ(result.at("_meta").at(key_subscription_id), 41);
    expect_modern_result(r, false); // and serverInfo, like every modern result (ERA-POLICY)
    // The ack is the first message about 41 and the result the last.
    std::vector<json::value> about;
    for (auto const& m : c.messages())
        if (subscription_id_of(m) == 41 || is_response_to(m, 41))
            about.push_back(m);
    ASSERT_EQ(about.size(), 2u);
    EXPECT_TRUE(is_notification(about.front(), "notifications/subscriptions/acknowledged"));
    EXPECT_TRUE(is_response_to(about.back(), 41));
    c.expect_schema_valid();
}

// A listen needs its filter; a legacy session has no listen (modern-only method).
TEST(StdioListen, MalformedOrLegacyListenIsRefused) {
    stdio_client c;
    c.send(modern_request(1, "subscriptions/listen"));
    expect_error(c.response(1), -32602);
    c.send(initialize_request(2, "2025-11-25"));
    result_of(c.response(2));
    c.send(initialized_notification());
    c.send(legacy_request(3, "subscriptions/listen", listen_params({{"toolsListChanged", true}})));
    expect_error(c.response(3), -32601);
    EXPECT_EQ(c.finish(), 0);
    c.expect_schema_valid();
}

} // namespace
