// Parsing single frames by the exact JSON-RPC 2.0 rules: which bytes are messages, which kind each is, and
// the error reply owed for each bad one.
//
// Requirement tags name the JSON-RPC 2.0 section (https://www.jsonrpc.org/specification); the codec's own
// contract is include/duet/jsonrpc/codec.hpp.
#include <duet/jsonrpc/codec.hpp>

#include "parse_matchers.hpp"

#include <boost/json/parse.hpp>
#include <boost/system/system_error.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <ostream>
#include <string>

namespace {

using namespace duet::jsonrpc;
using test::FailsSilently;
using test::FailsWith;
using test::Holds;
using test::parse_one;

// ---------------------------------------------------------------------------------------------------------------
// JSONRPC-5.1 -32700 "Parse error", id null: https://www.jsonrpc.org/specification#error_object

struct bad_json_case {
    std::string name;
    std::string bytes;

    friend void PrintTo(bad_json_case const& row, std::ostream* os) { *os << row.name; }
};

class ParseBadJson : public ::testing::TestWithParam<bad_json_case> {};

TEST_P(ParseBadJson, IsParseErrorWithNullId) {
    EXPECT_THAT(parse_one(GetParam().bytes), FailsWith(parse_errc::bad_json, std::nullopt));
}

INSTANTIATE_TEST_SUITE_P(
    Parse, ParseBadJson,
    ::testing::Values(
        bad_json_case{"EmptyInput", ""}, bad_json_case{"WhitespaceOnly", " \r\n\t"},
        bad_json_case{"Truncated", R"({"jsonrpc":"2.0","id":1,"method":"ping")"},
        bad_json_case{"TruncatedInsideString", R"({"jsonrpc":"2.0","id":1,"method":"pi)"},
        bad_json_case{"TrailingGarbage", R"({"jsonrpc":"2.0","id":1,"method":"ping"} x)"},
        bad_json_case{"TwoObjectsInOneFrame",
                      R"({"jsonrpc":"2.0","method":"a"}{"jsonrpc":"2.0","method":"b"})"},
        bad_json_case{"InvalidUtf8InString", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xff\"}"},
        bad_json_case{"OverlongUtf8InString", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xc0\xaf\"}"},
        bad_json_case{"LoneSurrogateEscape", R"({"jsonrpc":"2.0","id":1,"method":"\ud800"})"},
        bad_json_case{"Comment", R"({"jsonrpc":"2.0","id":1,"method":"ping"}/* c */)"},
        bad_json_case{"TrailingComma", R"({"jsonrpc":"2.0","id":1,"method":"ping",})"},
        bad_json_case{"SingleQuotes", R"({'jsonrpc':'2.0','id':1,'method':'ping'})"},
        bad_json_case{"BareWord", "ping"}, bad_json_case{"NaNLiteral", R"({"jsonrpc":"2.0","id":NaN})"}),
    [](auto const& row) { return row.param.name; });

// ---------------------------------------------------------------------------------------------------------------
// JSONRPC-4 request object, JSONRPC-4.2 parameter structures, JSONRPC-5 "id ... MUST be Null" when it could
// not be detected: https://www.jsonrpc.org/specification#request_object and #parameter_structures

struct invalid_request_case {
    std::string name;
    std::string json;
    parse_errc reason;
    std::optional<request_id> reply_id; // nullopt: the reply carries "id": null

