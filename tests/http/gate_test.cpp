// The request gate (http_options::request_gate): the server asks it about every JSON-RPC request of a POST
// once the caller is authenticated, and carries out its refusal (its status, Retry-After of at least a
// second, its error under the request's id) without knowing why. Pinned: what the gate is shown (method,
// params, the TCP peer's address, the verified caller), that notifications and responses are never shown to
// it, and that one refused request of a batch refuses the whole batch before any of it runs.
#include <duet/server/content.hpp>
#include <duet/transport/http_server.hpp>

#include "http/mcp_http.hpp"
#include "http/raw_socket.hpp"
#include "http/servers.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"

#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {
namespace gate_suite {

namespace json = boost::json;
using namespace duet;
using namespace duet::test;
using namespace duet::test::http;
using namespace std::chrono_literals;

// What the gate was shown of one request, copied (gate_facts are views valid for the call only).
struct shown_request {
    std::string method;
    json::object params;
    std::string peer;
    bool had_caller = false;
    std::string subject; ///< the verified token's, when there was one
};

// Every request the gate was asked about, from any I/O thread.
class gate_log {
public:
    void record(transport::gate_facts const& f) {
        shown_request r{.method = std::string(f.method),
                        .params = f.params ? *f.params : json::object{},
                        .peer = std::string(f.peer_address),
                        .had_caller = f.caller != nullptr};
        if (f.caller && f.caller->token)
            r.subject = f.caller->token->subject;
        EXPECT_NE(f.params, nullptr) << f.method;
        std::lock_guard lock(mutex_);
        shown_.push_back(std::move(r));
    }
    [[nodiscard]] std::vector<shown_request> shown() const {
        std::lock_guard lock(mutex_);
        return shown_;
    }
    [[nodiscard]] std::vector<std::string> methods() const {
        std::vector<std::string> out;
        for (auto const& r : shown())
            out.push_back(r.method);
        return out;
    }

private:
    mutable std::mutex mutex_;
    std::vector<shown_request> shown_;
};

transport::gate_refusal gate_rate_limited(std::chrono::seconds retry_after = 7s, unsigned status = 429) {
    return transport::gate_refusal{
        .http_status = status,
        .retry_after = retry_after,
        .error = {.code = -32000, .message = "Rate limited", .data = json::object{{"by", "test gate"}}}};
}

// A gate that records what it is shown and refuses (with `refusal`) what `refuse` says.
std::function<std::optional<transport::gate_refusal>(transport::gate_facts const&)>
gate_recording(std::shared_ptr<gate_log> log, std::function<bool(transport::gate_facts const&)> refuse,
               transport::gate_refusal refusal = gate_rate_limited()) {
    return [log = std::move(log), refuse = std::move(refuse), refusal = std::move(refusal)](
               transport::gate_facts const& f) -> std::optional<transport::gate_refusal> {
        log->record(f);
        if (refuse(f))
            return refusal;
        return std::nullopt;
    };
}

bool gate_is_method(transport::gate_facts const& f, std::string_view method) {
    return f.method == method;
}

// A tools/call of the tool named `tool`.
bool gate_is_call_of(transport::gate_facts const& f, std::string_view tool) {
    auto const* name = f.params->if_contains("name");
    return f.method == "tools/call" && name && name->is_string() && name->get_string() == tool;
}

// A request refused by the test gate: its status, Retry-After, and the gate's error under `id`.
void gate_expect_refused(reply const& r, json::value const& id, std::string_view retry_after = "7",
                         unsigned status = 429) {
    EXPECT_EQ(r.status, status) << r.body;
    EXPECT_EQ(r.header("Retry-After").value_or(""), retry_after);
    auto const body = r.json();
    EXPECT_TRUE(is_response_to(body, id)) << r.body;
    EXPECT_EQ(code_of(body), -32000) << r.body;
    auto const* error = body.is_object() ? body.get_object().if_contains("error") : nullptr;
    ASSERT_TRUE(error && error->is_object()) << r.body;
    EXPECT_EQ(error->get_object().at("message"), "Rate limited");
    EXPECT_EQ(error->get_object().at("data"), (json::object{{"by", "test gate"}}));
}

TEST(HttpGate, ARefusedToolsCallIs429WithRetryAfterAndItsIdWhileOtherMethodsPass) {
    auto log = std::make_shared<gate_log>();
    transport::http_options o;
    o.request_gate = gate_recording(log, [](auto const& f) { return gate_is_method(f, "tools/call"); });
    inproc_server s(o);
    mcp_http c(s.ep());
    auto const refused =
        c.post(modern_request("call-1", "tools/call", call_params("echo", {{"text", "hi"}})));
    gate_expect_refused(refused, "call-1");
    auto const listed = c.post(modern_request(2, "tools/list"));
    EXPECT_EQ(listed.status, 200u) << listed.body;
    EXPECT_TRUE(is_response_to(listed.json(), 2)) << listed.body;
    EXPECT_EQ(log->methods(), (std::vector<std::string>{"tools/call", "tools/list"}));
    c.expect_schema_valid();
}

TEST(HttpGate, TheRefusalsStatusIsCarriedAndRetryAfterIsAtLeastOneSecond) {
    auto log = std::make_shared<gate_log>();
    transport::http_options o;
    o.request_gate = gate_recording(
        log, [](auto const&) { return true; }, gate_rate_limited(0s, 503));
    inproc_server s(o);
    mcp_http c(s.ep());
    auto const refused = c.post(modern_request(1, "tools/list"));
    gate_expect_refused(refused, 1, "1", 503);
}

// Without a gate nothing is asked; the option's default is an empty function.
TEST(HttpGate, WithoutAGateEveryRequestPasses) {
    transport::http_options const o;
    EXPECT_FALSE(o.request_gate);
    inproc_server s(o);
    mcp_http c(s.ep());
    auto const r = c.post(modern_request(1, "tools/call", call_params("echo", {{"text", "hi"}})));
    EXPECT_EQ(r.status, 200u) << r.body;
}

TEST(HttpGate, TheGateSeesTheMethodParamsPeerAddressAndVerifiedCaller) {
    auto log = std::make_shared<gate_log>();
    transport::http_options o;
    o.bearer_token = "s3cret";
    o.request_gate = gate_recording(log, [](auto const&) { return false; });
    inproc_server s(o);
    mcp_http c(s.ep());
    c.set_default_headers({{"Authorization", "Bearer s3cret"}});
    auto const called = c.post(modern_request(1, "tools/call", call_params("echo", {{"text", "hi"}})));
    EXPECT_EQ(called.status, 200u) << called.body;
    // The same call from another loopback address: the gate is shown the peer the connection came from.
    raw_socket other(s.ep().port, 0, "127.0.0.2");
    ASSERT_TRUE(other.connected());
    auto const call = modern_request(2, "tools/call", call_params("echo", {{"text", "there"}}));
    ASSERT_TRUE(other.send(raw_request(s.ep(), c.spec_for(call))));
    auto const answer = other.read_response();
    EXPECT_TRUE(answer.starts_with("HTTP/1.1 200")) << answer;

    auto const shown = log->shown();
    ASSERT_EQ(shown.size(), 2u);
    EXPECT_EQ(shown[0].method, "tools/call");
    EXPECT_EQ(shown[0].params.at("name"), "echo");
    EXPECT_EQ(shown[0].params.at("arguments"), (json::object{{"text", "hi"}}));
    EXPECT_EQ(shown[0].peer, "127.0.0.1");
    EXPECT_TRUE(shown[0].had_caller);
    EXPECT_EQ(shown[0].subject, "static-token"); // the subject the static token verifier gives
    EXPECT_EQ(shown[1].params.at("arguments"), (json::object{{"text", "there"}}));
    EXPECT_EQ(shown[1].peer, "127.0.0.2");
    EXPECT_EQ(shown[1].subject, "static-token");
}

// A request the token does not pass is answered 401 before the gate is asked: the gate sees only callers
// authentication established.
TEST(HttpGate, AnUnauthenticatedRequestIsRefusedBeforeTheGateIsAsked) {
    auto log = std::make_shared<gate_log>();
    transport::http_options o;
    o.bearer_token = "s3cret";
    o.request_gate = gate_recording(log, [](auto const&) { return false; });
    inproc_server s(o);
    mcp_http c(s.ep());
    EXPECT_EQ(c.post(modern_request(1, "tools/list")).status, 401u);
    EXPECT_EQ(c.post(modern_request(2, "tools/list"), {{"Authorization", "Bearer guess"}}).status, 401u);
    EXPECT_TRUE(log->shown().empty());
}

TEST(HttpGate, WithoutAuthenticationTheCallerIsNullAndMissingParamsAreAnEmptyObject) {
    auto log = std::make_shared<gate_log>();
    transport::http_options o;
    o.request_gate = gate_recording(log, [](auto const&) { return false; });
    inproc_server s(o);
    mcp_http c(s.ep());
    c.initialize("2025-11-25");
    auto const pinged = c.post(legacy_request(1, "ping"));
    EXPECT_EQ(pinged.status, 200u) << pinged.body;
    auto const shown = log->shown();
    ASSERT_EQ(shown.size(), 2u);
    EXPECT_EQ(shown[0].method, "initialize");
    EXPECT_FALSE(shown[0].had_caller);
    EXPECT_EQ(shown[1].method, "ping");
    EXPECT_TRUE(shown[1].params.empty());
    EXPECT_EQ(shown[1].peer, "127.0.0.1");
    c.expect_schema_valid();
}

TEST(HttpGate, NotificationsAndResponsesAreNeverGated) {
    auto log = std::make_shared<gate_log>();
    transport::http_options o;
    o.request_gate = gate_recording(log, [](auto const& f) { return !gate_is_method(f, "initialize"); });
    inproc_server s(o);
    mcp_http c(s.ep());
    c.initialize("2025-11-25"); // its notifications/initialized is answered 202 (checked there)
    auto const cancelled = c.post(cancelled_notification(99));
    EXPECT_EQ(cancelled.status, 202u) << cancelled.body;
    auto const answered = c.post(client_response("server-1", {}));
    EXPECT_EQ(answered.status, 202u) << answered.body;
    EXPECT_EQ(log->methods(), (std::vector<std::string>{"initialize"}));
    // The gate does refuse this session's requests.
    gate_expect_refused(c.post(legacy_request("p", "ping")), "p");
}

// 2025-03-26 is the one version with batches. The first batch holds a request the gate refuses: none of it
// runs (the counting tool is not called) and the whole batch is answered with the refusal under that
// request's id.
TEST(HttpGate, ABatchWithOneRefusedRequestIsRefusedWhole) {
    auto log = std::make_shared<gate_log>();
    transport::http_options o;
    o.request_gate = gate_recording(log, [](auto const& f) { return gate_is_call_of(f, "echo"); });
    inproc_server s(o);
    auto calls = std::make_shared<std::atomic<int>>(0);
    s.srv().add_tool(server::tool{.name = "count", .run_plain = server::plain_run::inline_on_io},
                     [calls](json::object const&, server::request_context&) {
                         ++*calls;
                         return server::tool_result::text("counted");
                     });
    mcp_http c(s.ep());
    c.initialize("2025-03-26");

    auto const refused =
        c.post(json::array{legacy_request(1, "tools/call", call_params("count")),
                           notification("notifications/progress", {{"progressToken", "t"}, {"progress", 1}}),
                           legacy_request(2, "tools/call", call_params("echo", {{"text", "x"}}))});
    gate_expect_refused(refused, 2);
    EXPECT_EQ(calls->load(), 0);

    auto const served =
        c.post(json::array{legacy_request(3, "tools/call", call_params("count")), legacy_request(4, "ping")});
    EXPECT_EQ(served.status, 200u) << served.body;
    auto const answers = served.json();
    ASSERT_TRUE(answers.is_array()) << served.body;
    ASSERT_EQ(answers.get_array().size(), 2u) << served.body;
    EXPECT_TRUE(is_response_to(answers.get_array()[0], 3)) << served.body;
    EXPECT_TRUE(is_response_to(answers.get_array()[1], 4)) << served.body;
    EXPECT_EQ(calls->load(), 1);
    EXPECT_EQ(log->methods(),
              (std::vector<std::string>{"initialize", "tools/call", "tools/call", "tools/call", "ping"}));
}

} // namespace gate_suite
} // namespace
