// stdio framing and lifecycle (DIGEST §10, JSON-RPC 2.0 §5): malformed lines get their JSON-RPC error and the
// stream goes on, an oversized line is refused and skipped, batches exist only in 2025-03-26 sessions, end of
// input lets in-flight work finish before a clean exit, and stdout carries nothing but JSON-RPC (every line
// read is checked by the transcript).
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "stdio/stdio_client.hpp"

#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

namespace json = boost::json;
using namespace duet::test;

json::value only_error_with_null_id(stdio_client& c, std::size_t from) {
    auto const i = c.wait_for(
        [](json::value const& m) {
            auto const* o = m.if_object();
            return o && o->contains("error") && o->at("id").is_null();
        },
        from);
    return i ? c.messages()[*i] : json::value{};
}

// JSON-RPC 2.0 §5.1: bytes that are not JSON get -32700 with id null; the next line is served.
TEST(StdioFraming, BadJsonIsParseErrorWithNullId) {
    stdio_client c;
    c.send_raw("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\n");
    auto const r = only_error_with_null_id(c, 0);
    expect_error(r, -32700);
    EXPECT_TRUE(r.at("id").is_null());
    c.send(legacy_request(2, "ping"));
    EXPECT_TRUE(result_of(c.response(2)).empty());
    EXPECT_EQ(c.finish(), 0);
    c.expect_schema_valid();
}

// JSON-RPC 2.0 §5.1: a well-formed object that is not a valid request gets -32600 echoing its id.
TEST(StdioFraming, WrongJsonrpcVersionIsInvalidRequestEchoingTheId) {
    stdio_client c;
    c.send_raw(R"({"jsonrpc":"1.0","id":"abc","method":"ping"})"
               "\n",
               request("abc", "ping"));
    auto const i = c.wait_for([](json::value const& m) { return m.as_object().contains("error"); });
    ASSERT_TRUE(i);
    auto const& r = c.messages()[*i];
    expect_error(r, -32600);
    EXPECT_EQ(r.at("id"), "abc");
    c.send_raw(R"({"jsonrpc":"2.0","id":7})"
               "\n",
               request(7, "none"));
    auto const j = c.wait_for([](json::value const& m) { return m.as_object().contains("error"); }, *i + 1);
    ASSERT_TRUE(j);
    expect_error(c.messages()[*j], -32600);
    EXPECT_EQ(c.messages()[*j].at("id"), 7);
    EXPECT_EQ(c.finish(), 0);
    c.expect_schema_valid();
}

// DIGEST §10: a line over the 4 MiB bound is refused with -32600 without being parsed; the next line is
// served.
TEST(StdioFraming, OversizedLineIsRefusedAndTheNextLineServed) {
    stdio_client c;
    std::string huge = R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"pad":")";
    huge.append(4 * 1024 * 1024 + 16, 'x');
    huge += "\"}}\n";
    c.send_raw(huge);
    c.send(modern_request(2, "tools/call", call_params("echo", {{"text", "after"}})));
    auto const refused = only_error_with_null_id(c, 0);
    expect_error(refused, -32600);
    EXPECT_EQ(first_text(result_of(c.response(2))), "after");
    for (auto const& m : c.messages())
        EXPECT_FALSE(is_response_to(m, 1)) << "the oversized request was served: " << m;
    EXPECT_EQ(c.finish(), 0);
    c.expect_schema_valid();
}

// The bound is inclusive: a line of exactly 4 MiB is parsed and served.
TEST(StdioFraming, LineOfExactlyTheBoundIsServed) {
    stdio_client c;
    auto params = call_params("echo", {{"text", "fits"}});
    auto meta = modern_meta();
    meta["pad"] = "";
    params["_meta"] = meta;
    auto request = modern_request(1, "tools/call", params);
    auto const base = json::serialize(request).size();
    std::size_t const bound = 4 * 1024 * 1024;
    ASSERT_LT(base, bound);
    request.at("params").at("_meta").as_object()["pad"] = std::string(bound - base, 'p');
    auto line = json::serialize(request);
    ASSERT_EQ(line.size(), bound);
    c.send_raw(line + "\n", request);
    EXPECT_EQ(first_text(result_of(c.response(1))), "fits");
    // One byte more is refused.
    request.at("id") = 2;
    request.at("params").at("_meta").as_object()["pad"] = std::string(bound - base + 1, 'p');
    line = json::serialize(request);
    ASSERT_EQ(line.size(), bound + 1);
    c.send_raw(line + "\n");
    expect_error(only_error_with_null_id(c, 0), -32600);
    EXPECT_EQ(c.finish(), 0);
    for (auto const& m : c.messages())
        EXPECT_FALSE(is_response_to(m, 2)) << m;
}

// DIGEST §11: batches exist only in 2025-03-26 (removed in 2025-06-18): refused elsewhere, served there.
TEST(StdioFraming, BatchRefusedOutsideA20250326Session) {
    stdio_client c;
    std::string const batch =
        R"([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}])"
        "\n";
    c.send_raw(batch);
    expect_error(only_error_with_null_id(c, 0), -32600);
    c.send(initialize_request(3, "2025-11-25"));
    result_of(c.response(3));
    c.send(initialized_notification());
    auto const before = c.messages().size();
    c.send_raw(batch);
    expect_error(only_error_with_null_id(c, before), -32600);
    for (auto const& m : c.messages())
        EXPECT_FALSE(is_response_to(m, 1) || is_response_to(m, 2)) << m;
    EXPECT_EQ(c.finish(), 0);
    c.expect_schema_valid();
}

