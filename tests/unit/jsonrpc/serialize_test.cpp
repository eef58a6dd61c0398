// Serializing messages: exact bytes, fixed member order, and byte stability through a parse.
//
// Requirement tags: JSONRPC-4 / -5 / -5.1 member sets https://www.jsonrpc.org/specification#request_object;
// byte stability and member order are the contract of include/duet/jsonrpc/codec.hpp.
#include <duet/jsonrpc/codec.hpp>

#include "parse_matchers.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace duet::jsonrpc;
using test::Holds;
using test::parse_one;

// ---------------------------------------------------------------------------------------------------------------
// codec.hpp: serialize(parse(serialize(m))) == serialize(m), and the parse gives back m itself.

struct round_trip_case {
    std::string name;
    message m;

    friend void PrintTo(round_trip_case const& row, std::ostream* os) { *os << row.name; }
};

class SerializeRoundTrip : public ::testing::TestWithParam<round_trip_case> {};

TEST_P(SerializeRoundTrip, IsByteStable) {
    auto const& m = GetParam().m;
    auto const wire = serialize(m);
    auto p = parse_one(wire);
    ASSERT_TRUE(p) << wire;
    EXPECT_EQ(serialize(*p), wire);
    EXPECT_EQ(*p, m) << wire;
}

using boost::json::array;
using boost::json::object;
using boost::json::value;
using T = round_trip_case;

INSTANTIATE_TEST_SUITE_P(
    Serialize, SerializeRoundTrip,
    ::testing::Values(
        T{"RequestWithObjectParams",
          request{1, "tools/call", object{{"name", "echo"}, {"arguments", object{}}}}},
        T{"RequestWithArrayParams", request{"abc", "sum", array{1, 2.5, "x", nullptr, true}}},
        T{"RequestWithoutParams", request{0, "ping", nullptr}},
        T{"RequestWithEmptyStringId", request{"", "ping", object{}}},
        T{"RequestWithInt64MaxId", request{std::numeric_limits<std::int64_t>::max(), "ping", nullptr}},
        T{"RequestWithInt64MinId", request{std::numeric_limits<std::int64_t>::min(), "ping", nullptr}},
        T{"RequestWithEscapesAndUnicode",
          request{"q\"\\\n", "caf\xc3\xa9/\xf0\x9f\x98\x80", object{{"k\t", "\x01"}}}},
        T{"NotificationWithParams", notification{"notifications/progress", object{{"progress", 0.5}}}},
        T{"NotificationWithoutParams", notification{"notifications/initialized", nullptr}},
        T{"ResponseWithObject", response{7, object{{"tools", array{}}, {"nextCursor", "c"}}}},
        T{"ResponseWithNullResult", response{"7", nullptr}}, T{"ResponseWithFraction", response{8, 0.1}},
        T{"ResponseWithFractionsAndExponents", response{9, array{0.25, 1e300, -2.5e-8, 1e21}}},
        T{"ResponseWithDeepResult", response{10, object{{"a", array{object{{"b", array{array{}}}}}}}}},
        T{"ErrorResponseWithData", error_response{3, error_object{-32602, "bad", object{{"field", "x"}}}}},
        T{"ErrorResponseWithFalsyData", error_response{3, error_object{-32603, "oops", false}}},
        T{"ErrorResponseWithoutData", error_response{"s", error_object{-32601, "Method not found", nullptr}}},
        T{"ErrorResponseWithNullId", error_response{std::nullopt, to_error_object(parse_errc::bad_json)}},
        T{"ErrorResponseWithInt32Extremes",
          error_response{1, error_object{std::numeric_limits<std::int32_t>::min(), "", nullptr}}}),
    [](auto const& row) { return row.param.name; });

// ---------------------------------------------------------------------------------------------------------------
// Exact bytes: member order jsonrpc, id, method, params / result / error; absent members omitted.

