// The server parses frames into duet::server::frame_storage() instead of the default heap. The pool must be
// invisible on the wire (the same messages, serialized to the same bytes, the same failures) and safe for
// what handlers do with params: keep a copy beyond the request, or let values die on another thread.
#include <duet/jsonrpc/codec.hpp>
#include <duet/server/content.hpp>
#include <duet/server/frame_storage.hpp>

#include <boost/json/memory_resource.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace json = boost::json;
namespace jsonrpc = duet::jsonrpc;

// Every kind of element a frame can hold, good and bad.
std::vector<std::string> parse_samples() {
    return {
        R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}})",
        R"({"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},)"
        R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
        R"("io.modelcontextprotocol/clientCapabilities":{}}}})",
        R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
        R"({"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"a long enough text to allocate"}]}})",
        R"({"jsonrpc":"2.0","id":8,"error":{"code":-32601,"message":"no","data":{"k":[1,2.5,"x",null,true]}}})",
        R"([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"x","params":[1,2]},3])",
        R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"dup":1,"dup":2}})",
        R"({"jsonrpc":"1.0","id":1,"method":"m"})",
        R"({"jsonrpc":"2.0","id":1,"method":"m","params":"scalar"})",
        R"({"jsonrpc":"2.0","id":1})",
        "{not json",
        "[]",
        R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"n":1e999}})",
    };
}

// What a parsed element amounts to: its wire form, or why it failed and the reply owed.
std::string parse_outcome(jsonrpc::parsed const& p) {
    if (p)
        return "ok " + jsonrpc::serialize(*p);
    auto s = "failed " + std::to_string(static_cast<int>(p.error().reason));
    if (p.error().reply)
        s += " " + jsonrpc::serialize(jsonrpc::message{*p.error().reply});
    return s;
}

std::vector<std::string> outcomes(jsonrpc::frame const& f) {
    if (auto const* one = std::get_if<jsonrpc::parsed>(&f.content))
        return {parse_outcome(*one)};
    std::vector<std::string> out{"batch"};
    for (auto const& e : std::get<jsonrpc::batch>(f.content).elements)
        out.push_back(parse_outcome(e));
    return out;
}

TEST(FrameStorage, ParsesToTheSameMessagesAndBytesAsTheDefaultHeap) {
    for (auto const& text : parse_samples()) {
        auto const plain = jsonrpc::parse_frame(text);
        auto const pooled = jsonrpc::parse_frame(text, {}, duet::server::frame_storage());
        EXPECT_EQ(outcomes(pooled), outcomes(plain)) << text;
    }
}

TEST(FrameStorage, ParamsLiveInThePoolAndMoveThereWithoutACopy) {
    auto f =
        jsonrpc::parse_frame(R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"a long enough string"}})",
                             {}, duet::server::frame_storage());
    auto& r = std::get<jsonrpc::request>(*std::get<jsonrpc::parsed>(f.content));
    EXPECT_EQ(r.params.storage().get(), duet::server::frame_storage().get());
    EXPECT_FALSE(r.params.storage().is_shared()); // uncounted: no atomics per node
}

TEST(FrameStorage, AHandlersCopyOfParamsOutlivesTheFrame) {
    std::optional<json::value> kept;
    {
        auto f = jsonrpc::parse_frame(
            R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":{"text":"kept beyond the request"}}})",
            {}, duet::server::frame_storage());
        auto const& r = std::get<jsonrpc::request>(*std::get<jsonrpc::parsed>(f.content));
        kept.emplace(r.params.at("arguments")); // a copy shares the frame's storage
    }
    // The frame is gone and its blocks are reused by the next one; the copy must not change.
    for (int i = 0; i < 10; ++i)
        (void)jsonrpc::parse_frame(
            R"({"jsonrpc":"2.0","id":2,"method":"m","params":{"arguments":{"text":"xxxx)"
            R"(xxxxxxxxxxxxxxxxxxxxx"}}})",
            {}, duet::server::frame_storage());
    EXPECT_EQ(json::serialize(*kept), R"({"text":"kept beyond the request"})");
}

TEST(FrameStorage, ValuesMayDieOnAnotherThread) {
    std::vector<jsonrpc::frame> parsed;
    for (int i = 0; i < 100; ++i)
        parsed.push_back(jsonrpc::parse_frame(
            R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}})",
            {}, duet::server::frame_storage()));
    std::string seen;
    std::thread other([&] {
        // This thread also allocates, so it keeps the blocks it frees, and must give them back when it ends.
        auto mine = jsonrpc::parse_frame(R"({"jsonrpc":"2.0","method":"x","params":{"long key here":1}})", {},
                                         duet::server::frame_storage());
        seen = outcomes(parsed.back()).front();
        parsed.clear();
        EXPECT_GT(duet::server::detail::frame_storage_cached_blocks(), 0u);
    });
    other.join();
    EXPECT_EQ(seen, R"(ok {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":)"
                    R"({"text":"hi"}}})");
}

// tool_result::text builds the answer in the pool too, with the same bytes; a result a handler builds on the
// default heap stays there (moving it into its JSON is still a move, not a copy across storages).
TEST(FrameStorage, TextResultsAreBuiltInThePoolWithTheSameBytes) {
    auto pooled = duet::server::tool_result::text("hello \"there\"");
    EXPECT_EQ(pooled.content.storage().get(), duet::server::frame_storage().get());
    auto const pooled_json = std::move(pooled).to_json();
    EXPECT_EQ(pooled_json.storage().get(), duet::server::frame_storage().get());
    EXPECT_EQ(pooled_json.at("content").storage().get(), duet::server::frame_storage().get());

    duet::server::tool_result plain;
    plain.content.push_back(json::object{{"type", "text"}, {"text", "hello \"there\""}});
    auto const plain_json = std::move(plain).to_json();
    EXPECT_NE(plain_json.storage().get(), duet::server::frame_storage().get());

    EXPECT_EQ(json::serialize(pooled_json), json::serialize(plain_json));
    EXPECT_EQ(json::serialize(pooled_json), R"({"content":[{"type":"text","text":"hello \"there\""}]})");
    EXPECT_EQ(pooled_json, plain_json);
}

TEST(FrameStorage, AThreadKeepsAtMostItsBoundOfFreeBlocksPerSize) {
    auto* const pool = duet::server::frame_storage().get();
    constexpr auto bound = duet::server::detail::frame_storage_per_size_bound;
    std::thread t([&] {
        std::vector<void*> blocks;
        for (std::size_t i = 0; i < 2 * bound; ++i)
            blocks.push_back(pool->allocate(40, 8));
        for (auto* b : blocks)
            pool->deallocate(b, 40, 8);
        EXPECT_EQ(duet::server::detail::frame_storage_cached_blocks(), bound);
        // A freed block is what the next allocation of its size gets.
        auto* again = pool->allocate(33, 8);
        EXPECT_EQ(again, blocks[bound - 1]); // the last one the list took
        pool->deallocate(again, 33, 8);
        // Sizes beyond the pool's go to the heap and are never kept.
        auto* big = pool->allocate(1 << 20, 16);
        pool->deallocate(big, 1 << 20, 16);
        EXPECT_EQ(duet::server::detail::frame_storage_cached_blocks(), bound);
    });
    t.join();
}

} // namespace
