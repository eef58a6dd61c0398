// Tests for duet/protocol/request_headers.hpp (what a modern client puts in HTTP headers) and for
// write_envelope() in duet/protocol/envelope.hpp (what it puts in `_meta`).
//
// Requirements: DIGEST §9 (MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-* mirror the body; unsafe
// values travel as `=?base64?...?=`; null or absent arguments send no header), DIGEST §2 (the three-key
// envelope). Each header the client computes must pass the server's own admission check.
#include <duet/protocol/admission.hpp>
#include <duet/protocol/envelope.hpp>
#include <duet/protocol/header_codec.hpp>
#include <duet/protocol/meta_keys.hpp>
#include <duet/protocol/request_headers.hpp>

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace {

using namespace duet::protocol;
namespace json = boost::json;
using duet::jsonrpc::request;

std::optional<std::string> find(std::vector<http_header> const& hs, std::string_view name) {
    for (auto const& h : hs)
        if (iequals(h.name, name))
            return h.value;
    return std::nullopt;
}

request modern(std::string method, json::object params) {
    request_envelope env;
    env.client_capabilities = json::object{};
    write_envelope(params, env);
    return request{1, std::move(method), std::move(params)};
}

TEST(RequestHeaders, MirrorVersionMethodAndToolName) {
    auto const r = modern("tools/call", {{"name", "echo"}, {"arguments", json::object{}}});
    auto const hs = modern_request_headers(r);
    EXPECT_EQ(find(hs, "MCP-Protocol-Version"), "2026-07-28");
    EXPECT_EQ(find(hs, "Mcp-Method"), "tools/call");
    EXPECT_EQ(find(hs, "Mcp-Name"), "echo");
}

TEST(RequestHeaders, NameHeaderMirrorsUriForResourcesRead) {
    auto const hs = modern_request_headers(modern("resources/read", {{"uri", "file:///a b"}}));
    EXPECT_EQ(find(hs, "Mcp-Name"), "file:///a b");
}

TEST(RequestHeaders, NoNameHeaderForListMethods) {
    auto const hs = modern_request_headers(modern("tools/list", {}));
    EXPECT_FALSE(find(hs, "Mcp-Name"));
    EXPECT_EQ(find(hs, "Mcp-Method"), "tools/list");
}

TEST(RequestHeaders, UnsafeNameTravelsBase64) {
    auto const hs = modern_request_headers(modern("prompts/get", {{"name", "h\xC3\xA9llo"}}));
    EXPECT_EQ(find(hs, "Mcp-Name"), "=?base64?aMOpbGxv?=");
}

TEST(RequestHeaders, ParamHeadersMirrorAnnotatedArgumentsOnly) {
    auto const schema = json::parse(R"({"type":"object","properties":{
        "region":{"type":"string","x-mcp-header":"Region"},
        "count":{"type":"integer","x-mcp-header":"Count"},
        "dry":{"type":"boolean","x-mcp-header":"Dry"},
        "verbose":{"type":"boolean","x-mcp-header":"Verbose"},
        "nested":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}},
        "query":{"type":"string"}}})")
                            .as_object();
    auto const bindings = collect_param_headers(schema);
    ASSERT_TRUE(bindings);
    auto const r = modern("tools/call", {{"name", "t"},
                                         {"arguments",
                                          {{"region", " eu "},
                                           {"count", 7},
                                           {"dry", false},
                                           {"verbose", nullptr},
                                           {"nested", {{"zone", "a"}}},
                                           {"query", "x"}}}});
    auto const hs = modern_request_headers(r, *bindings);
    EXPECT_EQ(find(hs, "Mcp-Param-Region"), "=?base64?IGV1IA==?=");
    EXPECT_EQ(find(hs, "Mcp-Param-Count"), "7");
    EXPECT_EQ(find(hs, "Mcp-Param-Dry"), "false");
    EXPECT_EQ(find(hs, "Mcp-Param-Zone"), "a");
    EXPECT_FALSE(find(hs, "Mcp-Param-Verbose")) << "a null argument sends no header";
    EXPECT_FALSE(find(hs, "Mcp-Param-Query")) << "an unannotated argument sends no header";

    // What the client computes is exactly what the server's admission accepts.
    server_capabilities caps{.tools = true};
    http_facts facts;
    for (auto const& h : hs)
        facts.headers.push_back(h);
    param_header_lookup lookup = [&](std::string_view) {
        return std::span<param_header const>(*bindings);
    };
    auto const admitted =
        admit(r, admission_context{.capabilities = &caps, .http = &facts, .param_headers = &lookup});
    EXPECT_TRUE(admitted) << (admitted ? "" : admitted.error().error.message);
}

