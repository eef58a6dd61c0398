// Announcements through `duet gateway`, both ways: a legacy upstream's list changes and resource updates
// reach modern listens (its resources subscribed upstream once, on the listeners' behalf, and unsubscribed
// when the last listener goes); a modern upstream's listen serves a legacy session's resources/subscribe and
// list changes; and a control child that dies is started again with its watches re-established.
//
// The upstream is tests/gateway/announcing_upstream.mjs, driven through a journal file and reporting its
// subscriptions in a log file. Skipped where the pinned Node is not installed.
#include "gateway/announcing_upstream.hpp"
#include "gateway/gateway_process.hpp"
#include "http/mcp_http.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

namespace {

namespace json = boost::json;
using namespace duet::test;
using namespace duet::test::http;
using namespace duet::test::gateway;

constexpr std::string_view watched = "test://watched";
constexpr std::string_view subscription_key = "io.modelcontextprotocol/subscriptionId";

std::string const subscribe_line = "subscribe " + std::string(watched);
std::string const unsubscribe_line = "unsubscribe " + std::string(watched);

json::object listen(json::value id, json::object filter) {
    return modern_request(std::move(id), "subscriptions/listen", {{"notifications", std::move(filter)}});
}

json::object watch_filter(bool tools) {
    json::object f{{"resourceSubscriptions", json::array{json::value(watched)}}};
    if (tools)
        f["toolsListChanged"] = true;
    return f;
}

/// The next message of a stream that is a notification (nothing else may come first).
json::value next_notification(mcp_http& c, response_stream& s) {
    auto m = c.next(s);
    EXPECT_TRUE(m.is_object() && m.as_object().contains("method") && !m.as_object().contains("id")) << m;
    return m;
}

std::string method_of(json::value const& m) {
    auto const* o = m.if_object();
    auto const* method = o ? o->if_contains("method") : nullptr;
    return method && method->is_string() ? std::string(method->get_string()) : std::string();
}

void expect_tagged(json::value const& m, json::value const& id) {
    auto const* meta = m.at("params").as_object().if_contains("_meta");
    ASSERT_TRUE(meta && meta->is_object()) << m;
    EXPECT_EQ(meta->as_object().at(subscription_key), id) << m;
}

TEST(GatewayNotifications, LegacyUpstreamAnnouncementsReachModernListens) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    announcing_upstream up;
    gateway_process gw(up.upstream(false), {"--era", "legacy"});
    mcp_http c(gw.ep());

    auto first = c.open(listen("L1", watch_filter(true)));
    auto const ack1 = next_notification(c, *first);
    EXPECT_EQ(method_of(ack1), "notifications/subscriptions/acknowledged");
    EXPECT_EQ(ack1.at("params").at("notifications"), json::value(watch_filter(true))) << ack1;
    ASSERT_TRUE(up.wait_for(subscribe_line)) << up.log_text();
    auto second = c.open(listen("L2", watch_filter(false)));
    EXPECT_EQ(method_of(next_notification(c, *second)), "notifications/subscriptions/acknowledged");

    up.announce("tools");
    up.announce("updated " + std::string(watched));
    auto const changed = next_notification(c, *first);
    EXPECT_EQ(method_of(changed), "notifications/tools/list_changed");
    expect_tagged(changed, "L1");
    auto const updated = next_notification(c, *first);
    EXPECT_EQ(method_of(updated), "notifications/resources/updated");
    EXPECT_EQ(updated.at("params").at("uri"), json::value(json::string(watched)));
    expect_tagged(updated, "L1");
    auto const updated2 = next_notification(c, *second); // no list change: it did not ask for one
    EXPECT_EQ(method_of(updated2), "notifications/resources/updated") << updated2;
    expect_tagged(updated2, "L2");

    // Subscribed upstream once, for both listeners; still subscribed while one listens.
    EXPECT_EQ(up.pids_that(subscribe_line).size(), 1u) << up.log_text();
    first.reset();
    up.announce("updated " + std::string(watched));
    EXPECT_EQ(method_of(next_notification(c, *second)), "notifications/resources/updated");
    EXPECT_TRUE(up.pids_that(unsubscribe_line).empty()) << up.log_text();

