// Multi round-trip requests over Streamable HTTP (DIGEST §4, §9), on the demo server plus a prompt, a
// resource template and a tool registered by the test:
//  - modern: the first POST is answered 200 with a JSON InputRequiredResult (no session minted), the retry (a
//    new id, the same params, inputResponses and the echoed requestState) completes; a hostile requestState
//    is a JSON-RPC -32602 error in a 200 response (DIGEST §9 gives other errors no status; 200 with an error
//    body is the convention), never a new question; a handler's require() is -32021 with 400, as at admission
//    (ERA-POLICY step 5);
//  - legacy: the handler's question is a real elicitation/create request on the POST's SSE stream, the
//    client's answer is POSTed back (202), and the call completes on the same stream.
// Every message the server writes is checked against the official schema of its era.
#include <duet/server/content.hpp>
#include <duet/server/definitions.hpp>

#include "http/mcp_http.hpp"
#include "http/servers.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "unit/server/mrtr_support.hpp"

#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

namespace json = boost::json;
using namespace duet::test;
using namespace duet::test::http;
using duet::server::input_request;
using duet::server::request_context;

json::object const elicitation_caps{{"elicitation", json::object{}}};

/// What the demo server lacks for these tests: a prompt and a resource template that ask, and a tool that
/// cannot go on without sampling.
void add_asking_features(duet::server::server& srv) {
    using namespace duet::server;
    add_asking_prompt_and_template(srv);
    srv.add_tool(tool{.name = "needs_sampling"},
                 [](json::object const&, request_context& ctx) -> boost::asio::awaitable<tool_result> {
                     ctx.require(duet::protocol::client_capability::sampling);
                     input_request question{"greeting", "sampling/createMessage", sampling_params()};
                     auto answer = co_await ctx.async_input(std::move(question));
                     co_return tool_result::text("sampled: " + outcome(answer, ""));
                 });
}

class HttpMrtr : public testing::Test {
protected:
    HttpMrtr() { add_asking_features(s_.srv()); }
    inproc_server s_;
};

/// A modern response carried as plain JSON: 200, application/json, no session minted.
json::value json_answer(reply const& r) {
    EXPECT_EQ(r.status, 200u) << r.body;
    EXPECT_EQ(r.header("Content-Type"), "application/json") << r.body;
    EXPECT_FALSE(r.has_header("Mcp-Session-Id")) << r.body;
    return r.json();
}

// ---- modern
// -------------------------------------------------------------------------------------------------

TEST_F(HttpMrtr, ModernToolCallRoundTrip) {
    mcp_http c(s_.ep());
    auto const params = call_params("ask_name");
    auto const first_reply = c.post(modern_request(1, "tools/call", params, elicitation_caps));
    auto const first_message = json_answer(first_reply);
    ASSERT_TRUE(is_response_to(first_message, 1)) << first_message;
    auto const first = expect_input_required(first_message);
    EXPECT_EQ(keys_of(first), std::vector<std::string>{"name"});
    EXPECT_EQ(first.at("inputRequests").at("name").at("method"), "elicitation/create");

    auto const done_reply = c.post(modern_request(
        2, "tools/call", retry(params, {{"name", accepted("name", "Ada")}}, first), elicitation_caps));
    auto const done = json_answer(done_reply);
    ASSERT_TRUE(is_response_to(done, 2)) << done;
    expect_modern_result(done, false);
    EXPECT_EQ(first_text(result_of(done)), "Hello, Ada!");
    c.expect_schema_valid();
}

// Several rounds over separate POSTs: a missing answer is asked again on the next, then the call completes.
TEST_F(HttpMrtr, ModernRetryWithoutTheAnswerIsAskedAgain) {
    mcp_http c(s_.ep());
    auto const params = call_params("ask_name");
    auto const first =
        expect_input_required(json_answer(c.post(modern_request(1, "tools/call", params, elicitation_caps))));
    auto const again = expect_input_required(json_answer(c.post(modern_request(
        2, "tools/call", retry(params, {{"other", accepted("name", "x")}}, first), elicitation_caps))));
    EXPECT_EQ(again.at("inputRequests"), first.at("inputRequests"));
    auto const done = json_answer(c.post(modern_request(
        3, "tools/call", retry(params, {{"name", accepted("name", "Bo")}}, again), elicitation_caps)));
    EXPECT_EQ(first_text(result_of(done)), "Hello, Bo!");
    c.expect_schema_valid();
}

