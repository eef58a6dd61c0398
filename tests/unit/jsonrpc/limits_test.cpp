// parse_limits: a hostile peer cannot make the codec allocate or recurse without bound. Over a limit is a
// -32600 with id null; exactly at the limit parses.
//
// Requirement tag: DUET-JSONRPC-LIMITS, include/duet/jsonrpc/codec.hpp (`parse_limits`); the wire error is
// JSONRPC-5.1 -32600 https://www.jsonrpc.org/specification#error_object
#include <duet/jsonrpc/codec.hpp>

#include "parse_matchers.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <string>

namespace {

using namespace duet::jsonrpc;
using test::FailsWith;
using test::Holds;
using test::parse_one;

// A request whose params nest `depth` containers in total (the message object itself counts as one).
std::string request_nested_to(std::size_t depth) {
    std::string inner = "0";
    for (std::size_t i = 2; i < depth; ++i)
        inner = "[" + inner + "]";
    return R"({"jsonrpc":"2.0","id":1,"method":"m","params":[)" + inner + "]}";
}

std::string const ping = R"({"jsonrpc":"2.0","id":1,"method":"ping"})";

TEST(Limits, OverMaxBytesIsTooLargeWithNullId) {
    // The frame is a valid request with id 1, but it is refused before parsing, so its id is unknown.
    EXPECT_THAT(parse_one(ping, {.max_bytes = ping.size() - 1}),
                FailsWith(parse_errc::too_large, std::nullopt));
}

TEST(Limits, ExactlyMaxBytesParses) {
    EXPECT_THAT(parse_one(ping, {.max_bytes = ping.size()}), Holds<request>());
}

TEST(Limits, SizeIsCheckedBeforeJsonValidity) {
    std::string const garbage(65, '{');
    EXPECT_THAT(parse_one(garbage, {.max_bytes = 64}), FailsWith(parse_errc::too_large, std::nullopt));
}

TEST(Limits, DeeperThanMaxDepthIsTooDeep) {
    EXPECT_THAT(parse_one(request_nested_to(9), {.max_depth = 8}),
                FailsWith(parse_errc::too_deep, std::nullopt));
}

TEST(Limits, ExactlyMaxDepthParses) {
    EXPECT_THAT(parse_one(request_nested_to(8), {.max_depth = 8}), Holds<request>());
}

TEST(Limits, BatchArrayCountsTowardsDepth) {
    std::string const two_deep = R"([{"jsonrpc":"2.0","method":"m"}])";
    std::string const three_deep = R"([{"jsonrpc":"2.0","method":"m","params":[]}])";
    EXPECT_TRUE(parse_frame(two_deep, {.max_depth = 2}).is_batch());
    EXPECT_THAT(parse_one(three_deep, {.max_depth = 2}), FailsWith(parse_errc::too_deep, std::nullopt));
}

TEST(Limits, DefaultDepthStopsHostileNestingWithoutRecursingAway) {
    std::string const hostile = std::string(100'000, '[') + std::string(100'000, ']');
    EXPECT_THAT(parse_one(hostile), FailsWith(parse_errc::too_deep, std::nullopt));
}

TEST(Limits, DefaultsAreDocumentedValues) {
    parse_limits const defaults;
    EXPECT_EQ(defaults.max_bytes, 4u * 1024 * 1024);
    EXPECT_EQ(defaults.max_depth, 64u);
    EXPECT_EQ(defaults.max_batch, 1024u);
    EXPECT_THAT(parse_one(request_nested_to(64)), Holds<request>());
    EXPECT_THAT(parse_one(request_nested_to(65)), FailsWith(parse_errc::too_deep, std::nullopt));
}

} // namespace

// A number beyond a double's range would come back out as non-JSON (Boost.JSON writes infinity as text no
// parser reads), so the frame is refused as unreadable: -32700 with id null.
TEST(Limits, NumberBeyondDoubleRangeIsParseError) {
    auto const f =
        duet::jsonrpc::parse_frame(R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"x":8601e981}})");
    auto const& p = std::get<duet::jsonrpc::parsed>(f.content);
    ASSERT_FALSE(p.has_value());
    EXPECT_EQ(p.error().reason, duet::jsonrpc::parse_errc::bad_json);
    ASSERT_TRUE(p.error().reply.has_value());
    EXPECT_EQ(p.error().reply->error.code, -32700);
    EXPECT_FALSE(p.error().reply->id.has_value());
}
