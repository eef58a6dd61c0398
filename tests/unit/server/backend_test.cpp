// A server serving from a backend (server::set_backend: a gateway's upstream): the backend answers lists,
// calls and reads in whatever shape it has, the server keeps admission, sessions, listens and input rounds
// and shapes every result for its era and version; capabilities are the backend's; the backend hears of a
// resource's first watcher and its last, however the watch ends.
#include <duet/server/connection.hpp>
#include <duet/server/server.hpp>

#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "unit/server/harness.hpp"
#include "unit/server/mrtr_support.hpp"
#include "unit/server/test_server.hpp"

#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace json = boost::json;
namespace protocol = duet::protocol;
using namespace duet::test;
using duet::protocol::method_id;
using duet::server::answer_result;
using duet::server::request_context;
using duet::server::server;

// Answers like an upstream would: results in the newest shape with fields older versions lack, its own cache
// hints, errors of its own, and a tool that asks the client.
class fake_backend : public duet::server::backend {
public:
    explicit fake_backend(protocol::server_capabilities caps) : caps_(std::move(caps)) {}

    [[nodiscard]] protocol::server_capabilities capabilities() const override {
        std::lock_guard lock(mutex_);
        return caps_;
    }
    void set_capabilities(protocol::server_capabilities caps) {
        std::lock_guard lock(mutex_);
        caps_ = std::move(caps);
    }

    boost::asio::awaitable<answer_result> async_answer(method_id method, json::object const& params,
                                                       request_context& ctx) override {
        {
            std::lock_guard lock(mutex_);
            served_.push_back(method);
        }
        switch (method) {
        case method_id::tools_list:
            co_return duet::server::method_answer{
                .result = {{"tools", json::array{{{"name", "upstream_tool"},
                                                  {"title", "Upstream tool"},
                                                  {"inputSchema", {{"type", "object"}}}}}}},
                .hints = {.ttl_ms = 5000, .scope = protocol::cache_scope::public_cache}};
        case method_id::tools_call: {
            auto const& name = params.at("name").as_string();
            if (name == "whoami") {
                auto const* who = static_cast<std::string const*>(ctx.session_data().get());
                co_return duet::server::method_answer{
                    .result = {
                        {"content", json::array{{{"type", "text"}, {"text", who ? *who : "(none)"}}}}}};
            }
            if (name == "ask_both") {
                std::vector<duet::server::input_request> qs{
                    {.key = "name", .method = "elicitation/create", .params = form("Your name?", "name")},
                    {.key = "roots", .method = "roots/list", .params = nullptr}};
                auto answers = co_await ctx.async_inputs(std::move(qs));
                json::object r{{"content", json::array{{{"type", "text"},
                                                        {"text", outcome(answers.at(0), "name") + "," +
                                                                     outcome(answers.at(1), "")}}}}};
                co_return duet::server::method_answer{.result = std::move(r)};
            }
            if (name == "refuse")
                co_return protocol::error_object{-32050, "upstream says no", json::object{{"why", "test"}}};
            if (name == "ask") {
                duet::server::input_request q{
                    .key = "q1", .method = "elicitation/create", .params = form("Your name?", "name")};
                auto answer = co_await ctx.async_input(std::move(q));
                json::object r{
                    {"content", json::array{{{"type", "text"}, {"text", outcome(answer, "name")}}}}};
                co_return duet::server::method_answer{.result = std::move(r)};
            }
            co_return duet::server::method_answer{
                .result = {
                    {"content", json::array{{{"type", "text"}, {"text", "called " + std::string(name)}}}},
                    {"structuredContent", {{"tool", name}}}}};
        }
        case method_id::resources_read:
            co_return duet::server::method_answer{
                .result = {
                    {"contents", json::array{{{"uri", params.at("uri")}, {"text", "upstream text"}}}}}};
        default:
            co_return protocol::method_not_found(protocol::info(method).name, "not offered by this backend");
        }
    }

