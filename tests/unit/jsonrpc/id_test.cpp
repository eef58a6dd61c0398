// request_id: which JSON values are ids, and that an id keeps the JSON type it arrived with.
//
// Requirement tags: JSONRPC-4 ("id ... MUST contain a String, Number, or NULL value"; Numbers SHOULD NOT
// contain fractional parts) https://www.jsonrpc.org/specification#request_object, narrowed by MCP (no null
// request ids, ids echoed with the same JSON type) as documented in include/duet/jsonrpc/id.hpp.
#include <duet/jsonrpc/id.hpp>

#include "parse_matchers.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace {

using duet::jsonrpc::request_id;

constexpr auto int64_max = std::numeric_limits<std::int64_t>::max();
constexpr auto int64_min = std::numeric_limits<std::int64_t>::min();

// ---------------------------------------------------------------------------------------------------------------
// from_json for every JSON kind.

struct from_json_case {
    std::string name;
    boost::json::value v;
    std::optional<request_id> want; // nullopt: not an id

    friend void PrintTo(from_json_case const& row, std::ostream* os) { *os << row.name; }
};

class IdFromJson : public ::testing::TestWithParam<from_json_case> {};

TEST_P(IdFromJson, ReadsOnlyStringsAndInt64Integers) {
    auto const& c = GetParam();
    EXPECT_EQ(request_id::from_json(c.v), c.want);
}

using F = from_json_case;

INSTANTIATE_TEST_SUITE_P(
    Id, IdFromJson,
    ::testing::Values(F{"String", "abc", request_id{"abc"}}, F{"EmptyString", "", request_id{""}},
                      F{"DigitString", "7", request_id{"7"}}, F{"Int64", 42, request_id{42}},
                      F{"NegativeInt64", -5, request_id{-5}}, F{"Zero", 0, request_id{std::int64_t{0}}},
                      F{"Int64Max", int64_max, request_id{int64_max}},
                      F{"Int64Min", int64_min, request_id{int64_min}},
                      F{"Uint64InInt64Range", std::uint64_t{9}, request_id{9}},
                      F{"Uint64AtInt64Max", static_cast<std::uint64_t>(int64_max), request_id{int64_max}},
                      F{"Uint64AboveInt64Max", static_cast<std::uint64_t>(int64_max) + 1, std::nullopt},
                      F{"Uint64Max", std::numeric_limits<std::uint64_t>::max(), std::nullopt},
                      F{"Null", nullptr, std::nullopt}, F{"True", true, std::nullopt},
                      F{"False", false, std::nullopt}, F{"Fractional", 1.5, std::nullopt},
                      F{"IntegralDouble", 1.0, std::nullopt}, F{"Array", boost::json::array{1}, std::nullopt},
                      F{"EmptyArray", boost::json::array{}, std::nullopt},
                      F{"Object", boost::json::object{{"id", 1}}, std::nullopt}),
    [](auto const& row) { return row.param.name; });

// JSONRPC-4 + MCP: an id read from the wire keeps its kind, and to_json writes the same kind back.
TEST(Id, ToJsonKeepsTheJsonType) {
    for (auto const* text : {"7", "\"7\"", "-1", "\"\"", "9223372036854775807"}) {
        auto const v = boost::json::parse(text);
        auto const id = request_id::from_json(v);
        ASSERT_TRUE(id) << text;
        EXPECT_EQ(id->to_json(), v) << text;
        EXPECT_EQ(id->to_json().kind(), v.kind()) << text;
    }
}

// id.hpp: "7 and "7" are different ids".
TEST(Id, IntegerAndStringWithSameDigitsDiffer) {
    EXPECT_NE(request_id{7}, request_id{"7"});
    EXPECT_EQ(request_id{7}, request_id{std::int64_t{7}});
    EXPECT_EQ(request_id{"7"}, request_id{std::string("7")});
    EXPECT_EQ(request_id{"7"}, request_id{std::string_view("7")});
    EXPECT_NE(request_id{7}, request_id{8});
    EXPECT_NE(request_id{"a"}, request_id{"A"});
}

// id.hpp accessors.
TEST(Id, AccessorsReportTheKind) {
    request_id const n{-3};
    request_id const s{"x"};
    EXPECT_TRUE(n.is_integer());
    EXPECT_FALSE(n.is_string());
    EXPECT_EQ(n.as_integer(), -3);
    EXPECT_TRUE(s.is_string());
    EXPECT_FALSE(s.is_integer());
    EXPECT_EQ(s.as_string(), "x");
}

// std::hash agrees with ==, so ids key unordered containers (pending-request tables).
TEST(Id, HashAgreesWithEquality) {
    std::hash<request_id> const h;
    EXPECT_EQ(h(request_id{7}), h(request_id{std::int64_t{7}}));
    EXPECT_EQ(h(request_id{"abc"}), h(request_id{std::string("abc")}));
    std::unordered_set<request_id> const ids{request_id{7}, request_id{"7"}, request_id{7}, request_id{""}};
    EXPECT_EQ(ids.size(), 3u);
    EXPECT_TRUE(ids.contains(request_id{"7"}));
    EXPECT_FALSE(ids.contains(request_id{"8"}));
}

// A reply is matched to its request by an id read back from the wire.
TEST(Id, IdReadFromWireFindsPendingRequest) {
    std::unordered_map<request_id, std::string> pending{{request_id{1}, "int"}, {request_id{"1"}, "string"}};
    EXPECT_EQ(pending.at(*request_id::from_json(boost::json::parse("1"))), "int");
    EXPECT_EQ(pending.at(*request_id::from_json(boost::json::parse("\"1\""))), "string");
}

// operator<=>: a strict total order, so ids also key ordered containers.
TEST(Id, OrderingIsTotalAcrossKinds) {
    std::set<request_id> const ids{request_id{"b"}, request_id{2}, request_id{"a"}, request_id{-1},
                                   request_id{2}};
    EXPECT_EQ(ids.size(), 4u);
    EXPECT_LT(request_id{-1}, request_id{2});
    EXPECT_LT(request_id{"a"}, request_id{"b"});
    EXPECT_TRUE((request_id{1} < request_id{"1"}) != (request_id{"1"} < request_id{1}));
}

// id.hpp: "A short human-readable form for logs: 7 or "abc"".
TEST(Id, ToStringQuotesOnlyStrings) {
    EXPECT_EQ(request_id{7}.to_string(), "7");
    EXPECT_EQ(request_id{-12}.to_string(), "-12");
    EXPECT_EQ(request_id{"abc"}.to_string(), "\"abc\"");
    EXPECT_EQ(request_id{"7"}.to_string(), "\"7\"");
    EXPECT_EQ(request_id{"a\"b"}.to_string(), R"("a\"b")");
    EXPECT_EQ(request_id{int64_min}.to_string(), "-9223372036854775808");
}

} // namespace
