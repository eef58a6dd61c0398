// The gateway's pure translations: an upstream's description as the server's, the params a forwarded
// request carries upstream, a result's own cache hints, resource-not-found in the downstream's era, and the
// error for an upstream that did not answer.
#include <duet/gateway/translate.hpp>

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>

namespace {

namespace json = boost::json;
namespace protocol = duet::protocol;
using duet::gateway::implementation_from_json;
using duet::gateway::respell_not_found;
using duet::gateway::take_result_hints;
using duet::gateway::upstream_params;
using protocol::method_id;

json::object obj(char const* text) {
    return json::parse(text).as_object();
}

TEST(GatewayImplementation, UpstreamInfoBecomesTheServersAndGapsAreNamed) {
    auto const i = implementation_from_json(
        obj(R"({"name":"up","version":"2.0","title":"Up","websiteUrl":"http://u"})"));
    EXPECT_EQ(i.name, "up");
    EXPECT_EQ(i.version, "2.0");
    EXPECT_EQ(i.title, "Up");
    EXPECT_EQ(i.website_url, "http://u");
    auto const empty = implementation_from_json(json::object{});
    EXPECT_EQ(empty.name, "unknown");
    EXPECT_EQ(empty.version, "unknown");
}

TEST(GatewayParams, TheDownstreamsEnvelopeAndRoundsStayAtTheGateway) {
    auto const up = upstream_params(method_id::tools_call, obj(R"({"name":"t","arguments":{"a":1},
        "requestState":"sealed","inputResponses":{"q1":{}},
        "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                 "io.modelcontextprotocol/clientCapabilities":{},
                 "io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},
                 "io.modelcontextprotocol/logLevel":"debug","progressToken":"p","app/key":7}})"),
                                    false);
    ASSERT_TRUE(up);
    EXPECT_EQ(*up, obj(R"({"name":"t","arguments":{"a":1},"_meta":{"app/key":7}})"));
}

TEST(GatewayParams, AnEmptiedOrMalformedMetaIsDropped) {
    auto const emptied =
        upstream_params(method_id::tools_list, obj(R"({"_meta":{"progressToken":1}})"), false);
    ASSERT_TRUE(emptied);
    EXPECT_TRUE(emptied->empty());
    auto const malformed = upstream_params(method_id::tools_list, obj(R"({"_meta":3,"cursor":"c"})"), false);
    ASSERT_TRUE(malformed);
    EXPECT_EQ(*malformed, obj(R"({"cursor":"c"})"));
}

TEST(GatewayParams, FlatPayloadIsRefusedWithoutLenientArgs) {
    auto const up = upstream_params(method_id::tools_call, obj(R"({"name":"t","payload":{"a":1}})"), false);
    ASSERT_FALSE(up);
    EXPECT_EQ(up.error().code, -32602);
    EXPECT_NE(up.error().message.find("--lenient-args"), std::string::npos);
}

TEST(GatewayParams, FlatPayloadMovesIntoArgumentsWithLenientArgs) {
    auto const up = upstream_params(method_id::tools_call, obj(R"({"name":"t","payload":{"a":1}})"), true);
    ASSERT_TRUE(up);
    EXPECT_EQ(*up, obj(R"({"name":"t","arguments":{"a":1}})"));
}

TEST(GatewayParams, LenientArgsStillRefusesAmbiguousOrMalformedPayloads) {
    auto const both =
        upstream_params(method_id::tools_call, obj(R"({"name":"t","arguments":{},"payload":{}})"), true);
    ASSERT_FALSE(both);
    EXPECT_EQ(both.error().code, -32602);
    auto const scalar = upstream_params(method_id::tools_call, obj(R"({"name":"t","payload":3})"), true);
    ASSERT_FALSE(scalar);
    EXPECT_EQ(scalar.error().code, -32602);
}

TEST(GatewayParams, PayloadOutsideToolsCallIsLeftAlone) {
    auto const up = upstream_params(method_id::prompts_get, obj(R"({"name":"p","payload":{}})"), false);
    ASSERT_TRUE(up);
    EXPECT_TRUE(up->contains("payload"));
}

TEST(GatewayHints, AModernResultsOwnHintsAreServedAndItsModernFieldsRemoved) {
    auto r = obj(R"({"tools":[],"resultType":"complete","ttlMs":60000,"cacheScope":"public",
        "_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up","version":"1"}}})");
    auto const h = take_result_hints(r);
    EXPECT_EQ(h.ttl_ms, 60000);
    EXPECT_EQ(h.scope, protocol::cache_scope::public_cache);
    EXPECT_EQ(r, obj(R"({"tools":[]})"));
}

TEST(GatewayHints, ALegacyResultGetsTheDefaults) {
    auto r = obj(R"({"tools":[],"_meta":{"app/x":1}})");
    auto const h = take_result_hints(r);
    EXPECT_EQ(h, protocol::cache_hints{});
    EXPECT_EQ(r, obj(R"({"tools":[],"_meta":{"app/x":1}})"));
}

