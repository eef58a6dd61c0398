// parse_errc and its category, error_object, and the wire error each parse failure maps to.
//
// Requirement tags: STYLE §6 rule 6 (every error enum has a category and a test walking its enumerators);
// JSONRPC-5.1 codes -32700 / -32600 https://www.jsonrpc.org/specification#error_object
#include <duet/jsonrpc/codec.hpp>
#include <duet/jsonrpc/error.hpp>

#include <boost/system/error_code.hpp>
#include <boost/system/result.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>

namespace {

using namespace duet::jsonrpc;

struct errc_case {
    std::string name;
    parse_errc e;
    std::int32_t wire_code;

    friend void PrintTo(errc_case const& row, std::ostream* os) { *os << row.name; }
};

// Every enumerator, first to last; ListsEveryEnumerator keeps this table complete.
errc_case const all_errcs[] = {
    {"BadJson", parse_errc::bad_json, -32700},
    {"TooLarge", parse_errc::too_large, -32600},
    {"TooDeep", parse_errc::too_deep, -32600},
    {"NotAnObject", parse_errc::not_an_object, -32600},
    {"EmptyBatch", parse_errc::empty_batch, -32600},
    {"BadJsonrpcVersion", parse_errc::bad_jsonrpc_version, -32600},
    {"BadMethod", parse_errc::bad_method, -32600},
    {"BadId", parse_errc::bad_id, -32600},
    {"BadParams", parse_errc::bad_params, -32600},
    {"BadResponse", parse_errc::bad_response, -32600},
    {"UnknownShape", parse_errc::unknown_shape, -32600},
};

class ParseErrc : public ::testing::TestWithParam<errc_case> {};

TEST_P(ParseErrc, HasCategoryMessageAndWireError) {
    auto const& c = GetParam();
    boost::system::error_code const ec = c.e; // implicit: is_error_code_enum
    EXPECT_EQ(ec, make_error_code(c.e));
    EXPECT_STREQ(ec.category().name(), "duet.jsonrpc.parse");
    EXPECT_EQ(&ec.category(), &parse_category());
    EXPECT_EQ(ec.value(), static_cast<int>(c.e));
    EXPECT_TRUE(ec.failed());
    EXPECT_FALSE(ec.message().empty());

    auto const wire = to_error_object(c.e);
    EXPECT_EQ(wire.code, c.wire_code);
    EXPECT_EQ(wire.message, ec.message());
    EXPECT_TRUE(wire.data.is_null());
}

INSTANTIATE_TEST_SUITE_P(Error, ParseErrc, ::testing::ValuesIn(all_errcs),
                         [](auto const& row) { return row.param.name; });

// The table above runs from the first enumerator to the last without gaps.
TEST(Error, ListsEveryEnumerator) {
    ASSERT_EQ(std::size(all_errcs), static_cast<std::size_t>(parse_errc::unknown_shape) -
                                        static_cast<std::size_t>(parse_errc::bad_json) + 1);
    for (std::size_t i = 0; i < std::size(all_errcs); ++i)
        EXPECT_EQ(static_cast<int>(all_errcs[i].e),
                  static_cast<int>(parse_errc::bad_json) + static_cast<int>(i));
}

// Zero stays "no error": the first enumerator is 1.
TEST(Error, NoEnumeratorIsZero) {
    EXPECT_EQ(static_cast<int>(parse_errc::bad_json), 1);
    EXPECT_FALSE(boost::system::error_code(0, parse_category()).failed());
}

// Each enumerator says something of its own, so logs tell the failures apart.
TEST(Error, MessagesAreDistinct) {
    std::set<std::string> messages;
    for (auto const& c : all_errcs)
        messages.insert(make_error_code(c.e).message());
    EXPECT_EQ(messages.size(), std::size(all_errcs));
}

// A value outside the enum still has a message (a category must never return garbage).
TEST(Error, UnknownValueHasFallbackMessage) {
    EXPECT_FALSE(parse_category().message(999).empty());
    EXPECT_FALSE(parse_category().message(0).empty());
}

// Only -32700 for bad JSON: JSON-RPC reserves it for "Invalid JSON was received by the server".
TEST(Error, OnlyBadJsonMapsToParseError) {
    for (auto const& c : all_errcs)
        EXPECT_EQ(to_error_object(c.e).code == code::parse_error, c.e == parse_errc::bad_json) << c.name;
}

// JSONRPC-5.1 codes table.
TEST(Error, CodeConstantsMatchTheSpec) {
    EXPECT_EQ(code::parse_error, -32700);
    EXPECT_EQ(code::invalid_request, -32600);
    EXPECT_EQ(code::method_not_found, -32601);
    EXPECT_EQ(code::invalid_params, -32602);
    EXPECT_EQ(code::internal_error, -32603);
}

// error.hpp: error_object compares all three members, data included.
TEST(Error, ErrorObjectEqualityIncludesData) {
    error_object const a{code::invalid_params, "bad", {}};
    EXPECT_EQ(a, (error_object{code::invalid_params, "bad", {}}));
    EXPECT_NE(a, (error_object{code::invalid_params, "bad", "detail"}));
    EXPECT_NE(a, (error_object{code::invalid_request, "bad", {}}));
    EXPECT_NE(a, (error_object{code::invalid_params, "Bad", {}}));
    EXPECT_EQ(error_object{}.code, code::internal_error);
}

// error.hpp: result<T, error_object>::value() throws at the edges, carrying the message.
TEST(Error, ErrorObjectResultValueThrowsWithMessage) {
    boost::system::result<int, error_object> r = error_object{code::internal_error, "went wrong", {}};
    try {
        (void)r.value();
        ADD_FAILURE() << "value() did not throw";
    } catch (std::runtime_error const& e) {
        EXPECT_STREQ(e.what(), "went wrong");
    }
}

} // namespace
