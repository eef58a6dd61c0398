// JSON-RPC batches: an array frame is a batch whose elements are parsed and answered one by one.
//
// Requirement tags: JSONRPC-6 https://www.jsonrpc.org/specification#batch (and the examples in §7); the
// codec's contract is include/duet/jsonrpc/codec.hpp.
#include <duet/jsonrpc/codec.hpp>

#include "parse_matchers.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using namespace duet::jsonrpc;
using test::FailsSilently;
using test::FailsWith;
using test::Holds;
using test::parse_one;

// The elements of a frame that must be a batch; empty (plus a failure) when it is not.
std::vector<parsed> batch_elements(std::string_view bytes, parse_limits const& limits = {}) {
    auto f = parse_frame(bytes, limits);
    if (!f.is_batch()) {
        ADD_FAILURE() << "not a batch: " << bytes;
        return {};
    }
    return std::get<batch>(std::move(f.content)).elements;
}

// JSONRPC-6 (an Array filled with Request objects)
TEST(Batch, ArrayFrameIsRecognisedAsBatch) {
    auto f = parse_frame(R"([{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}])");
    ASSERT_TRUE(f.is_batch());
    auto const& elements = std::get<batch>(f.content).elements;
    ASSERT_EQ(elements.size(), 2u);
    EXPECT_THAT(elements[0], Holds<request>());
    EXPECT_THAT(elements[1], Holds<notification>());
}

// JSONRPC-6: an object frame is not a batch, even when it holds arrays.
TEST(Batch, ObjectFrameIsNotBatch) {
    EXPECT_FALSE(parse_frame(R"({"jsonrpc":"2.0","id":1,"method":"a","params":[[1]]})").is_batch());
}

// JSONRPC-7 example "rpc call Batch": valid and invalid elements are parsed independently, in order.
TEST(Batch, EachElementIsParsedIndependently) {
    auto elements = batch_elements(R"([
        {"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":"1"},
        {"jsonrpc":"2.0","method":"notify_hello","params":[7]},
        {"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":"2"},
        {"foo":"boo"},
        {"jsonrpc":"2.0","method":"foo.get","params":{"name":"myself"},"id":"5"},
        {"jsonrpc":"2.0","method":"get_data","id":"9"}
    ])");
    ASSERT_EQ(elements.size(), 6u);
    EXPECT_THAT(elements[0], Holds<request>());
    EXPECT_THAT(elements[1], Holds<notification>());
    EXPECT_THAT(elements[2], Holds<request>());
    EXPECT_THAT(elements[3], FailsWith(parse_errc::bad_jsonrpc_version, std::nullopt));
    EXPECT_THAT(elements[4], Holds<request>());
    EXPECT_THAT(elements[5], Holds<request>());
}

// JSONRPC-7 example "rpc call with an empty Array": a single -32600, not a batch.
TEST(Batch, EmptyArrayIsSingleInvalidRequest) {
    auto f = parse_frame("[]");
    EXPECT_FALSE(f.is_batch());
    EXPECT_THAT(parse_one("[]"), FailsWith(parse_errc::empty_batch, std::nullopt));
    EXPECT_THAT(parse_one(" [ \n ] "), FailsWith(parse_errc::empty_batch, std::nullopt));
}

// JSONRPC-7 examples "invalid Batch (but not empty)" and "invalid Batch": every garbage element, nested
// arrays included, gets its own -32600 with id null.
TEST(Batch, GarbageElementsEachGetTheirOwnInvalidRequest) {
    auto elements = batch_elements(R"([1, 2, "x", null, [], [1], [[{"jsonrpc":"2.0","method":"m"}]], true])");
    ASSERT_EQ(elements.size(), 8u);
    for (auto const& e : elements)
        EXPECT_THAT(e, FailsWith(parse_errc::not_an_object, std::nullopt));
}