    duet::server::session_admission on_session(protocol::version version, json::object const& caps,
                                               json::object const& info) override {
        auto data = std::make_shared<std::string>(std::string(info.at("name").as_string()) + " at " +
                                                  std::string(protocol::to_string(version)) +
                                                  (caps.contains("elicitation") ? " asking" : ""));
        std::lock_guard lock(mutex_);
        sessions_.push_back(data);
        return data;
    }
    /// How many of the sessions' data are still held.
    std::size_t sessions_alive() const {
        std::lock_guard lock(mutex_);
        return std::count_if(sessions_.begin(), sessions_.end(), [](auto const& w) { return !w.expired(); });
    }

    void on_watch(std::string const& uri, bool watched) override {
        std::lock_guard lock(mutex_);
        watches_.emplace_back(uri, watched);
    }

    std::vector<method_id> served() const {
        std::lock_guard lock(mutex_);
        return served_;
    }
    std::vector<std::pair<std::string, bool>> watches() const {
        std::lock_guard lock(mutex_);
        return watches_;
    }

private:
    mutable std::mutex mutex_;
    protocol::server_capabilities caps_;
    std::vector<method_id> served_;
    std::vector<std::pair<std::string, bool>> watches_;
    std::vector<std::weak_ptr<std::string>> sessions_;
};

protocol::server_capabilities tools_and_subscribable_resources() {
    return {.tools = true, .tools_list_changed = true, .resources = true, .resources_subscribe = true};
}

struct backed_server {
    std::shared_ptr<fake_backend> backend =
        std::make_shared<fake_backend>(tools_and_subscribable_resources());
    server srv{test_options()};
    backed_server() {
        // A registered tool the backend does not know: with a backend set, the registries are ignored.
        add_test_features(srv);
        srv.set_backend(backend);
    }
};

using watch = std::pair<std::string, bool>;

void open_legacy_session(harness& h, std::string_view version, json::object caps = {},
                         std::string const& id = "init") {
    h.send(initialize_request(json::string(id), version, std::move(caps)));
    h.response(json::string(id));
    h.send(initialized_notification());
}

TEST(ServerBackend, ModernListIsTheBackendsShapedModernWithItsCacheHints) {
    backed_server s;
    harness h(s.srv);
    h.send(modern_request(1, "tools/list"));
    auto const response = h.response(1);
    expect_modern_result(response, /*cacheable=*/true);
    auto const r = result_of(response);
    ASSERT_EQ(r.at("tools").as_array().size(), 1u) << response;
    EXPECT_EQ(r.at("tools").at(0).at("name"), "upstream_tool");
    EXPECT_EQ(r.at("ttlMs"), 5000);
    EXPECT_EQ(r.at("cacheScope"), "public");
    EXPECT_EQ(s.backend->served(), std::vector<method_id>{method_id::tools_list});
    h.expect_schema_valid();
}

TEST(ServerBackend, LegacyListIsStrippedToTheNegotiatedVersion) {
    backed_server s;
    harness h(s.srv);
    open_legacy_session(h, "2025-03-26");
    h.send(legacy_request(1, "tools/list"));
    auto const response = h.response(1);
    expect_legacy_result(response);
    auto const tool = result_of(response).at("tools").at(0).as_object();
    EXPECT_EQ(tool.at("name"), "upstream_tool");
    EXPECT_FALSE(tool.contains("title")) << "2025-03-26 has no tool titles: " << response;
}

TEST(ServerBackend, CallsAndReadsAreForwardedWithTheirParams) {
    backed_server s;
    harness h(s.srv);
    h.send(modern_request(1, "tools/call", call_params("anything", {{"x", 1}})));
    auto const call = result_of(h.response(1));
    EXPECT_EQ(first_text(call), "called anything");
    EXPECT_EQ(call.at("resultType"), "complete");
    h.send(modern_request(2, "resources/read", {{"uri", "up://doc"}}));
    auto const read = h.response(2);
    expect_modern_result(read, /*cacheable=*/true);
    EXPECT_EQ(result_of(read).at("contents").at(0).at("uri"), "up://doc");
    EXPECT_EQ(s.backend->served(),
              (std::vector<method_id>{method_id::tools_call, method_id::resources_read}));
    h.expect_schema_valid();
}