// JSONRPC-4
TEST(Serialize, RequestMembersGoOutInFixedOrder) {
    EXPECT_EQ(serialize(request{7, "tools/list", object{{"cursor", "c"}}}),
              R"({"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"c"}})");
}

// JSONRPC-4 ("params ... MAY be omitted"): null params means absent; an empty object is kept.
TEST(Serialize, AbsentParamsAreOmittedAndEmptyParamsKept) {
    EXPECT_EQ(serialize(request{1, "ping", nullptr}), R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
    EXPECT_EQ(serialize(request{1, "ping", object{}}),
              R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{}})");
    EXPECT_EQ(serialize(notification{"n", nullptr}), R"({"jsonrpc":"2.0","method":"n"})");
    EXPECT_EQ(serialize(notification{"n", array{}}), R"({"jsonrpc":"2.0","method":"n","params":[]})");
}

// JSONRPC-4 (id String or Number), id.hpp: the id keeps its JSON type.
TEST(Serialize, IdsKeepTheirJsonType) {
    EXPECT_EQ(serialize(response{"7", true}), R"({"jsonrpc":"2.0","id":"7","result":true})");
    EXPECT_EQ(serialize(response{7, true}), R"({"jsonrpc":"2.0","id":7,"result":true})");
}

// JSONRPC-5.1 ("data ... MAY be omitted"): null data is left out, any other value (even false) is kept.
TEST(Serialize, ErrorDataIsOmittedOnlyWhenNull) {
    EXPECT_EQ(serialize(error_response{1, error_object{-32600, "m", nullptr}}),
              R"({"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"m"}})");
    EXPECT_EQ(serialize(error_response{1, error_object{-32600, "m", 0}}),
              R"({"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"m","data":0}})");
}

// JSONRPC-5 ("id ... MUST be Null" when it could not be detected).
TEST(Serialize, ErrorResponseWithoutIdWritesNull) {
    EXPECT_EQ(serialize(error_response{std::nullopt, error_object{-32700, "Parse error", nullptr}}),
              R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})");
}

// codec.hpp: input member order is not preserved; the output order is the fixed one.
TEST(Serialize, ParsedInputIsReorderedCanonically) {
    auto p = parse_one(R"({"params":[1],"method":"m","id":3,"jsonrpc":"2.0"})");
    ASSERT_THAT(p, Holds<request>());
    EXPECT_EQ(serialize(*p), R"({"jsonrpc":"2.0","id":3,"method":"m","params":[1]})");
    auto e = parse_one(R"({"error":{"data":1,"message":"m","code":5},"id":"z","jsonrpc":"2.0"})");
    ASSERT_THAT(e, Holds<error_response>());
    EXPECT_EQ(serialize(*e), R"({"jsonrpc":"2.0","id":"z","error":{"code":5,"message":"m","data":1}})");
}

// codec.hpp: to_json is the object serialize writes.
TEST(Serialize, ToJsonIsTheSerializedObject) {
    message const m = request{"a", "x", array{1}};
    auto const o = to_json(m);
    EXPECT_EQ(boost::json::serialize(o), serialize(m));
    ASSERT_EQ(o.size(), 4u);
    auto it = o.begin();
    EXPECT_EQ((it++)->key(), "jsonrpc");
    EXPECT_EQ((it++)->key(), "id");
    EXPECT_EQ((it++)->key(), "method");
    EXPECT_EQ((it++)->key(), "params");
}

// codec.hpp, json_text.hpp: doubles go out as JavaScript writes them, and a double with an integral value
// (-0 too) reads back as that integer, the same bytes again.
TEST(Serialize, DoublesGoOutAsJavaScriptWritesThem) {
    message const m = response{9, array{5.0, -0.0, 0.1, 1e21, -2.5e-8}};
    auto const wire = serialize(m);
    EXPECT_EQ(wire, R"({"jsonrpc":"2.0","id":9,"result":[5,0,0.1,1e+21,-2.5e-8]})");
    auto p = parse_one(wire);
    ASSERT_TRUE(p) << wire;
    EXPECT_EQ(serialize(*p), wire);
    EXPECT_EQ(serialize(std::vector<message>{m}), "[" + wire + "]");
    EXPECT_EQ(serialize(notification{"n", object{{"progress", 2.0}}}),
              R"({"jsonrpc":"2.0","method":"n","params":{"progress":2}})");
}