    friend void PrintTo(invalid_request_case const& row, std::ostream* os) { *os << row.name; }
};

class ParseInvalidRequest : public ::testing::TestWithParam<invalid_request_case> {};

TEST_P(ParseInvalidRequest, IsInvalidRequestEchoingOnlyAValidId) {
    auto const& c = GetParam();
    EXPECT_THAT(parse_one(c.json), FailsWith(c.reason, c.reply_id));
}

using E = parse_errc;
using R = invalid_request_case;

INSTANTIATE_TEST_SUITE_P(
    Parse, ParseInvalidRequest,
    ::testing::Values(
        // jsonrpc
        R{"MissingJsonrpc", R"({"id":1,"method":"ping"})", E::bad_jsonrpc_version, 1},
        R{"JsonrpcOneDotZero", R"({"jsonrpc":"1.0","id":1,"method":"ping"})", E::bad_jsonrpc_version, 1},
        R{"JsonrpcAsNumber", R"({"jsonrpc":2.0,"id":"a","method":"ping"})", E::bad_jsonrpc_version, "a"},
        R{"JsonrpcWithSpace", R"({"jsonrpc":"2.0 ","id":3,"method":"ping"})", E::bad_jsonrpc_version, 3},
        R{"JsonrpcNull", R"({"jsonrpc":null,"method":"ping"})", E::bad_jsonrpc_version, std::nullopt},
        R{"EmptyObject", "{}", E::bad_jsonrpc_version, std::nullopt},
        // method
        R{"MissingMethod", R"({"jsonrpc":"2.0","id":1})", E::bad_method, 1},
        R{"MissingMethodStringId", R"({"jsonrpc":"2.0","id":"x"})", E::bad_method, "x"},
        R{"MethodNumber", R"({"jsonrpc":"2.0","id":"req-1","method":1,"params":"bar"})", E::bad_method,
          "req-1"},
        R{"MethodNull", R"({"jsonrpc":"2.0","id":2,"method":null})", E::bad_method, 2},
        R{"MethodObject", R"({"jsonrpc":"2.0","id":2,"method":{}})", E::bad_method, 2},
        R{"MethodNumberWithoutId", R"({"jsonrpc":"2.0","method":1,"params":"bar"})", E::bad_method,
          std::nullopt},
        // id
        R{"IdNull", R"({"jsonrpc":"2.0","id":null,"method":"ping"})", E::bad_id, std::nullopt},
        R{"IdTrue", R"({"jsonrpc":"2.0","id":true,"method":"ping"})", E::bad_id, std::nullopt},
        R{"IdFalse", R"({"jsonrpc":"2.0","id":false,"method":"ping"})", E::bad_id, std::nullopt},
        R{"IdFractional", R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})", E::bad_id, std::nullopt},
        R{"IdIntegralWithFraction", R"({"jsonrpc":"2.0","id":1.0,"method":"ping"})", E::bad_id, std::nullopt},
        R{"IdWithExponent", R"({"jsonrpc":"2.0","id":1e3,"method":"ping"})", E::bad_id, std::nullopt},
        R{"IdObject", R"({"jsonrpc":"2.0","id":{"n":1},"method":"ping"})", E::bad_id, std::nullopt},
        R{"IdArray", R"({"jsonrpc":"2.0","id":[1],"method":"ping"})", E::bad_id, std::nullopt},
        R{"IdAboveInt64", R"({"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"})", E::bad_id,
          std::nullopt},
        R{"IdBeyondUint64", R"({"jsonrpc":"2.0","id":123456789012345678901234,"method":"ping"})", E::bad_id,
          std::nullopt},
        R{"IdBelowInt64", R"({"jsonrpc":"2.0","id":-9223372036854775809,"method":"ping"})", E::bad_id,
          std::nullopt},
        R{"BadVersionAndBadIdRepliesNull", R"({"jsonrpc":"1.0","id":1.5,"method":"ping"})",
          E::bad_jsonrpc_version, std::nullopt},
        // params
        R{"ParamsString", R"({"jsonrpc":"2.0","id":1,"method":"ping","params":"bar"})", E::bad_params, 1},
        R{"ParamsNumber", R"({"jsonrpc":"2.0","id":"s","method":"ping","params":42})", E::bad_params, "s"},
        R{"ParamsNull", R"({"jsonrpc":"2.0","id":1,"method":"ping","params":null})", E::bad_params, 1},
        R{"ParamsBoolean", R"({"jsonrpc":"2.0","id":1,"method":"ping","params":true})", E::bad_params, 1},
        R{"NotificationParamsString", R"({"jsonrpc":"2.0","method":"note","params":"x"})", E::bad_params,
          std::nullopt},
        // not an object
        R{"TopLevelNumber", "42", E::not_an_object, std::nullopt},
        R{"TopLevelString", R"("ping")", E::not_an_object, std::nullopt},
        R{"TopLevelNull", "null", E::not_an_object, std::nullopt},
        R{"TopLevelBoolean", "true", E::not_an_object, std::nullopt}),
    [](auto const& row) { return row.param.name; });

