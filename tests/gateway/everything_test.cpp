// The "done when" interop: the official reference server `@modelcontextprotocol/server-everything`
// (pinned in tests/interop), a legacy-only stdio server built on the 1.x TypeScript SDK, put behind
// `duet gateway` and reached by modern clients: discovery, the tool list, its echo tool, a resource read, and
// its tools that ask the client (elicitation, sampling) answered through input_required rounds.
//
// Two modern clients: the test's own HTTP client, whose every received message is checked against the
// 2026-07-28 schema, and Duet's client library in `modern` mode, answering the questions through its input
// handlers.
//
// Skipped where Node or the npm packages are not installed (scripts/bootstrap installs them).
#include "client/sync_client.hpp"
#include "gateway/gateway_process.hpp"
#include "http/mcp_http.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "unit/server/mrtr_support.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace {

namespace json = boost::json;
using namespace duet;
using namespace duet::test;
using namespace duet::test::http;
using namespace duet::test::gateway;

constexpr std::string_view everything = "mcp-servers/everything";
std::string const everything_script =
    DUET_SOURCE_DIR "/tests/interop/node_modules/@modelcontextprotocol/server-everything/dist/index.js";

/// The gateway's --upstream for server-everything on stdio; empty when it is not installed.
std::string everything_upstream() {
    auto const node = pinned_node();
    if (node.empty() || !std::filesystem::exists(everything_script))
        return {};
    return "stdio:" + node + " " + everything_script + " stdio";
}

#define DUET_SKIP_WITHOUT_EVERYTHING(upstream)                                                               \
    if ((upstream).empty())                                                                                  \
    GTEST_SKIP() << "Node or @modelcontextprotocol/server-everything is not installed (scripts/bootstrap)"

bool lists_tool(json::object const& list_result, std::string_view name) {
    for (auto const& t : list_result.at("tools").as_array())
        if (t.at("name") == json::value(json::string(name)))
            return true;
    return false;
}

/// Every text block of a CallToolResult, joined.
std::string all_text(json::object const& call_result) {
    std::string text;
    for (auto const& block : call_result.at("content").as_array())
        if (auto const* t = block.as_object().if_contains("text"))
            text += std::string(t->as_string()) + "\n";
    return text;
}

TEST(GatewayEverything, ModernClientDiscoversListsCallsAndReads) {
    auto const upstream = everything_upstream();
    DUET_SKIP_WITHOUT_EVERYTHING(upstream);
    gateway_process gw(upstream); // its era found by the auto probe
    EXPECT_TRUE(gw.wait_for_log("(legacy 2025-11-25)")) << gw.stderr_text();
    mcp_http c(gw.ep());

    auto const discover = only_message(c.post(modern_request(1, "server/discover")));
    expect_modern_result(discover, /*cacheable=*/true, everything);
    auto const d = result_of(discover);
    EXPECT_EQ(d.at("_meta").at("io.modelcontextprotocol/serverInfo").at("name"), "mcp-servers/everything")
        << discover;
    EXPECT_TRUE(d.at("capabilities").as_object().contains("tools")) << discover;
    EXPECT_EQ(d.at("capabilities").at("resources").at("subscribe"), true) << discover;
    EXPECT_FALSE(d.at("capabilities").as_object().contains("tasks"))
        << "a legacy-only capability: " << discover;

    auto const list = only_message(c.post(modern_request(2, "tools/list")));
    expect_modern_result(list, /*cacheable=*/true, everything);
    EXPECT_TRUE(lists_tool(result_of(list), "echo")) << list;

    auto const echo =
        only_message(c.post(modern_request(3, "tools/call", call_params("echo", {{"message", "hi"}}))));
    expect_modern_result(echo, /*cacheable=*/false, everything);
    EXPECT_EQ(first_text(result_of(echo)), "Echo: hi") << echo;

    json::object read_params{{"uri", "demo://resource/dynamic/text/1"}};
    auto const read = only_message(c.post(modern_request(4, "resources/read", read_params)));
    expect_modern_result(read, /*cacheable=*/true, everything);
    auto const read_result = result_of(read);
    auto const& contents = read_result.at("contents").as_array();
    ASSERT_EQ(contents.size(), 1u) << read;
    EXPECT_EQ(contents.at(0).at("uri"), "demo://resource/dynamic/text/1");
    EXPECT_TRUE(contents.at(0).at("text").as_string().starts_with("Resource 1:")) << read;

    json::object missing_params{{"uri", "demo://resource/dynamic/text/not-a-number"}};
    auto const missing = only_message(c.post(modern_request(5, "resources/read", missing_params)));
    EXPECT_NE(code_of(missing), 0) << missing;

    c.expect_schema_valid();
}

