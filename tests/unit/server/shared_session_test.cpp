// A legacy session served by several processes (store/session_store.hpp): a connection hands every change of
// its session to the store, a connection restored from that state serves the session without initialize,
// takes in changes made elsewhere, keeps its requests to the client apart by their id prefix, and stays quiet
// on server events while another process delivers them.
#include <duet/server/server.hpp>
#include <duet/server/session_state.hpp>

#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "unit/server/harness.hpp"
#include "unit/server/test_server.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

namespace json = boost::json;
using namespace duet::test;
using duet::protocol::log_level;
using duet::server::server;
using duet::server::session_state;

session_state stored_session() {
    return session_state{.version = duet::protocol::version::v2025_06_18,
                         .client_capabilities = {{"roots", json::object{}}},
                         .client_info = {{"name", "c"}, {"version", "1"}},
                         .initialized = true,
                         .log_level = log_level::warning,
                         .subscriptions = {"test://doc", "test://items/7"}};
}

TEST(SessionState, RoundTripsThroughItsJsonText) {
    auto const s = stored_session();
    auto const back = duet::server::session_state_from_json(duet::server::to_json_text(s));
    ASSERT_TRUE(back.has_value()) << back.error();
    EXPECT_EQ(*back, s);
}

TEST(SessionState, ATextOfAnotherShapeIsRefusedInWords) {
    for (char const* text : {"", "[]", "{}", R"({"version":"1999-01-01"})",
                             R"({"version":"2025-06-18","capabilities":{},"clientInfo":{},"initialized":true,
                                 "logLevel":"loud","subscriptions":[]})",
                             R"({"version":"2025-06-18","capabilities":{},"clientInfo":{},"initialized":true,
                                 "logLevel":"info","subscriptions":[3]})"}) {
        auto const r = duet::server::session_state_from_json(text);
        ASSERT_FALSE(r.has_value()) << text;
        EXPECT_NE(r.error().find("a stored session that cannot be read"), std::string::npos) << r.error();
    }
}

TEST(SharedSession, EveryChangeOfTheSessionIsHandedToTheStore) {
    server srv(test_options());
    add_test_features(srv);
    std::vector<session_state> seen;
    harness h(srv, {.on_session_change = [&](session_state const& s) {
                  seen.push_back(s);
              }});
    h.send(initialize_request(1, "2025-06-18", {{"roots", json::object{}}}));
    h.response(1);
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen.back().version, duet::protocol::version::v2025_06_18);
    EXPECT_EQ(seen.back().client_capabilities, (json::object{{"roots", json::object{}}}));
    EXPECT_FALSE(seen.back().initialized);

    h.send(initialized_notification());
    h.send(legacy_request(2, "logging/setLevel", {{"level", "error"}}));
    h.response(2);
    h.send(legacy_request(3, "resources/subscribe", {{"uri", "test://doc"}}));
    h.response(3);
    h.send(legacy_request(4, "tools/list")); // changes nothing
    h.response(4);
    ASSERT_EQ(seen.size(), 4u);
    EXPECT_TRUE(seen[1].initialized);
    EXPECT_EQ(seen[2].log_level, log_level::error);
    EXPECT_EQ(seen[3].subscriptions, (std::set<std::string>{"test://doc"}));
    // A refused setLevel changes nothing, and says nothing to the store.
    h.send(legacy_request(5, "logging/setLevel", {{"level", "loud"}}));
    EXPECT_EQ(error_code(h.response(5)), -32602);
    EXPECT_EQ(seen.size(), 4u);
}

TEST(SharedSession, ARestoredSessionIsServedWithoutInitialize) {
    server srv(test_options());
    add_test_features(srv);
    harness h(srv);
    h.restore_session(stored_session());
    EXPECT_EQ(h.connection().legacy_version(), duet::protocol::version::v2025_06_18);
    h.send(legacy_request(1, "tools/call", call_params("echo", {{"text", "elsewhere"}})));
    auto const r = h.response(1);
    EXPECT_EQ(json::serialize(r).find("elsewhere") != std::string::npos, true) << r;
    // Its subscriptions came with it: an update of test://doc reaches it.
    srv.notify_resource_updated("test://doc");
    ASSERT_TRUE(h.wait_for(
        [](json::value const& m) { return is_notification(m, "notifications/resources/updated"); }));
}

TEST(SharedSession, ChangesMadeElsewhereAreTakenIn) {
    server srv(test_options());
    add_test_features(srv);
    harness h(srv);
    auto s = stored_session();
    h.restore_session(s);
    s.subscriptions.clear();
    h.connection().refresh_session(s);
    srv.notify_resource_updated("test://doc");
    h.send(legacy_request(1, "ping"));
    h.response(1); // a barrier: the event came before it
    for (auto const& m : h.messages())
        EXPECT_FALSE(is_notification(m, "notifications/resources/updated")) << m;
}

TEST(SharedSession, AMutedSessionHearsNoServerEventsButItsListensDo) {
    server srv(test_options());
    add_test_features(srv);
    harness h(srv);
    h.restore_session(stored_session());
    h.connection().deliver_session_events(false);
    h.send(modern_request("L", "subscriptions/listen",
                          {{"notifications", {{"resourceSubscriptions", json::array{"test://doc"}}}}}));
    ASSERT_TRUE(h.wait_for(
        [](json::value const& m) { return is_notification(m, "notifications/subscriptions/acknowledged"); }));
    srv.notify_resource_updated("test://doc");
    auto const at = h.wait_for(
        [](json::value const& m) { return is_notification(m, "notifications/resources/updated"); });
    ASSERT_TRUE(at);
    EXPECT_EQ(subscription_id_of(h.messages()[*at]), "L"); // the listen's, not the session's
    h.send(legacy_request(1, "ping"));
    h.response(1);
    std::size_t updates = 0;
    for (auto const& m : h.messages())
        updates += is_notification(m, "notifications/resources/updated");
    EXPECT_EQ(updates, 1u);
}

TEST(SharedSession, RequestsToTheClientCarryTheProcessPrefixAndItsAnswerResolvesThem) {
    server srv(test_options());
    add_roots_asking_tool(srv);
    harness h(srv, {.client_request_id_prefix = "p7"});
    h.restore_session(stored_session());
    h.send(legacy_request(1, "tools/call", call_params("ask")));
    auto const at = h.wait_for([](json::value const& m) { return is_server_request(m, "roots/list"); });
    ASSERT_TRUE(at);
    auto const id = h.messages()[*at].at("id");
    ASSERT_TRUE(id.is_string()) << id;
    EXPECT_TRUE(std::string(id.get_string()).starts_with("p7-")) << id;
    h.send(client_response(id, {{"roots", json::array{}}}));
    auto const r = result_of(h.response(1));
    EXPECT_FALSE(is_error_result(r)) << json::value(r);
}

} // namespace