// ---------------------------------------------------------------------------------------------------------------
// JSONRPC-5 / JSONRPC-5.1 response and error object; codec.hpp: a malformed response is never answered.
// https://www.jsonrpc.org/specification#response_object

struct malformed_response_case {
    std::string name;
    std::string json;

    friend void PrintTo(malformed_response_case const& row, std::ostream* os) { *os << row.name; }
};

class ParseMalformedResponse : public ::testing::TestWithParam<malformed_response_case> {};

TEST_P(ParseMalformedResponse, IsBadResponseWithNoReply) {
    EXPECT_THAT(parse_one(GetParam().json), FailsSilently(parse_errc::bad_response));
}

using M = malformed_response_case;

INSTANTIATE_TEST_SUITE_P(
    Parse, ParseMalformedResponse,
    ::testing::Values(
        M{"ResultAndErrorTogether",
          R"({"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}})"},
        M{"ResultWithoutId", R"({"jsonrpc":"2.0","result":{}})"},
        M{"ResultWithNullId", R"({"jsonrpc":"2.0","id":null,"result":{}})"},
        M{"ResultWithFractionalId", R"({"jsonrpc":"2.0","id":1.5,"result":{}})"},
        M{"ResultWithoutJsonrpc", R"({"id":1,"result":{}})"},
        M{"ResultWithWrongJsonrpc", R"({"jsonrpc":"1.0","id":1,"result":{}})"},
        M{"ErrorWithoutId", R"({"jsonrpc":"2.0","error":{"code":-32600,"message":"m"}})"},
        M{"ErrorWithBooleanId", R"({"jsonrpc":"2.0","id":true,"error":{"code":-32600,"message":"m"}})"},
        M{"ErrorWithoutJsonrpc", R"({"id":1,"error":{"code":-32600,"message":"m"}})"},
        M{"ErrorIsString", R"({"jsonrpc":"2.0","id":1,"error":"boom"})"},
        M{"ErrorIsNull", R"({"jsonrpc":"2.0","id":1,"error":null})"},
        M{"ErrorCodeMissing", R"({"jsonrpc":"2.0","id":1,"error":{"message":"m"}})"},
        M{"ErrorCodeString", R"({"jsonrpc":"2.0","id":1,"error":{"code":"-32600","message":"m"}})"},
        M{"ErrorCodeFractional", R"({"jsonrpc":"2.0","id":1,"error":{"code":-32600.5,"message":"m"}})"},
        M{"ErrorCodeAboveInt32", R"({"jsonrpc":"2.0","id":1,"error":{"code":2147483648,"message":"m"}})"},
        M{"ErrorCodeBelowInt32", R"({"jsonrpc":"2.0","id":1,"error":{"code":-2147483649,"message":"m"}})"},
        M{"ErrorMessageMissing", R"({"jsonrpc":"2.0","id":1,"error":{"code":-32600}})"},
        M{"ErrorMessageNumber", R"({"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":7}})"}),
    [](auto const& row) { return row.param.name; });

// ---------------------------------------------------------------------------------------------------------------
// Classification of valid messages. JSONRPC-4, -4.1, -5: https://www.jsonrpc.org/specification#request_object

// JSONRPC-4
TEST(Parse, RequestKeepsIdMethodAndParams) {
    auto p = parse_one(R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}})");
    ASSERT_THAT(p, Holds<request>());
    auto const& r = std::get<request>(*p);
    EXPECT_EQ(r.id, request_id{7});
    EXPECT_EQ(r.method, "tools/call");
    EXPECT_EQ(r.params, boost::json::parse(R"({"name":"echo"})"));
}

// JSONRPC-4.2 (params by position)
TEST(Parse, RequestAcceptsArrayParams) {
    auto p = parse_one(R"({"jsonrpc":"2.0","id":"a","method":"sum","params":[1,2]})");
    ASSERT_THAT(p, Holds<request>());
    EXPECT_EQ(std::get<request>(*p).params, boost::json::parse("[1,2]"));
}