TEST(ServerBackend, LegacyCallResultLosesWhatItsVersionLacks) {
    backed_server s;
    harness h(s.srv);
    open_legacy_session(h, "2025-03-26");
    h.send(legacy_request(1, "tools/call", call_params("anything")));
    auto const response = h.response(1);
    expect_legacy_result(response);
    EXPECT_FALSE(result_of(response).contains("structuredContent")) << response;
}

TEST(ServerBackend, CapabilitiesAreTheBackendsNotTheRegistries) {
    backed_server s;
    harness h(s.srv);
    h.send(modern_request(1, "server/discover"));
    auto const discover = result_of(h.response(1));
    EXPECT_EQ(discover.at("capabilities"),
              tools_and_subscribable_resources().to_json(protocol::latest_modern_version));
    h.send(initialize_request(2, "2025-11-25"));
    EXPECT_EQ(result_of(h.response(2)).at("capabilities"),
              tools_and_subscribable_resources().to_json(protocol::version::v2025_11_25));
    // Prompts are registered but the backend offers none: not advertised, so not served, not forwarded.
    h.send(modern_request(3, "prompts/list"));
    expect_error(h.response(3), -32601);
    EXPECT_TRUE(s.backend->served().empty());
}

TEST(ServerBackend, RefreshTakesTheBackendsNewCapabilities) {
    backed_server s;
    auto caps = tools_and_subscribable_resources();
    caps.prompts = true;
    s.backend->set_capabilities(caps);
    harness h(s.srv);
    h.send(modern_request(1, "server/discover"));
    EXPECT_FALSE(result_of(h.response(1)).at("capabilities").as_object().contains("prompts"));
    s.srv.refresh_backend();
    h.send(modern_request(2, "server/discover"));
    EXPECT_TRUE(result_of(h.response(2)).at("capabilities").as_object().contains("prompts"));
}

TEST(ServerBackend, BackendErrorsReachTheClientVerbatim) {
    backed_server s;
    harness h(s.srv);
    h.send(modern_request(1, "tools/call", call_params("refuse")));
    auto const e = error_of(h.response(1));
    EXPECT_EQ(e,
              (json::object{{"code", -32050}, {"message", "upstream says no"}, {"data", {{"why", "test"}}}}));
}

TEST(ServerBackend, BackendAskingAModernClientGetsAnInputRound) {
    backed_server s;
    harness h(s.srv);
    auto const caps = all_caps();
    h.send(modern_request(1, "tools/call", call_params("ask"), caps));
    auto const first = expect_input_required(h.response(1));
    EXPECT_EQ(keys_of(first), std::vector<std::string>{"q1"});
    h.send(modern_request(2, "tools/call",
                          retry(call_params("ask"), {{"q1", accepted("name", "Ada")}}, first), caps));
    auto const second = h.response(2);
    expect_modern_result(second, /*cacheable=*/false);
    EXPECT_EQ(first_text(result_of(second)), "Ada");
    h.expect_schema_valid();
}

TEST(ServerBackend, BackendAskingALegacyClientSendsARealRequest) {
    backed_server s;
    harness h(s.srv);
    open_legacy_session(h, "2025-11-25", all_caps());
    h.send(legacy_request(1, "tools/call", call_params("ask")));
    auto const i =
        h.wait_for([](json::value const& m) { return is_server_request(m, "elicitation/create"); });
    ASSERT_TRUE(i);
    h.send(client_response(h.messages()[*i].at("id"), accepted("name", "Grace")));
    auto const response = h.response(1);
    expect_legacy_result(response);
    EXPECT_EQ(first_text(result_of(response)), "Grace");
    h.expect_schema_valid();
}

// A legacy session gets every question of a round before it answers any, as a modern client would: a
// gateway in front can turn them into one input_required round.
TEST(ServerBackend, LegacyQuestionsAskedTogetherAreSentTogether) {
    backed_server s;
    harness h(s.srv);
    open_legacy_session(h, "2025-11-25", all_caps());
    h.send(legacy_request(1, "tools/call", call_params("ask_both")));
    auto const e =
        h.wait_for([](json::value const& m) { return is_server_request(m, "elicitation/create"); });
    auto const r = h.wait_for([](json::value const& m) { return is_server_request(m, "roots/list"); });
    ASSERT_TRUE(e && r);
    h.send(client_response(h.messages()[*r].at("id"), roots_answer()));
    h.send(client_response(h.messages()[*e].at("id"), accepted("name", "Ada")));
    EXPECT_EQ(first_text(result_of(h.response(1))), "Ada,2 roots");
    h.expect_schema_valid();
}