// JSONRPC-5 (id echoed when it could be read) applied per element.
TEST(Batch, InvalidElementsEchoTheirOwnIds) {
    auto elements = batch_elements(R"([
        {"jsonrpc":"2.0","id":"a"},
        {"jsonrpc":"1.0","id":2,"method":"m"},
        {"jsonrpc":"2.0","id":3,"method":"m","params":"p"},
        {"jsonrpc":"2.0","id":false,"method":"m"}
    ])");
    ASSERT_EQ(elements.size(), 4u);
    EXPECT_THAT(elements[0], FailsWith(parse_errc::bad_method, request_id{"a"}));
    EXPECT_THAT(elements[1], FailsWith(parse_errc::bad_jsonrpc_version, request_id{2}));
    EXPECT_THAT(elements[2], FailsWith(parse_errc::bad_params, request_id{3}));
    EXPECT_THAT(elements[3], FailsWith(parse_errc::bad_id, std::nullopt));
}

// JSONRPC-6 (a batch may carry responses); codec.hpp: a malformed response in it is still not answered.
TEST(Batch, ResponsesAreParsedAndMalformedOnesStaySilent) {
    auto elements = batch_elements(R"([
        {"jsonrpc":"2.0","id":1,"result":{}},
        {"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"m"}},
        {"jsonrpc":"2.0","id":3,"result":{},"error":{"code":1,"message":"m"}}
    ])");
    ASSERT_EQ(elements.size(), 3u);
    EXPECT_THAT(elements[0], Holds<response>());
    EXPECT_THAT(elements[1], Holds<error_response>());
    EXPECT_THAT(elements[2], FailsSilently(parse_errc::bad_response));
}

// JSONRPC-7 example "rpc call Batch, invalid JSON": one -32700, not a batch of failures.
TEST(Batch, InvalidJsonInsideArrayIsSingleParseError) {
    auto const bytes =
        R"([{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":"1"},{"jsonrpc":"2.0","method")";
    EXPECT_FALSE(parse_frame(bytes).is_batch());
    EXPECT_THAT(parse_one(bytes), FailsWith(parse_errc::bad_json, std::nullopt));
}

// codec.hpp parse_limits::max_batch: more elements than allowed is one too_large failure.
TEST(Batch, OverMaxBatchIsTooLarge) {
    auto const three =
        R"([{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"},{"jsonrpc":"2.0","method":"c"}])";
    EXPECT_FALSE(parse_frame(three, {.max_batch = 2}).is_batch());
    EXPECT_THAT(parse_one(three, {.max_batch = 2}), FailsWith(parse_errc::too_large, std::nullopt));
}

// codec.hpp parse_limits::max_batch: exactly the limit is accepted.
TEST(Batch, ExactlyMaxBatchIsAccepted) {
    auto const three =
        R"([{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"},{"jsonrpc":"2.0","method":"c"}])";
    EXPECT_EQ(batch_elements(three, {.max_batch = 3}).size(), 3u);
}

// codec.hpp serialize(batch_reply): an array of the messages' wire forms, in order.
TEST(Batch, SerializedReplyIsArrayOfWireFormsInOrder) {
    std::vector<message> const reply{
        response{request_id{"1"}, 7},
        error_response{std::nullopt, to_error_object(parse_errc::not_an_object)},
        response{request_id{2}, boost::json::array{19}},
    };
    EXPECT_EQ(serialize(reply),
              "[" + serialize(reply[0]) + "," + serialize(reply[1]) + "," + serialize(reply[2]) + "]");
    EXPECT_EQ(serialize(std::vector<message>{}), "[]");
}

// codec.hpp: a serialized batch reply parses back as a batch of the same messages.
TEST(Batch, SerializedReplyParsesBackToSameMessages) {
    std::vector<message> const reply{
        response{request_id{1}, boost::json::object{{"ok", true}}},
        error_response{request_id{"x"}, error_object{code::invalid_params, "bad", {}}},
    };
    auto elements = batch_elements(serialize(reply));
    ASSERT_EQ(elements.size(), reply.size());
    for (std::size_t i = 0; i < reply.size(); ++i) {
        ASSERT_TRUE(elements[i]) << i;
        EXPECT_EQ(*elements[i], reply[i]) << i;
    }
}

} // namespace