// JSONRPC-4 ("params ... MAY be omitted")
TEST(Parse, RequestWithoutParamsHasNullParams) {
    auto p = parse_one(R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
    ASSERT_THAT(p, Holds<request>());
    EXPECT_TRUE(std::get<request>(*p).params.is_null());
}

// JSONRPC-4.1
TEST(Parse, ObjectWithoutIdIsNotification) {
    auto p = parse_one(R"({"jsonrpc":"2.0","method":"notifications/initialized","params":{}})");
    ASSERT_THAT(p, Holds<notification>());
    EXPECT_EQ(std::get<notification>(*p).method, "notifications/initialized");
    EXPECT_EQ(std::get<notification>(*p).params, boost::json::object{});
}

// JSONRPC-4 (id is a String or Number; MCP echoes it with the same JSON type)
TEST(Parse, StringAndIntegerIdsKeepTheirJsonType) {
    auto as_string = parse_one(R"({"jsonrpc":"2.0","id":"7","method":"ping"})");
    auto as_integer = parse_one(R"({"jsonrpc":"2.0","id":7,"method":"ping"})");
    ASSERT_THAT(as_string, Holds<request>());
    ASSERT_THAT(as_integer, Holds<request>());
    EXPECT_TRUE(std::get<request>(*as_string).id.is_string());
    EXPECT_TRUE(std::get<request>(*as_integer).id.is_integer());
    EXPECT_NE(std::get<request>(*as_string).id, std::get<request>(*as_integer).id);
}

// JSONRPC-4 (id); ids span the whole int64 range
TEST(Parse, Int64ExtremesAreValidIds) {
    auto max = parse_one(R"({"jsonrpc":"2.0","id":9223372036854775807,"method":"ping"})");
    auto min = parse_one(R"({"jsonrpc":"2.0","id":-9223372036854775808,"method":"ping"})");
    ASSERT_THAT(max, Holds<request>());
    ASSERT_THAT(min, Holds<request>());
    EXPECT_EQ(std::get<request>(*max).id, request_id{std::numeric_limits<std::int64_t>::max()});
    EXPECT_EQ(std::get<request>(*min).id, request_id{std::numeric_limits<std::int64_t>::min()});
}

// JSONRPC-5 (result is REQUIRED on success, any value, including null)
TEST(Parse, ResponseCarriesResultEvenNull) {
    auto p = parse_one(R"({"jsonrpc":"2.0","id":3,"result":null})");
    ASSERT_THAT(p, Holds<response>());
    EXPECT_EQ(std::get<response>(*p).id, request_id{3});
    EXPECT_TRUE(std::get<response>(*p).result.is_null());
}

// JSONRPC-5.1
TEST(Parse, ErrorResponseCarriesCodeMessageAndData) {
    auto p =
        parse_one(R"({"jsonrpc":"2.0","id":"r","error":{"code":-32601,"message":"nope","data":{"m":"x"}}})");
    ASSERT_THAT(p, Holds<error_response>());
    auto const& e = std::get<error_response>(*p);
    EXPECT_EQ(e.id, request_id{"r"});
    EXPECT_EQ(e.error.code, code::method_not_found);
    EXPECT_EQ(e.error.message, "nope");
    EXPECT_EQ(e.error.data, boost::json::parse(R"({"m":"x"})"));
}

// JSONRPC-5 ("If there was an error in detecting the id ... it MUST be Null")
TEST(Parse, ErrorResponseWithNullIdIsAccepted) {
    auto p = parse_one(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})");
    ASSERT_THAT(p, Holds<error_response>());
    EXPECT_FALSE(std::get<error_response>(*p).id.has_value());
    EXPECT_EQ(std::get<error_response>(*p).error.code, code::parse_error);
}