// codec.hpp: "The wire form of one message, without a trailing newline."
TEST(Serialize, NoTrailingNewline) {
    auto const wire = serialize(notification{"n", nullptr});
    ASSERT_FALSE(wire.empty());
    EXPECT_EQ(wire.back(), '}');
}

// codec.hpp: the reply owed for bad JSON is exactly the JSON-RPC Parse error with id null.
TEST(Serialize, ParseErrorReplyWireForm) {
    auto p = parse_one("{");
    ASSERT_FALSE(p);
    ASSERT_TRUE(p.error().reply);
    auto const reply = boost::json::parse(serialize(message{*p.error().reply}));
    EXPECT_EQ(reply.at("jsonrpc"), "2.0");
    EXPECT_TRUE(reply.at("id").is_null());
    EXPECT_EQ(reply.at("error").at("code"), -32700);
    EXPECT_TRUE(reply.at("error").at("message").is_string());
    EXPECT_FALSE(reply.at("error").as_object().contains("data"));
}

// message.hpp response::result_tail: pre-serialized members written as the result's last ones, the same
// bytes as a result that holds them (both through serialize and through to_json, which batches use).
TEST(SerializeResultTail, SameBytesAsTheMembersInTheResult) {
    auto const tail =
        std::make_shared<std::string const>(R"("_meta":{"k":{"name":"n","v":"a\"b"}},"z":[1,2])");
    for (auto const* text : {R"({"content":[{"type":"text","text":"hi"}],"resultType":"complete"})", "{}"}) {
        auto const bare = boost::json::parse(text).as_object();
        auto whole = bare;
        auto const members = boost::json::parse("{" + *tail + "}").as_object();
        for (auto const& kv : members)
            whole[kv.key()] = kv.value();
        response const spliced{request_id{7}, bare, tail};
        response const built{request_id{7}, whole};
        EXPECT_EQ(serialize(message{spliced}), serialize(message{built})) << text;
        EXPECT_EQ(boost::json::serialize(to_json(message{spliced})), serialize(message{built})) << text;
        EXPECT_EQ(serialize(std::vector<message>{spliced}), serialize(std::vector<message>{built})) << text;
    }
}

// A tail applies to an object result only; an empty tail writes nothing.
TEST(SerializeResultTail, IgnoredWithoutAnObjectResultOrText) {
    auto const tail = std::make_shared<std::string const>(R"("a":1)");
    EXPECT_EQ(serialize(message{response{request_id{1}, boost::json::array{1}, tail}}),
              serialize(message{response{request_id{1}, boost::json::array{1}}}));
    EXPECT_EQ(serialize(message{response{request_id{1}, boost::json::object{{"x", 1}},
                                         std::make_shared<std::string const>()}}),
              R"({"jsonrpc":"2.0","id":1,"result":{"x":1}})");
}

// Equality reads the tail's text, not its pointer.
TEST(SerializeResultTail, EqualityComparesTheText) {
    auto const a = std::make_shared<std::string const>(R"("a":1)");
    auto const b = std::make_shared<std::string const>(R"("a":1)");
    auto const c = std::make_shared<std::string const>(R"("a":2)");
    EXPECT_EQ((response{request_id{1}, boost::json::object{}, a}),
              (response{request_id{1}, boost::json::object{}, b}));
    EXPECT_NE((response{request_id{1}, boost::json::object{}, a}),
              (response{request_id{1}, boost::json::object{}, c}));
    EXPECT_NE((response{request_id{1}, boost::json::object{}, a}),
              (response{request_id{1}, boost::json::object{}}));
}

} // namespace
