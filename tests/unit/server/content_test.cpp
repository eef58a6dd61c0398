// The results handlers return: moving one into its JSON (what the server does with a handler's result) gives
// the same object, member for member and in the same order, as the copying form a handler may call itself.
#include <duet/server/content.hpp>

#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

namespace json = boost::json;
using namespace duet::server;

TEST(ResultContent, MovedToolResultIsTheSameJsonAsCopied) {
    tool_result r = tool_result::structured_value(json::object{{"sum", 3}});
    r.content.push_back(text_content("second block"));
    r.is_error = true;
    auto const copied = r.to_json();
    EXPECT_EQ(r.content.size(), 2u); // the copying form leaves the result as it was
    auto const moved = std::move(r).to_json();
    EXPECT_EQ(json::serialize(moved), json::serialize(copied));
    EXPECT_EQ(json::serialize(moved),
              R"({"content":[{"type":"text","text":"{\"sum\":3}"},{"type":"text","text":"second block"}],)"
              R"("structuredContent":{"sum":3},"isError":true})");
}

// The text block a structured result carries writes doubles as JavaScript does (duet/jsonrpc/json_text.hpp).
TEST(ResultContent, StructuredResultTextWritesDoublesInTheirShortestForm) {
    auto const r =
        tool_result::structured_value(json::object{{"result", 5.0}, {"ratio", 0.1}, {"big", 1e21}});
    ASSERT_EQ(r.content.size(), 1u);
    EXPECT_EQ(r.content[0].at("text"), R"({"result":5,"ratio":0.1,"big":1e+21})");
}

TEST(ResultContent, MovedToolResultWithoutStructuredOrErrorHasContentOnly) {
    auto const moved = tool_result::text("hi").to_json();
    EXPECT_EQ(json::serialize(moved), R"({"content":[{"type":"text","text":"hi"}]})");
}

TEST(ResultContent, MovedPromptAndReadResultsAreTheSameJsonAsCopied) {
    prompt_result p;
    p.description = "a prompt";
    p.add("user", text_content("question"));
    auto const prompt_copied = p.to_json();
    EXPECT_EQ(json::serialize(std::move(p).to_json()), json::serialize(prompt_copied));
    EXPECT_EQ(
        json::serialize(prompt_copied),
        R"({"description":"a prompt","messages":[{"role":"user","content":{"type":"text","text":"question"}}]})");

    read_result rr;
    rr.contents.push_back(text_resource_contents("file:///a.txt", "body"));
    auto const read_copied = rr.to_json();
    EXPECT_EQ(json::serialize(std::move(rr).to_json()), json::serialize(read_copied));
    EXPECT_NE(json::serialize(read_copied).find(R"("contents":[{)"), std::string::npos);
}

} // namespace