// The ends of the integer range a body can hold: the header the client writes for each is admitted.
TEST(RequestHeaders, IntegerParamHeadersAtTheEndsOfTheRangeAreAdmitted) {
    auto const schema =
        json::parse(R"({"type":"object","properties":{"count":{"type":"integer","x-mcp-header":"Count"}}})")
            .as_object();
    auto const bindings = collect_param_headers(schema);
    ASSERT_TRUE(bindings);
    server_capabilities caps{.tools = true};
    param_header_lookup lookup = [&](std::string_view) {
        return std::span<param_header const>(*bindings);
    };
    for (auto const& count : {json::value(std::numeric_limits<std::uint64_t>::max()),
                              json::value(std::numeric_limits<std::int64_t>::min()),
                              json::value(std::uint64_t(1) << 63), json::value(0)}) {
        auto const r = modern("tools/call", {{"name", "t"}, {"arguments", {{"count", count}}}});
        auto const hs = modern_request_headers(r, *bindings);
        http_facts facts;
        for (auto const& h : hs)
            facts.headers.push_back(h);
        auto const admitted =
            admit(r, admission_context{.capabilities = &caps, .http = &facts, .param_headers = &lookup});
        EXPECT_TRUE(admitted) << find(hs, "Mcp-Param-Count").value_or("(none)") << ": "
                              << (admitted ? "" : admitted.error().error.message);
    }
}

TEST(RequestHeaders, ParamHeaderValueRefusesNonMirrorableTypes) {
    EXPECT_FALSE(param_header_value(json::value(1.5)));
    EXPECT_FALSE(param_header_value(json::value(nullptr)));
    EXPECT_FALSE(param_header_value(json::array{}));
    EXPECT_EQ(param_header_value(json::value(-3)), "-3");
    EXPECT_EQ(param_header_value(json::value("line\nbreak")), "=?base64?bGluZQpicmVhaw==?=");
}

TEST(RequestHeaders, NoVersionHeaderWithoutEnvelope) {
    auto const hs = modern_request_headers(request{1, "tools/list", json::object{}});
    EXPECT_FALSE(find(hs, "MCP-Protocol-Version"));
}

// ---- write_envelope ---------------------------------------------------------------------------------------

TEST(WriteEnvelope, RoundTripsThroughReadEnvelope) {
    request_envelope env;
    env.client_capabilities = {{"elicitation", json::object{}}};
    env.client_info = json::object{{"name", "duet"}, {"version", "1"}};
    env.log_level = log_level::warning;
    env.progress_token = "p1";
    json::object params{{"name", "x"}};
    write_envelope(params, env);
    auto const back = read_envelope(params, version::v2026_07_28);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->client_capabilities, env.client_capabilities);
    EXPECT_EQ(back->client_info, env.client_info);
    EXPECT_EQ(back->log_level, env.log_level);
    EXPECT_EQ(back->progress_token, env.progress_token);
    EXPECT_EQ(params.at("name"), "x");
}

TEST(WriteEnvelope, KeepsOtherMetaKeysAndReplacesNonObjectMeta) {
    json::object params{{"_meta", {{"traceparent", "00-abc"}}}};
    write_envelope(params, request_envelope{});
    auto const& meta = params.at("_meta").as_object();
    EXPECT_EQ(meta.at("traceparent"), "00-abc");
    EXPECT_EQ(meta.at(meta_key::protocol_version), "2026-07-28");
    EXPECT_TRUE(meta.at(meta_key::client_capabilities).is_object());
    EXPECT_FALSE(meta.contains(meta_key::client_info)) << "clientInfo is optional and absent when unset";

    json::object odd{{"_meta", 5}};
    write_envelope(odd, request_envelope{});
    EXPECT_TRUE(odd.at("_meta").is_object());
}

} // namespace