TEST(ServerBackend, NotifyListChangedReachesListens) {
    backed_server s;
    harness h(s.srv);
    h.send(modern_request("L", "subscriptions/listen", {{"notifications", {{"toolsListChanged", true}}}}));
    ASSERT_TRUE(h.wait_for([](json::value const& m) { return subscription_id_of(m) == "L"; }));
    s.srv.notify_list_changed(duet::server::server_event::kind::tools_changed);
    auto const i = h.wait_for(
        [](json::value const& m) { return is_notification(m, "notifications/tools/list_changed"); });
    ASSERT_TRUE(i);
    EXPECT_EQ(subscription_id_of(h.messages()[*i]), "L");
}

TEST(ServerBackend, EachLegacySessionCarriesWhatTheBackendKeepsForIt) {
    backed_server s;
    {
        harness a(s.srv);
        harness b(s.srv);
        open_legacy_session(a, "2025-11-25", all_caps());
        open_legacy_session(b, "2025-06-18");
        a.send(legacy_request(1, "tools/call", call_params("whoami")));
        b.send(legacy_request(1, "tools/call", call_params("whoami")));
        EXPECT_EQ(first_text(result_of(a.response(1))), "duet-tests at 2025-11-25 asking");
        EXPECT_EQ(first_text(result_of(b.response(1))), "duet-tests at 2025-06-18");
        // Modern requests belong to no session, even on a connection that has one.
        a.send(modern_request(2, "tools/call", call_params("whoami")));
        EXPECT_EQ(first_text(result_of(a.response(2))), "(none)");
        EXPECT_EQ(s.backend->sessions_alive(), 2u);
        // A renegotiating initialize is a new session: the old one's data goes.
        open_legacy_session(b, "2025-11-25", {}, "again");
        EXPECT_EQ(s.backend->sessions_alive(), 2u);
    }
    EXPECT_EQ(s.backend->sessions_alive(), 0u);
}

// ---- resource watches ------------------------------------------------------------------------------------

TEST(ServerBackendWatch, FirstSubscriberAndLastUnsubscriberAreTheOnlyEdges) {
    backed_server s;
    harness a(s.srv);
    harness b(s.srv);
    open_legacy_session(a, "2025-11-25");
    open_legacy_session(b, "2025-11-25");
    a.send(legacy_request(1, "resources/subscribe", {{"uri", "up://r"}}));
    a.response(1);
    a.send(legacy_request(2, "resources/subscribe", {{"uri", "up://r"}})); // again: still one watcher
    a.response(2);
    b.send(legacy_request(1, "resources/subscribe", {{"uri", "up://r"}}));
    b.response(1);
    EXPECT_EQ(s.backend->watches(), (std::vector<watch>{{"up://r", true}}));
    a.send(legacy_request(3, "resources/unsubscribe", {{"uri", "up://r"}}));
    a.response(3);
    EXPECT_EQ(s.backend->watches(), (std::vector<watch>{{"up://r", true}}));
    b.send(legacy_request(2, "resources/unsubscribe", {{"uri", "up://r"}}));
    b.response(2);
    EXPECT_EQ(s.backend->watches(), (std::vector<watch>{{"up://r", true}, {"up://r", false}}));
}

TEST(ServerBackendWatch, UnsubscribingWhatWasNeverWatchedIsNoEdge) {
    backed_server s;
    harness h(s.srv);
    open_legacy_session(h, "2025-11-25");
    h.send(legacy_request(1, "resources/unsubscribe", {{"uri", "up://never"}}));
    h.response(1);
    EXPECT_TRUE(s.backend->watches().empty());
}

TEST(ServerBackendWatch, SessionEndReleasesItsSubscriptions) {
    backed_server s;
    {
        harness h(s.srv);
        open_legacy_session(h, "2025-11-25");
        h.send(legacy_request(1, "resources/subscribe", {{"uri", "up://a"}}));
        h.response(1);
        h.send(legacy_request(2, "resources/subscribe", {{"uri", "up://b"}}));
        h.response(2);
        EXPECT_EQ(s.backend->watches().size(), 2u);
    }
    EXPECT_EQ(s.backend->watches(),
              (std::vector<watch>{{"up://a", true}, {"up://b", true}, {"up://a", false}, {"up://b", false}}));
}