TEST(StdioFraming, BatchServedInA20250326Session) {
    stdio_client c;
    c.send(initialize_request(1, "2025-03-26"));
    EXPECT_EQ(result_of(c.response(1)).at("protocolVersion"), "2025-03-26");
    json::array batch{legacy_request(2, "ping"), initialized_notification(), legacy_request(3, "tools/list"),
                      legacy_request("x", "no/such/method")};
    c.send_raw(json::serialize(batch) + "\n", batch);
    auto const i = c.wait_for([](json::value const& m) { return m.is_array(); });
    ASSERT_TRUE(i);
    auto const& replies = c.messages()[*i].as_array();
    ASSERT_EQ(replies.size(), 3u) << c.messages()[*i]; // the notification gets no reply
    EXPECT_TRUE(is_response_to(replies[0], 2));
    EXPECT_TRUE(is_response_to(replies[1], 3));
    expect_legacy_result(replies[1]);
    // 2025-03-26 knows no tool titles (DIGEST §11).
    for (auto const& tool : replies[1].at("result").at("tools").as_array())
        EXPECT_FALSE(tool.as_object().contains("title")) << tool;
    EXPECT_TRUE(is_response_to(replies[2], "x"));
    expect_error(replies[2], -32601);
    EXPECT_EQ(c.finish(), 0);
}

// DIGEST §10: end of input lets an in-flight request finish and answer, then the process exits 0.
TEST(StdioLifecycle, EndOfInputLetsCountdownFinishThenExitsZero) {
    stdio_client c;
    c.send(modern_request(1, "tools/call", call_params("countdown", {{"n", 5}})));
    c.send(initialize_request(2, "2025-11-25"));
    EXPECT_EQ(c.finish(), 0);
    EXPECT_EQ(first_text(result_of(c.response(1))), "liftoff after 5 steps");
    EXPECT_EQ(result_of(c.response(2)).at("protocolVersion"), "2025-11-25");
    c.expect_schema_valid();
}

// DIGEST §10: a final line without its newline still counts; an empty input exits 0 having written nothing.
TEST(StdioLifecycle, FinalLineWithoutNewlineIsServed) {
    stdio_client c;
    c.send_raw(R"({"jsonrpc":"2.0","id":1,"method":"ping"})", legacy_request(1, "ping"));
    EXPECT_EQ(c.finish(), 0);
    ASSERT_EQ(c.messages().size(), 1u);
    EXPECT_TRUE(is_response_to(c.messages()[0], 1));

    stdio_client quiet;
    EXPECT_EQ(quiet.finish(), 0);
    EXPECT_TRUE(quiet.messages().empty());
}

// DIGEST §10: stdout carries only JSON-RPC. Blank lines and CRLF are tolerated on input and never echoed;
// every line the server wrote was checked by the transcript as it arrived.
TEST(StdioLifecycle, StdoutCarriesOnlyJsonRpc) {
    stdio_client c;
    c.send_raw("\n\r\n");
    c.send_raw(R"({"jsonrpc":"2.0","id":1,"method":"ping"})"
               "\r\n",
               legacy_request(1, "ping"));
    c.send(modern_request(2, "tools/call", call_params("countdown", {{"n", 2}})));
    c.send(notification("notifications/unknown"));
    c.send(client_response(99, {}));
    EXPECT_EQ(c.finish(), 0);
    EXPECT_EQ(c.messages().size(), 2u);
    for (auto const& m : c.messages())
        EXPECT_EQ(m.at("jsonrpc"), "2.0");
    EXPECT_FALSE(c.stderr_text().empty()); // logs go to stderr
    c.expect_schema_valid();
}

// A client that stops reading: the server's writes fail, it still drains its input, and it exits 1 (no
// signal).
TEST(StdioLifecycle, BrokenStdoutExitsOneNotBySignal) {
    stdio_client c;
    c.close_output();
    c.send(legacy_request(1, "ping"));
    c.send(modern_request(2, "tools/list"));
    EXPECT_EQ(c.finish(), 1);
}

// End of input while the server waits for the client's answer: the request fails, the tool still answers, and
// the process exits 0.
TEST(StdioLifecycle, EndOfInputFailsAnUnansweredElicitation) {
    stdio_client c;
    c.send(initialize_request(1, "2025-11-25", {{"elicitation", json::object{}}}));
    result_of(c.response(1));
    c.send(initialized_notification());
    c.send(legacy_request(2, "tools/call", call_params("ask_name")));
    ASSERT_TRUE(c.wait_for([](json::value const& m) { return is_server_request(m, "elicitation/create"); }));
    EXPECT_EQ(c.finish(), 0);
    auto const r = result_of(c.response(2));
    EXPECT_TRUE(is_error_result(r)) << json::value(r);
    c.expect_schema_valid();
}

} // namespace