// server-everything offers trigger-elicitation-request only to a client that declared elicitation: the
// gateway's upstream session declares what the modern request declared, and the upstream's
// elicitation/create comes back as an input_required round, answered on the retry.
TEST(GatewayEverything, ElicitationOfTheUpstreamIsAnInputRound) {
    auto const upstream = everything_upstream();
    DUET_SKIP_WITHOUT_EVERYTHING(upstream);
    gateway_process gw(upstream);
    mcp_http c(gw.ep());
    json::object const caps{{"elicitation", json::object{}}};

    auto const without = only_message(c.post(modern_request(1, "tools/list")));
    EXPECT_FALSE(lists_tool(result_of(without), "trigger-elicitation-request")) << without;
    auto const with = only_message(c.post(modern_request(2, "tools/list", {}, caps)));
    EXPECT_TRUE(lists_tool(result_of(with), "trigger-elicitation-request")) << with;

    auto const params = call_params("trigger-elicitation-request");
    auto const first =
        expect_input_required(only_message(c.post(modern_request(3, "tools/call", params, caps))));
    auto const keys = keys_of(first);
    ASSERT_EQ(keys.size(), 1u) << json::value(first);
    auto const& question = first.at("inputRequests").at(keys.front()).as_object();
    EXPECT_EQ(question.at("method"), "elicitation/create");
    EXPECT_TRUE(question.at("params").at("requestedSchema").at("properties").as_object().contains("name"));

    json::object answer{{"action", "accept"}, {"content", {{"name", "Ada Lovelace"}, {"check", true}}}};
    auto const done = only_message(
        c.post(modern_request(4, "tools/call", retry(params, {{keys.front(), answer}}, first), caps)));
    expect_modern_result(done, /*cacheable=*/false, everything);
    auto const text = all_text(result_of(done));
    EXPECT_NE(text.find("- Name: Ada Lovelace"), std::string::npos) << done;
    EXPECT_NE(text.find("- Agreed to terms: true"), std::string::npos) << done;

    // Declined: the upstream hears the decline and says so.
    auto const again =
        expect_input_required(only_message(c.post(modern_request(5, "tools/call", params, caps))));
    json::object decline{{"action", "decline"}};
    auto const declined = only_message(c.post(
        modern_request(6, "tools/call", retry(params, {{keys_of(again).front(), decline}}, again), caps)));
    EXPECT_NE(all_text(result_of(declined)).find("declined"), std::string::npos) << declined;

    c.expect_schema_valid();
}

TEST(GatewayEverything, SamplingOfTheUpstreamIsAnInputRound) {
    auto const upstream = everything_upstream();
    DUET_SKIP_WITHOUT_EVERYTHING(upstream);
    gateway_process gw(upstream);
    mcp_http c(gw.ep());
    json::object const caps{{"sampling", json::object{}}};
    auto const params = call_params("trigger-sampling-request", {{"prompt", "a haiku"}});
    auto const first =
        expect_input_required(only_message(c.post(modern_request(1, "tools/call", params, caps))));
    auto const keys = keys_of(first);
    ASSERT_EQ(keys.size(), 1u) << json::value(first);
    auto const& question = first.at("inputRequests").at(keys.front()).as_object();
    EXPECT_EQ(question.at("method"), "sampling/createMessage");
    auto const& prompt = question.at("params").at("messages").at(0).at("content").at("text").as_string();
    EXPECT_NE(std::string_view(prompt).find("a haiku"), std::string_view::npos) << json::value(first);

    auto const done = only_message(c.post(modern_request(
        2, "tools/call", retry(params, {{keys.front(), sampled("an old silent pond")}}, first), caps)));
    expect_modern_result(done, /*cacheable=*/false, everything);
    EXPECT_NE(all_text(result_of(done)).find("an old silent pond"), std::string::npos) << done;
    c.expect_schema_valid();
}

// The same through Duet's own client library, connected `modern` to the gateway: the input round is the
// library's business, answered by its elicitation handler.
TEST(GatewayEverything, DuetModernClientReachesItThroughTheGateway) {
    auto const upstream = everything_upstream();
    DUET_SKIP_WITHOUT_EVERYTHING(upstream);
    gateway_process gw(upstream);
    client_side::sync_client c;
    client::client_options o;
    o.mode = client::connect_mode::modern;
    o.verdicts = nullptr;
    int asked = 0;
    o.inputs.elicitation = [&asked](json::object const& params) -> client::input_answer {
        ++asked;
        EXPECT_TRUE(params.contains("requestedSchema")) << json::value(params);
        return json::object{{"action", "accept"}, {"content", {{"name", "Grace Hopper"}}}};
    };
    auto connected = c.connect(client::http_target{gw.url(), {}}, std::move(o));
    ASSERT_TRUE(connected) << connected.error().to_string();
    EXPECT_EQ(c->era(), protocol::era::modern);
    EXPECT_EQ(c->server_info().at("name"), "mcp-servers/everything");

    auto tools = c.run(c->async_list_tools());
    ASSERT_TRUE(tools) << tools.error().to_string();
    bool elicits = false;
    for (auto const& t : *tools)
        elicits = elicits || t.at("name") == "trigger-elicitation-request";
    EXPECT_TRUE(elicits) << "the tools offered to a client that declared elicitation";

    auto echo = c.run(c->async_call_tool("echo", json::object{{"message", "through the gateway"}}));
    ASSERT_TRUE(echo) << echo.error().to_string();
    EXPECT_EQ(first_text(*echo), "Echo: through the gateway");

    auto read = c.run(c->async_read_resource("demo://resource/dynamic/text/2"));
    ASSERT_TRUE(read) << read.error().to_string();
    EXPECT_TRUE(read->at("contents").at(0).at("text").as_string().starts_with("Resource 2:"))
        << json::value(*read);

    auto asked_call = c.run(c->async_call_tool("trigger-elicitation-request", json::object{}));
    ASSERT_TRUE(asked_call) << asked_call.error().to_string();
    EXPECT_EQ(asked, 1);
    EXPECT_NE(all_text(*asked_call).find("- Name: Grace Hopper"), std::string::npos)
        << json::value(*asked_call);
}

} // namespace