TEST(GatewayHints, MalformedHintsFallBackToTheDefaults) {
    auto r = obj(R"({"tools":[],"ttlMs":-5,"cacheScope":"everyone"})");
    EXPECT_EQ(take_result_hints(r), protocol::cache_hints{});
}

struct not_found_row {
    char const* what;
    protocol::error_object upstream;
    char const* read_params;
    protocol::era downstream;
    std::optional<std::int32_t>
        code; ///< the downstream's code (none: the upstream's error passes as it came)
};

TEST(GatewayErrors, ResourceNotFoundIsSpelledInTheDownstreamsEra) {
    auto const uri_data = json::value(json::object{{"uri", "file:///a"}});
    auto const legacy_missing = protocol::make_error(protocol::errc::resource_not_found, "gone", uri_data);
    auto const legacy_missing_bare = protocol::make_error(protocol::errc::resource_not_found, "gone");
    auto const modern_missing = protocol::make_error(protocol::errc::invalid_params, "gone", uri_data);
    auto const plain_invalid = protocol::make_error(protocol::errc::invalid_params, "bad cursor");
    auto const other = protocol::make_error(protocol::errc::internal_error, "boom", uri_data);
    auto const legacy = protocol::era::legacy;
    auto const modern = protocol::era::modern;
    not_found_row const rows[] = {
        {"legacy upstream, modern client", legacy_missing, R"({"uri":"file:///a"})", modern, -32602},
        {"legacy upstream without data, modern client", legacy_missing_bare, R"({"uri":"file:///a"})", modern,
         -32602},
        {"modern upstream, legacy client", modern_missing, R"({"uri":"file:///a"})", legacy, -32002},
        {"legacy upstream, legacy client", legacy_missing, R"({"uri":"file:///a"})", legacy, -32002},
        {"modern upstream, modern client", modern_missing, R"({"uri":"file:///a"})", modern, -32602},
        {"invalid params without data.uri is not a miss", plain_invalid, R"({"uri":"file:///a"})", legacy,
         std::nullopt},
        {"another error passes", other, R"({"uri":"file:///a"})", modern, std::nullopt},
        {"a read without a uri", legacy_missing, R"({})", modern, std::nullopt},
        {"a read whose uri is no string", legacy_missing, R"({"uri":7})", modern, std::nullopt},
    };
    for (auto const& row : rows) {
        SCOPED_TRACE(row.what);
        auto const got = respell_not_found(row.upstream, obj(row.read_params), row.downstream);
        ASSERT_EQ(got.has_value(), row.code.has_value());
        if (!got)
            continue;
        EXPECT_EQ(got->code, *row.code);
        EXPECT_EQ(got->message, "Resource not found: file:///a");
        EXPECT_EQ(got->data, uri_data);
    }
}

TEST(GatewayErrors, AnUpstreamThatDidNotAnswerIsAnInternalErrorNamingIt) {
    auto const e = duet::gateway::upstream_unavailable("duet serve --stdio", "the server went away");
    EXPECT_EQ(e.code, -32603);
    EXPECT_NE(e.message.find("duet serve --stdio"), std::string::npos);
    EXPECT_NE(e.message.find("went away"), std::string::npos);
}

TEST(GatewayErrors, ResourceNotFoundIsRecognizedInEverySpelling) {
    using duet::gateway::is_resource_not_found;
    namespace p = duet::protocol;
    EXPECT_TRUE(is_resource_not_found(p::resource_not_found(p::era::legacy, "a://b")));
    EXPECT_TRUE(is_resource_not_found(p::resource_not_found(p::era::modern, "a://b")));
    EXPECT_TRUE(is_resource_not_found(p::invalid_params("MCP error -32602: Resource test://x not found")))
        << "the TypeScript SDK's words, no data";
    EXPECT_FALSE(is_resource_not_found(p::invalid_params("Invalid params: \"uri\" must be a string")));
    EXPECT_FALSE(is_resource_not_found(p::internal_error()));
    EXPECT_FALSE(is_resource_not_found(p::make_error(p::errc::internal_error, "Resource x not found")))
        << "another code is another error";
}

TEST(GatewayErrors, OnlyAnUpstreamThatDidNotAnswerCountsAsItsFailure) {
    EXPECT_TRUE(
        duet::gateway::is_upstream_unavailable(duet::gateway::upstream_unavailable("a", "timed out")));
    EXPECT_FALSE(duet::gateway::is_upstream_unavailable(duet::protocol::internal_error()))
        << "the upstream's own -32603 is an answer";
    EXPECT_FALSE(duet::gateway::is_upstream_unavailable(
        duet::protocol::invalid_params("Internal error: the upstream server a did not answer: x")))
        << "another code";
}

} // namespace