    second.reset(); // the last listener goes: unsubscribed upstream
    EXPECT_TRUE(up.wait_for(unsubscribe_line)) << up.log_text();
    EXPECT_EQ(up.pids_that(unsubscribe_line), up.pids_that(subscribe_line)) << up.log_text();
    c.expect_schema_valid();
}

TEST(GatewayNotifications, ModernUpstreamListenServesALegacySession) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    announcing_upstream up;
    gateway_process gw(up.upstream(true), {"--era", "modern"});
    mcp_http c(gw.ep());
    auto const init = only_message(c.initialize("2025-11-25"));
    auto const caps = result_of(init).at("capabilities");
    auto const* subscribe = caps.at("resources").as_object().if_contains("subscribe");
    EXPECT_TRUE(subscribe && *subscribe == true) << init;
    auto const* list_changed = caps.at("tools").as_object().if_contains("listChanged");
    EXPECT_TRUE(list_changed && *list_changed == true) << init;
    auto stream = c.open_spec(stream_spec(c));
    ASSERT_EQ(stream->status(), 200u);

    auto const subscribed =
        only_message(c.post(legacy_request(1, "resources/subscribe", {{"uri", watched}})));
    expect_legacy_result(subscribed);
    ASSERT_TRUE(up.wait_for(subscribe_line)) << up.log_text(); // a listen upstream, watching the resource

    up.announce("tools");
    up.announce("updated " + std::string(watched));
    std::vector<std::string> heard;
    for (int i = 0; i < 2; ++i) {
        auto const m = next_notification(c, *stream);
        heard.push_back(method_of(m));
        auto const* params = m.as_object().if_contains("params");
        EXPECT_TRUE(!params || !params->as_object().contains("_meta"))
            << "a legacy notification is untagged: " << m;
        if (method_of(m) == "notifications/resources/updated") {
            EXPECT_EQ(m.at("params").at("uri"), json::value(json::string(watched)));
        }
    }
    std::sort(heard.begin(), heard.end());
    EXPECT_EQ(heard, (std::vector<std::string>{"notifications/resources/updated",
                                               "notifications/tools/list_changed"}));

    auto const unsubscribed =
        only_message(c.post(legacy_request(2, "resources/unsubscribe", {{"uri", watched}})));
    expect_legacy_result(unsubscribed);
    EXPECT_TRUE(up.wait_for(unsubscribe_line)) << up.log_text(); // its listen ended upstream
    c.expect_schema_valid();
}

class GatewayControlRestart : public ::testing::TestWithParam<bool> {};

// The child that carries the gateway's watches dies: it is started again, its watches made anew, and the
// modern listen downstream (never interrupted) hears the restarted server's updates.
TEST_P(GatewayControlRestart, ReestablishesTheWatchesOfAChildThatDied) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    bool const modern = GetParam();
    announcing_upstream up;
    gateway_process gw(up.upstream(modern), {"--era", modern ? "modern" : "legacy"});
    mcp_http c(gw.ep());
    auto stream = c.open(listen("L1", watch_filter(false)));
    EXPECT_EQ(method_of(next_notification(c, *stream)), "notifications/subscriptions/acknowledged");
    ASSERT_TRUE(up.wait_for(subscribe_line)) << up.log_text();
    auto const first_pid = up.pids_that(subscribe_line).front();

    ASSERT_EQ(::kill(std::stoi(first_pid), SIGKILL), 0);
    ASSERT_TRUE(up.wait_for(subscribe_line, 2)) << up.log_text() << gw.stderr_text();
    auto const second_pid = up.pids_that(subscribe_line).back();
    EXPECT_NE(second_pid, first_pid);
    EXPECT_TRUE(gw.wait_for_log("ended; connecting again")) << gw.stderr_text();

    up.announce("updated " + std::string(watched));
    auto const updated = next_notification(c, *stream);
    EXPECT_EQ(method_of(updated), "notifications/resources/updated") << updated;
    expect_tagged(updated, "L1");

    // The restarted control connection serves discovery-time needs too: calls still work.
    auto const call = only_message(c.post(modern_request(2, "tools/call", call_params("pid"))));
    EXPECT_FALSE(first_text(result_of(call)).empty()) << call;
    c.expect_schema_valid();
}

INSTANTIATE_TEST_SUITE_P(Gateway, GatewayControlRestart, ::testing::Values(false, true),
                         [](auto const& row) { return row.param ? "ModernUpstream" : "LegacyUpstream"; });

} // namespace
