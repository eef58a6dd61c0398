// A request's life over stdio (DIGEST §10, §12): cancellation silences it, progress carries its token and
// only increases, logs reach modern clients only when they asked with logLevel, and a legacy tool can ask the
// client a question (elicitation/create) only when the client declared it can answer.
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "stdio/stdio_client.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace {

namespace json = boost::json;
using namespace duet::test;

json::object modern_call_with_meta(json::value id, std::string_view tool, json::object arguments,
                                   json::object extra_meta) {
    json::object params = call_params(tool, std::move(arguments));
    params["_meta"] = modern_meta({}, std::move(extra_meta));
    return modern_request(std::move(id), "tools/call", std::move(params));
}

std::vector<json::value> notifications_between(stdio_client const& c, std::string_view method,
                                               std::size_t from, std::size_t to) {
    std::vector<json::value> out;
    for (std::size_t i = from; i < to && i < c.messages().size(); ++i)
        if (is_notification(c.messages()[i], method))
            out.push_back(c.messages()[i]);
    return out;
}

std::size_t index_of_response(stdio_client& c, json::value const& id) {
    auto const i = c.wait_for([&](json::value const& m) { return is_response_to(m, id); });
    return i.value_or(c.messages().size());
}

// DIGEST §10: after notifications/cancelled the server sends nothing more for that id; the process keeps
// serving.
TEST(StdioCancellation, CancelledCountdownGetsNoResponse) {
    stdio_client c;
    c.send(modern_call_with_meta(5, "countdown", {{"n", 20}}, {{"progressToken", "cd"}}));
    // Running: its first progress notification has arrived.
    auto const started = c.wait_for([](json::value const& m) {
        return is_notification(m, "notifications/progress") && m.at("params").at("progressToken") == "cd";
    });
    ASSERT_TRUE(started);
    c.send(cancelled_notification(5));
    c.send(modern_request(6, "tools/call", call_params("echo", {{"text", "still here"}})));
    EXPECT_EQ(first_text(result_of(c.response(6))), "still here");
    EXPECT_EQ(c.finish(), 0);
    for (auto const& m : c.messages())
        EXPECT_FALSE(is_response_to(m, 5)) << "a cancelled request was answered: " << m;
    c.expect_schema_valid();
}

// A cancellation sent right behind its request is never lost (frames are handled in order), in either era.
TEST(StdioCancellation, CancellationRightBehindTheRequestSilencesIt) {
    stdio_client c;
    c.send(modern_request(1, "tools/call", call_params("countdown", {{"n", 20}})));
    c.send(cancelled_notification(1));
    c.send(initialize_request(2, "2025-11-25"));
    result_of(c.response(2));
    c.send(initialized_notification());
    c.send(legacy_request(3, "tools/call", call_params("countdown", {{"n", 20}})));
    c.send(cancelled_notification(3));
    EXPECT_EQ(c.finish(), 0);
    for (auto const& m : c.messages())
        EXPECT_FALSE(is_response_to(m, 1) || is_response_to(m, 3))
            << "a cancelled request was answered: " << m;
    c.expect_schema_valid();
}

// DIGEST §12: progress carries the request's token (string or integer, as sent), increases, and ends before
// the response.
TEST(StdioProgress, ProgressCarriesTheTokenAndIncreases) {
    stdio_client c;
    c.send(modern_call_with_meta(1, "countdown", {{"n", 3}}, {{"progressToken", "tok"}}));
    auto const done = index_of_response(c, 1);
    EXPECT_EQ(first_text(result_of(c.messages().at(done))), "liftoff after 3 steps");
    auto const progress = notifications_between(c, "notifications/progress", 0, done);
    ASSERT_EQ(progress.size(), 3u);
    double last = 0;
    for (auto const& p : progress) {
        EXPECT_EQ(p.at("params").at("progressToken"), "tok");
        auto const value = p.at("params").at("progress").to_number<double>();
        EXPECT_GT(value, last);
        last = value;
        EXPECT_EQ(p.at("params").at("total").to_number<double>(), 3.0);
    }

    c.send(initialize_request(2, "2025-11-25"));
    result_of(c.response(2));
    c.send(initialized_notification());
    json::object params = call_params("countdown", {{"n", 2}});
    params["_meta"] = json::object{{"progressToken", 99}};
    auto const before = c.messages().size();
    c.send(legacy_request(3, "tools/call", params));
    auto const legacy_done = index_of_response(c, 3);
    auto const legacy_progress = notifications_between(c, "notifications/progress", before, legacy_done);
    ASSERT_EQ(legacy_progress.size(), 2u);
    for (auto const& p : legacy_progress) {
        EXPECT_TRUE(p.at("params").at("progressToken").is_int64());
        EXPECT_EQ(p.at("params").at("progressToken"), 99);
    }
    // Nothing after the responses.
    EXPECT_EQ(c.finish(), 0);
    EXPECT_EQ(notifications_between(c, "notifications/progress", legacy_done, c.messages().size()).size(),
              0u);
    c.expect_schema_valid();
}