// JSONRPC-5.1 ("code ... MUST be an integer"): the whole int32 range is accepted
TEST(Parse, ErrorCodeAcceptsInt32Extremes) {
    auto high = parse_one(R"({"jsonrpc":"2.0","id":1,"error":{"code":2147483647,"message":"m"}})");
    auto low = parse_one(R"({"jsonrpc":"2.0","id":1,"error":{"code":-2147483648,"message":"m"}})");
    ASSERT_THAT(high, Holds<error_response>());
    ASSERT_THAT(low, Holds<error_response>());
    EXPECT_EQ(std::get<error_response>(*high).error.code, std::numeric_limits<std::int32_t>::max());
    EXPECT_EQ(std::get<error_response>(*low).error.code, std::numeric_limits<std::int32_t>::min());
}

// JSON (RFC 8259 §2) allows insignificant whitespace around the value; member order carries no meaning.
TEST(Parse, SurroundingWhitespaceAndMemberOrderDoNotMatter) {
    auto p = parse_one(" \r\n{\"params\":[1],\"method\":\"m\",\"id\":3,\"jsonrpc\":\"2.0\"}\n");
    ASSERT_THAT(p, Holds<request>());
    EXPECT_EQ(std::get<request>(*p), (request{3, "m", boost::json::array{1}}));
}

// The envelope's members are read in one pass: a duplicated member counts by its last occurrence (as the
// lookups before did, Boost.JSON keeping the last), a method decides over a result, and members the envelope
// does not know (including keys that share a length with known ones) change nothing.
TEST(Parse, EnvelopeMembersReadInOnePassKeepTheLastDuplicateAndIgnoreUnknownKeys) {
    auto dup = parse_one(R"({"jsonrpc":"1.0","id":1,"method":"a","jsonrpc":"2.0","method":"b","id":"x"})");
    ASSERT_THAT(dup, Holds<request>());
    EXPECT_EQ(std::get<request>(*dup), (request{"x", "b", nullptr}));

    EXPECT_THAT(parse_one(R"({"jsonrpc":"2.0","id":1,"method":"m","jsonrpc":"1.0"})"),
                FailsWith(parse_errc::bad_jsonrpc_version, request_id(1)));
    EXPECT_THAT(parse_one(R"({"jsonrpc":"2.0","id":1,"result":1,"method":"m"})"), Holds<request>());

    auto odd = parse_one(R"({"idx":1,"jsonrpx":"2.0","jsonrpc":"2.0","ix":3,"params":[2],"paramz":{},)"
                         R"("methox":"n","method":"m","id":4,"errorx":1,"resulx":2})");
    ASSERT_THAT(odd, Holds<request>());
    EXPECT_EQ(std::get<request>(*odd), (request{4, "m", boost::json::array{2}}));

    auto reply = parse_one(R"({"result":[1],"id":9,"jsonrpc":"2.0","error_":0})");
    ASSERT_THAT(reply, Holds<response>());
    EXPECT_EQ(std::get<response>(*reply), (response{9, boost::json::array{1}}));
}

// codec.hpp: parse_message classifies an already-parsed value exactly as parse_frame classifies its bytes.
TEST(Parse, ParseMessageAgreesWithParseFrame) {
    char const* const inputs[] = {
        R"({"jsonrpc":"2.0","id":1,"method":"ping"})",
        R"({"jsonrpc":"2.0","method":"note"})",
        R"({"jsonrpc":"2.0","id":1,"result":[]})",
        R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})",
        R"({"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}})",
        R"(17)",
    };
    for (auto const* in : inputs) {
        auto direct = parse_message(boost::json::parse(in));
        auto framed = parse_one(in);
        ASSERT_EQ(direct.has_value(), framed.has_value()) << in;
        if (direct) {
            EXPECT_EQ(*direct, *framed) << in;
        } else {
            EXPECT_EQ(direct.error().reason, framed.error().reason) << in;
            EXPECT_EQ(direct.error().reply, framed.error().reply) << in;
        }
    }
}

// codec.hpp: parsed::value() throws at the edges, carrying the parse reason as a system error.
TEST(Parse, ValueOfFailureThrowsSystemErrorWithReason) {
    auto p = parse_one(R"({"jsonrpc":"2.0","id":null,"method":"ping"})");
    try {
        (void)p.value();
        ADD_FAILURE() << "value() did not throw";
    } catch (boost::system::system_error const& e) {
        EXPECT_EQ(e.code(), make_error_code(parse_errc::bad_id));
    }
}

} // namespace