// prompts/get and resources/read ask the same way; the retries carry Mcp-Name like any request of theirs.
TEST_F(HttpMrtr, ModernPromptAndResourceRoundTrips) {
    mcp_http c(s_.ep());
    json::object const prompt_params{{"name", "intro"}, {"arguments", {{"topic", "http"}}}};
    auto const prompt_round = expect_input_required(
        json_answer(c.post(modern_request(1, "prompts/get", prompt_params, elicitation_caps))));
    EXPECT_EQ(keys_of(prompt_round), std::vector<std::string>{"user_context"});
    auto const prompt_done = json_answer(c.post(
        modern_request(2, "prompts/get",
                       retry(prompt_params, {{"user_context", accepted("context", "experts")}}, prompt_round),
                       elicitation_caps)));
    expect_modern_result(prompt_done, false);
    EXPECT_EQ(result_of(prompt_done).at("messages").at(0).at("content").at("text"),
              "Topic http, context: experts");

    json::object const read_params{{"uri", "test://vault/3"}};
    auto const read_round = expect_input_required(
        json_answer(c.post(modern_request(3, "resources/read", read_params, elicitation_caps))));
    auto const read_done = json_answer(c.post(modern_request(
        4, "resources/read", retry(read_params, {{"password", accepted("password", "pw")}}, read_round),
        elicitation_caps)));
    expect_modern_result(read_done, true);
    EXPECT_EQ(result_of(read_done).at("contents").at(0).at("text"), "vault 3 opened with pw");
    EXPECT_EQ(result_of(read_done).at("ttlMs"), 0);
    c.expect_schema_valid();
}

// DIGEST §4: a tampered, mismatched or foreign requestState is a JSON-RPC error, never a re-prompt. DIGEST §9
// names no status for it, so it is the conventional 200 with the error body, echoing the request's id.
TEST_F(HttpMrtr, HostileStateIsAnErrorIn200) {
    mcp_http c(s_.ep());
    auto const params = call_params("ask_name");
    auto const first =
        expect_input_required(json_answer(c.post(modern_request(1, "tools/call", params, elicitation_caps))));
    std::string const state(first.at("requestState").as_string());
    auto flipped = state;
    flipped[state.size() / 2] = flipped[state.size() / 2] == 'A' ? 'B' : 'A';
    struct attempt {
        json::object params;
        json::value state;
    };
    std::vector<attempt> const attempts{
        {params, json::value(state + "-TAMPERED")},
        {params, json::value(flipped)},
        {params, json::value("")},
        {params, json::value(42)},
        {call_params("ask_name", {{"extra", 1}}), json::value(state)}, // other arguments
    };
    int id = 10;
    for (auto const& a : attempts) {
        auto p = a.params;
        p["inputResponses"] = json::object{{"name", accepted("name", "Mallory")}};
        p["requestState"] = a.state;
        auto const r = c.post(modern_request(id, "tools/call", p, elicitation_caps));
        auto const m = json_answer(r);
        EXPECT_TRUE(is_response_to(m, id)) << m;
        EXPECT_EQ(code_of(m), -32602) << m;
        EXPECT_FALSE(m.as_object().contains("result")) << m;
        ++id;
    }
    // The same state presented as a prompts/get: bound to its method.
    json::object const wrong_method{{"name", "intro"}, {"requestState", state}};
    auto const m = json_answer(c.post(modern_request(id, "prompts/get", wrong_method, elicitation_caps)));
    EXPECT_EQ(code_of(m), -32602) << m;
    c.expect_schema_valid();
}