// DIGEST §2, §12: a modern request gets notifications/message only when it set logLevel, at or above it.
TEST(StdioLogging, ModernRequestGetsLogsOnlyWithLogLevel) {
    stdio_client c;
    c.send(modern_call_with_meta(1, "countdown", {{"n", 2}}, {}));
    auto const quiet = index_of_response(c, 1);
    EXPECT_TRUE(notifications_between(c, "notifications/message", 0, quiet).empty());

    c.send(modern_call_with_meta(2, "countdown", {{"n", 2}}, {{key_log_level, "warning"}}));
    auto const above = index_of_response(c, 2);
    EXPECT_TRUE(notifications_between(c, "notifications/message", quiet, above).empty());

    c.send(modern_call_with_meta(3, "countdown", {{"n", 2}}, {{key_log_level, "info"}}));
    auto const loud = index_of_response(c, 3);
    auto const logs = notifications_between(c, "notifications/message", above, loud);
    ASSERT_EQ(logs.size(), 2u);
    for (auto const& l : logs) {
        EXPECT_EQ(l.at("params").at("level"), "info");
        EXPECT_EQ(l.at("params").at("logger"), "countdown");
    }
    // An unknown level is invalid params (DIGEST §2).
    c.send(modern_call_with_meta(4, "countdown", {{"n", 1}}, {{key_log_level, "loud"}}));
    expect_error(c.response(4), -32602);
    EXPECT_EQ(c.finish(), 0);
    c.expect_schema_valid();
}

// DIGEST §11: a legacy session logs at its threshold; logging/setLevel raises it.
TEST(StdioLogging, LegacySessionLogsFollowSetLevel) {
    stdio_client c;
    c.send(initialize_request(1, "2025-11-25"));
    result_of(c.response(1));
    c.send(initialized_notification());
    c.send(legacy_request(2, "tools/call", call_params("countdown", {{"n", 2}})));
    auto const first = index_of_response(c, 2);
    EXPECT_EQ(notifications_between(c, "notifications/message", 0, first).size(), 2u);
    c.send(legacy_request(3, "logging/setLevel", {{"level", "error"}}));
    expect_legacy_result(c.response(3));
    auto const before = c.messages().size();
    c.send(legacy_request(4, "tools/call", call_params("countdown", {{"n", 2}})));
    auto const second = index_of_response(c, 4);
    EXPECT_TRUE(notifications_between(c, "notifications/message", before, second).empty());
    c.send(legacy_request(5, "logging/setLevel", {{"level", "deafening"}}));
    expect_error(c.response(5), -32602);
    EXPECT_EQ(c.finish(), 0);
    c.expect_schema_valid();
}

// DIGEST §4 "Legacy sessions": a dual-era server sends a real elicitation/create request and awaits the
// answer.
TEST(StdioElicitation, LegacyRoundTripThroughTheClient) {
    stdio_client c;
    c.send(initialize_request(1, "2025-11-25", {{"elicitation", json::object{}}}));
    result_of(c.response(1));
    c.send(initialized_notification());
    c.send(legacy_request(10, "tools/call", call_params("ask_name")));
    auto const asked =
        c.wait_for([](json::value const& m) { return is_server_request(m, "elicitation/create"); });
    ASSERT_TRUE(asked);
    auto const question = c.messages()[*asked];
    EXPECT_EQ(question.at("params").at("message"), "What is your name?");
    EXPECT_EQ(question.at("params").at("requestedSchema").at("type"), "object");
    c.send(client_response(question.at("id"), {{"action", "accept"}, {"content", {{"name", "Ada"}}}}));
    auto const answer = result_of(c.response(10));
    EXPECT_FALSE(is_error_result(answer));
    EXPECT_EQ(first_text(answer), "Hello, Ada!");

    // A second question gets a fresh id; a declined answer is a normal result.
    c.send(legacy_request(11, "tools/call", call_params("ask_name")));
    auto const again = c.wait_for(
        [](json::value const& m) { return is_server_request(m, "elicitation/create"); }, *asked + 1);
    ASSERT_TRUE(again);
    auto const second = c.messages()[*again];
    EXPECT_NE(second.at("id"), question.at("id"));
    c.send(client_response(second.at("id"), {{"action", "decline"}}));
    EXPECT_EQ(first_text(result_of(c.response(11))), "The user declined to answer");
    EXPECT_EQ(c.finish(), 0);
    c.expect_schema_valid();
}

// Only what the client declared may be asked of it: no elicitation capability, no request, an isError result.
TEST(StdioElicitation, ClientWithoutElicitationGetsToolErrorAndNoServerRequest) {
    stdio_client c;
    c.send(initialize_request(1, "2025-11-25"));
    result_of(c.response(1));
    c.send(initialized_notification());
    c.send(legacy_request(2, "tools/call", call_params("ask_name")));
    auto const r = result_of(c.response(2));
    EXPECT_TRUE(is_error_result(r)) << json::value(r);
    // A modern request never receives a server-to-client request: it gets an input_required round instead.
    c.send(modern_request(3, "tools/call", call_params("ask_name"), {{"elicitation", json::object{}}}));
    auto const round = result_of(c.response(3));
    EXPECT_EQ(round.at("resultType"), "input_required") << json::value(round);
    EXPECT_TRUE(round.at("inputRequests").as_object().contains("name"));
    EXPECT_EQ(c.finish(), 0);
    for (auto const& m : c.messages())
        EXPECT_FALSE(m.as_object().contains("method") && m.as_object().contains("id"))
            << "the server sent a request: " << m;
    c.expect_schema_valid();
}

} // namespace
