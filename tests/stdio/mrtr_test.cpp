// Multi round-trip requests over the real `duet serve --stdio` binary (DIGEST §4), with the demo's ask_name:
// a modern client gets an input_required round and retries with a new id, the same params, its answer by key
// and the requestState echoed byte for byte; a tampered state or one from another process is -32602; a legacy
// session gets a real elicitation/create request instead. Every message either side writes is checked against
// the official schema of its era (2026-07-28, or the session's 2025-11-25).
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "stdio/stdio_client.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <string_view>

namespace {

namespace json = boost::json;
using namespace duet::test;

json::object const elicitation_caps{{"elicitation", json::object{}}};

json::object accepted(std::string_view name) {
    return json::object{{"action", "accept"}, {"content", {{"name", name}}}};
}

/// Checks a message the test sends against the 2026-07-28 schema: what a conforming client would send.
void expect_valid_modern_request(json::value const& request, std::string_view type) {
    auto* schemas = schemas_or_skip();
    if (schemas == nullptr)
        return;
    auto const envelope = schemas->validate(modern_version, "JSONRPCRequest", request);
    EXPECT_TRUE(envelope.ok) << envelope.errors << "\n  " << request;
    auto const specific = schemas->validate(modern_version, type, request);
    EXPECT_TRUE(specific.ok) << specific.errors << "\n  " << request;
}

/// The input_required result of `response`, with the checks every such result gets.
json::object expect_round(json::value const& response) {
    auto const r = result_of(response);
    EXPECT_EQ(r.if_contains("resultType") ? r.at("resultType") : json::value{}, "input_required") << response;
    EXPECT_FALSE(r.contains("ttlMs")) << response;
    EXPECT_FALSE(r.contains("cacheScope")) << response;
    EXPECT_FALSE(r.contains("content")) << response;
    auto const* meta = r.if_contains("_meta");
    EXPECT_TRUE(meta && meta->is_object() && meta->get_object().contains(key_server_info)) << response;
    auto const* state = r.if_contains("requestState");
    EXPECT_TRUE(state && state->is_string() && !state->get_string().empty()) << response;
    return r;
}

/// The retry as raw bytes: the state is copied into the line exactly as the server wrote it, with no JSON
/// library of ours in between (it must need no escaping for that to be valid JSON).
std::string raw_retry(json::value const& id, json::object const& answers, std::string_view state) {
    json::object params = call_params("ask_name");
    params["_meta"] = modern_meta(elicitation_caps);
    params["inputResponses"] = answers;
    auto line = json::serialize(
        json::object{{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"}, {"params", params}});
    line.pop_back(); // the closing brace of the message, then `"params":{...}` ends the line
    line.pop_back();
    line += ",\"requestState\":\"";
    line += state;
    line += "\"}}\n";
    return line;
}

TEST(StdioMrtr, ModernRoundTripWithTheStateEchoedByteExact) {
    stdio_client c;
    auto const first_request = modern_request(1, "tools/call", call_params("ask_name"), elicitation_caps);
    expect_valid_modern_request(first_request, "CallToolRequest");
    c.send(first_request);
    auto const round = expect_round(c.response(1));
    auto const& asked = round.at("inputRequests").as_object();
    ASSERT_EQ(asked.size(), 1u) << json::value(round);
    ASSERT_TRUE(asked.contains("name")) << json::value(round);
    EXPECT_EQ(asked.at("name").at("method"), "elicitation/create");
    EXPECT_EQ(asked.at("name").at("params").at("message"), "What is your name?");
    if (auto* schemas = schemas_or_skip()) {
        auto const v = schemas->validate(modern_version, "InputRequest", asked.at("name"));
        EXPECT_TRUE(v.ok) << v.errors;
    }

    std::string const state(round.at("requestState").as_string());
    for (char ch : state)
        EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.')
            << "requestState needs JSON escaping or is not opaque printable text: " << state;
    json::object const answers{{"name", accepted("Ada")}};
    auto const bytes = raw_retry(2, answers, state);
    auto const retry = json::parse(bytes);
    ASSERT_EQ(retry.at("params").at("requestState"), json::value(state));
    expect_valid_modern_request(retry, "CallToolRequest");
    c.send_raw(bytes, retry);
    auto const done = c.response(2);
    expect_modern_result(done, false);
    EXPECT_EQ(first_text(result_of(done)), "Hello, Ada!");
    EXPECT_FALSE(is_error_result(result_of(done)));

    // A declined answer on another retry of the same round: the state is valid for it as well.
    c.send_raw(raw_retry("decline", {{"name", {{"action", "decline"}}}}, state),
               json::parse(raw_retry("decline", {{"name", {{"action", "decline"}}}}, state)));
    EXPECT_EQ(first_text(result_of(c.response("decline"))), "The user declined to answer");

    EXPECT_EQ(c.finish(), 0);
    // One answer per request id, and none of them a server-to-client request.
    std::size_t answers_to_1 = 0;
    for (auto const& m : c.messages()) {
        answers_to_1 += is_response_to(m, 1);
        EXPECT_FALSE(m.as_object().contains("method") && m.as_object().contains("id")) << m;
    }
    EXPECT_EQ(answers_to_1, 1u);
    c.expect_schema_valid();
}

// A retry without the answer (or with only unknown keys) gets the question again, never an error.
TEST(StdioMrtr, RetryWithoutTheAnswerIsAskedAgain) {
    stdio_client c;
    c.send(modern_request(1, "tools/call", call_params("ask_name"), elicitation_caps));
    auto const round = expect_round(c.response(1));
    std::string const state(round.at("requestState").as_string());
    auto const bytes = raw_retry(2, {{"nickname", accepted("Ada")}}, state);
    c.send_raw(bytes, json::parse(bytes));
    auto const again = expect_round(c.response(2));
    EXPECT_EQ(again.at("inputRequests"), round.at("inputRequests"));
    auto const last = raw_retry(3, {{"name", accepted("Bo")}}, again.at("requestState").as_string());
    c.send_raw(last, json::parse(last));
    EXPECT_EQ(first_text(result_of(c.response(3))), "Hello, Bo!");
    EXPECT_EQ(c.finish(), 0);
    c.expect_schema_valid();
}

// DIGEST §4: requestState is hostile input; an altered one is a JSON-RPC error (-32602), not a new question.
TEST(StdioMrtr, TamperedStateIsRefused) {
    stdio_client c;
    c.send(modern_request(1, "tools/call", call_params("ask_name"), elicitation_caps));
    auto const round = expect_round(c.response(1));
    std::string const state(round.at("requestState").as_string());
    std::string flipped = state;
    flipped[flipped.size() / 2] = flipped[flipped.size() / 2] == 'A' ? 'B' : 'A';
    json::object const answers{{"name", accepted("Ada")}};
    int id = 10;
    for (std::string const& bad : {state + "-TAMPERED", flipped, state.substr(0, state.find('.'))}) {
        auto const bytes = raw_retry(id, answers, bad);
        c.send_raw(bytes, json::parse(bytes));
        auto const r = c.response(id);
        expect_error(r, -32602);
        EXPECT_FALSE(r.as_object().contains("result")) << r;
        ++id;
    }
    // The process goes on, and the genuine state still works.
    auto const good = raw_retry(id, answers, state);
    c.send_raw(good, json::parse(good));
    EXPECT_EQ(first_text(result_of(c.response(id))), "Hello, Ada!");
    EXPECT_EQ(c.finish(), 0);
    c.expect_schema_valid();
}

// Without a configured key each process seals with its own random key: another process refuses the state.
TEST(StdioMrtr, StateFromAnotherProcessIsRefused) {
    stdio_client a;
    a.send(modern_request(1, "tools/call", call_params("ask_name"), elicitation_caps));
    auto const round = expect_round(a.response(1));
    EXPECT_EQ(a.finish(), 0);
    stdio_client b;
    auto const bytes = raw_retry(2, {{"name", accepted("Ada")}}, round.at("requestState").as_string());
    b.send_raw(bytes, json::parse(bytes));
    expect_error(b.response(2), -32602);
    EXPECT_EQ(b.finish(), 0);
    a.expect_schema_valid();
    b.expect_schema_valid();
}

// DIGEST §4 "Legacy sessions": the same tool sends a real elicitation/create (with an id) and awaits the
// answer; a modern round runs in the same process while the legacy question is open. The legacy half is
// checked against 2025-11-25 (closed: no field that version does not define), the modern half against
// 2026-07-28.
TEST(StdioMrtr, LegacyElicitationRoundTripBesideAModernRound) {
    stdio_client c;
    c.send(initialize_request(1, "2025-11-25", elicitation_caps));
    EXPECT_EQ(result_of(c.response(1)).at("protocolVersion"), "2025-11-25");
    c.send(initialized_notification());
    c.send(legacy_request("legacy", "tools/call", call_params("ask_name")));
    auto const asked =
        c.wait_for([](json::value const& m) { return is_server_request(m, "elicitation/create"); });
    ASSERT_TRUE(asked);
    auto const question = c.messages()[*asked];
    EXPECT_EQ(question.at("params").at("message"), "What is your name?");
    // No modern envelope in a legacy request: only the question's modern key, Duet's hint for gateways.
    EXPECT_EQ(question.at("params").at("_meta"), (json::object{{"dev.duet/inputKey", "name"}})) << question;

    // Meanwhile a modern client's round trip in the same process.
    c.send(modern_request("m1", "tools/call", call_params("ask_name"), elicitation_caps));
    auto const round = expect_round(c.response("m1"));
    auto const bytes = raw_retry("m2", {{"name", accepted("Ada")}}, round.at("requestState").as_string());
    c.send_raw(bytes, json::parse(bytes));
    EXPECT_EQ(first_text(result_of(c.response("m2"))), "Hello, Ada!");

    c.send(client_response(question.at("id"), accepted("Lin")));
    auto const legacy = c.response("legacy");
    expect_legacy_result(legacy);
    EXPECT_EQ(first_text(result_of(legacy)), "Hello, Lin!");
    EXPECT_EQ(c.finish(), 0);
    EXPECT_EQ(c.log().legacy_version(), "2025-11-25");
    auto& schemas = schema_validator::shared();
    DUET_SKIP_WITHOUT_SCHEMAS(schemas);
    // initialize, the question, m1, m2, legacy: each with its envelope.
    EXPECT_GE(c.log().expect_schema_valid(schemas), 10u);
    auto const closed = schemas.validate("2025-11-25", "ElicitRequest", question, schema_mode::closed);
    EXPECT_TRUE(closed.ok) << closed.errors;
    auto const answer = schemas.validate("2025-11-25", "ElicitResult", accepted("Lin"), schema_mode::closed);
    EXPECT_TRUE(answer.ok) << answer.errors;
}

// A prompt asks exactly as a tool does (the demo's `introduce`): a modern prompts/get gets an input_required
// round and completes on the retry; a legacy session's prompts/get sends a real elicitation/create. Both in
// one process, every message checked against its era's schema.
TEST(StdioMrtr, PromptAsksInBothEras) {
    stdio_client c;
    json::object const params{{"name", "introduce"}};
    auto const first_request = modern_request(1, "prompts/get", params, elicitation_caps);
    expect_valid_modern_request(first_request, "GetPromptRequest");
    c.send(first_request);
    auto const round = expect_round(c.response(1));
    EXPECT_FALSE(round.contains("messages")) << json::value(round);
    ASSERT_TRUE(round.at("inputRequests").as_object().contains("name")) << json::value(round);
    auto retry = params;
    retry["inputResponses"] = json::object{{"name", accepted("Ada")}};
    retry["requestState"] = round.at("requestState");
    auto const retry_request = modern_request(2, "prompts/get", retry, elicitation_caps);
    expect_valid_modern_request(retry_request, "GetPromptRequest");
    c.send(retry_request);
    auto const done = c.response(2);
    expect_modern_result(done, false);
    EXPECT_EQ(result_of(done).at("description"), "An introduction of Ada");

    // Without the capability nothing is asked.
    c.send(modern_request(3, "prompts/get", params));
    EXPECT_EQ(result_of(c.response(3)).at("description"), "An introduction of a new user");

    c.send(initialize_request("init", "2025-11-25", elicitation_caps));
    result_of(c.response("init"));
    c.send(initialized_notification());
    c.send(legacy_request("legacy", "prompts/get", params));
    auto const asked =
        c.wait_for([](json::value const& m) { return is_server_request(m, "elicitation/create"); });
    ASSERT_TRUE(asked);
    c.send(client_response(c.messages()[*asked].at("id"), accepted("Lin")));
    auto const legacy = c.response("legacy");
    expect_legacy_result(legacy);
    EXPECT_EQ(result_of(legacy).at("description"), "An introduction of Lin");
    EXPECT_EQ(c.finish(), 0);
    c.expect_schema_valid();
}

} // namespace