// ERA-POLICY step 5: a handler that needs a capability the request did not declare answers -32021 naming it,
// with 400 like the other modern errors DIGEST §9 gives a status.
TEST_F(HttpMrtr, RequiredCapabilityMissingIs400) {
    mcp_http c(s_.ep());
    auto const r = c.post(modern_request(1, "tools/call", call_params("needs_sampling"), elicitation_caps));
    EXPECT_EQ(r.status, 400u) << r.body;
    auto const m = r.json();
    EXPECT_TRUE(is_response_to(m, 1)) << m;
    EXPECT_EQ(code_of(m), -32021) << m;
    EXPECT_EQ(m.at("error").at("data"),
              (json::object{{"requiredCapabilities", {{"sampling", json::object{}}}}}));
    json::object const sampling{{"sampling", json::object{}}};
    auto const round = expect_input_required(
        json_answer(c.post(modern_request(2, "tools/call", call_params("needs_sampling"), sampling))));
    auto const done = json_answer(c.post(modern_request(
        3, "tools/call", retry(call_params("needs_sampling"), {{"greeting", sampled("hi")}}, round),
        sampling)));
    EXPECT_EQ(first_text(result_of(done)), "sampled: hi");
    c.expect_schema_valid();
}

// ---- legacy
// ---------------------------------------------------------------------------------------------------

/// Reads the server's request of `method` from a POST's SSE stream, POSTs `answer` to it (202, no body) and
/// returns the rest of the stream, whose last message is the response to `id`.
std::vector<json::value> answer_on_stream(mcp_http& c, response_stream& call, std::string_view method,
                                          json::object answer) {
    EXPECT_EQ(call.status(), 200u);
    EXPECT_EQ(call.header("Content-Type"), "text/event-stream");
    auto const asked = c.next(call);
    EXPECT_TRUE(is_server_request(asked, method)) << asked;
    if (!is_server_request(asked, method))
        return {};
    auto const posted = c.post(client_response(asked.at("id"), std::move(answer)));
    EXPECT_EQ(posted.status, 202u) << posted.body;
    EXPECT_TRUE(posted.body.empty()) << posted.body;
    return c.rest(call);
}

TEST_F(HttpMrtr, LegacyToolCallElicitsOverSseAndCompletesOnThePostedAnswer) {
    mcp_http c(s_.ep());
    c.initialize("2025-11-25", elicitation_caps);
    auto call = c.open(legacy_request("call", "tools/call", call_params("ask_name")));
    auto const rest = answer_on_stream(c, *call, "elicitation/create", accepted("name", "Lin"));
    ASSERT_FALSE(rest.empty());
    ASSERT_TRUE(is_response_to(rest.back(), "call")) << rest.back();
    expect_legacy_result(rest.back());
    EXPECT_EQ(first_text(result_of(rest.back())), "Hello, Lin!");
    EXPECT_TRUE(call->ended());
    c.expect_schema_valid();
}

TEST_F(HttpMrtr, LegacyPromptAndResourceElicitOverSse) {
    mcp_http c(s_.ep());
    c.initialize("2025-11-25", elicitation_caps);
    auto get =
        c.open(legacy_request(1, "prompts/get", {{"name", "intro"}, {"arguments", {{"topic", "sse"}}}}));
    auto const got = answer_on_stream(c, *get, "elicitation/create", accepted("context", "novices"));
    ASSERT_FALSE(got.empty());
    ASSERT_TRUE(is_response_to(got.back(), 1)) << got.back();
    expect_legacy_result(got.back());
    EXPECT_EQ(result_of(got.back()).at("messages").at(0).at("content").at("text"),
              "Topic sse, context: novices");

    auto read = c.open(legacy_request(2, "resources/read", {{"uri", "test://vault/9"}}));
    auto const read_rest = answer_on_stream(c, *read, "elicitation/create", accepted("password", "pw"));
    ASSERT_FALSE(read_rest.empty());
    ASSERT_TRUE(is_response_to(read_rest.back(), 2)) << read_rest.back();
    expect_legacy_result(read_rest.back());
    EXPECT_EQ(result_of(read_rest.back()).at("contents").at(0).at("text"), "vault 9 opened with pw");
    c.expect_schema_valid();
}

// A session that did not declare elicitation is never asked: the prompt is answered at once, as plain JSON.
TEST_F(HttpMrtr, LegacySessionWithoutTheCapabilityIsNotAsked) {
    mcp_http c(s_.ep());
    c.initialize("2025-11-25");
    auto const r = c.post(legacy_request(1, "prompts/get", {{"name", "intro"}}));
    EXPECT_EQ(r.status, 200u) << r.body;
    EXPECT_EQ(r.header("Content-Type"), "application/json");
    auto const m = r.json();
    EXPECT_EQ(result_of(m).at("messages").at(0).at("content").at("text"), "Topic -, context: (not declared)");
    c.expect_schema_valid();
}

} // namespace