TEST(ServerBackendWatch, ReinitializeReleasesTheOldSessionsSubscriptions) {
    backed_server s;
    harness h(s.srv);
    open_legacy_session(h, "2025-11-25");
    h.send(legacy_request(1, "resources/subscribe", {{"uri", "up://a"}}));
    h.response(1);
    open_legacy_session(h, "2025-06-18", {}, "again");
    EXPECT_EQ(s.backend->watches(), (std::vector<watch>{{"up://a", true}, {"up://a", false}}));
}

TEST(ServerBackendWatch, ListenWatchesUntilCancelled) {
    backed_server s;
    harness h(s.srv);
    h.send(modern_request("L", "subscriptions/listen",
                          {{"notifications", {{"resourceSubscriptions", json::array{"up://x", "up://y"}}}}}));
    ASSERT_TRUE(h.wait_for([](json::value const& m) { return subscription_id_of(m) == "L"; }));
    EXPECT_EQ(s.backend->watches(), (std::vector<watch>{{"up://x", true}, {"up://y", true}}));
    h.send(cancelled_notification("L"));
    h.send(modern_request(1, "server/discover")); // a barrier: the cancellation has been handled
    h.response(1);
    EXPECT_EQ(s.backend->watches(),
              (std::vector<watch>{{"up://x", true}, {"up://y", true}, {"up://x", false}, {"up://y", false}}));
}

TEST(ServerBackendWatch, ListenWatchesUntilTheConnectionEnds) {
    backed_server s;
    harness h(s.srv);
    h.send(modern_request("L", "subscriptions/listen",
                          {{"notifications", {{"resourceSubscriptions", json::array{"up://x"}}}}}));
    ASSERT_TRUE(h.wait_for([](json::value const& m) { return subscription_id_of(m) == "L"; }));
    h.finish();
    EXPECT_EQ(s.backend->watches(), (std::vector<watch>{{"up://x", true}, {"up://x", false}}));
}

TEST(ServerBackendWatch, BackendWithoutSubscriptionsIsNeverAskedToWatch) {
    backed_server s;
    auto caps = tools_and_subscribable_resources();
    caps.resources_subscribe = false;
    s.backend->set_capabilities(caps);
    s.srv.refresh_backend();
    harness h(s.srv);
    h.send(modern_request("L", "subscriptions/listen",
                          {{"notifications", {{"resourceSubscriptions", json::array{"up://x"}}}}}));
    ASSERT_TRUE(h.wait_for([](json::value const& m) { return subscription_id_of(m) == "L"; }));
    open_legacy_session(h, "2025-11-25");
    h.send(legacy_request(1, "resources/subscribe", {{"uri", "up://x"}}));
    expect_error(h.response(1), -32601);
    EXPECT_TRUE(s.backend->watches().empty());
}

// ---- the listener list -----------------------------------------------------------------------------------

// HTTP makes a connection per modern request; the server hears of none of them ending.
TEST(ServerListeners, ListStaysBoundedAsConnectionsComeAndGo) {
    server srv(test_options());
    boost::asio::io_context io;
    for (int i = 0; i < 1000; ++i) {
        auto c = duet::server::connection::create(srv, io.get_executor(), [](std::string) {});
        c.reset();
    }
    EXPECT_LE(srv.listener_count(), 64u);
}

TEST(ServerListeners, LiveConnectionsAreKept) {
    server srv(test_options());
    boost::asio::io_context io;
    std::vector<std::shared_ptr<duet::server::connection>> live;
    for (int i = 0; i < 300; ++i) {
        live.push_back(duet::server::connection::create(srv, io.get_executor(), [](std::string) {}));
        duet::server::connection::create(srv, io.get_executor(), [](std::string) {}).reset();
    }
    EXPECT_GE(srv.listener_count(), 300u);
    EXPECT_LE(srv.listener_count(), 600u);
}

} // namespace
