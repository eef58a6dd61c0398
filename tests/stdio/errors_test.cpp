// The error of each era over stdio (DIGEST §2, §8, §12, §14): removed methods, missing metadata, unknown
// methods and tools, resource-not-found per era, typed-argument failures as tool errors, invalid cursors.
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "stdio/stdio_client.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

namespace json = boost::json;
using namespace duet::test;

struct removed_method {
    char const* name;
    char const* method;
    json::object params;
};

void PrintTo(removed_method const& c, std::ostream* os) {
    *os << c.name;
}

class StdioRemovedMethod : public testing::TestWithParam<removed_method> {};

// DIGEST §1 (conf): a request with valid modern `_meta` for a method the modern era removed, or for an
// unknown method, is -32601, even inside a legacy session.
TEST_P(StdioRemovedMethod, WithModernMetaIsMethodNotFound) {
    auto const& p = GetParam();
    stdio_client c;
    c.send(modern_request(1, p.method, p.params));
    expect_error(c.response(1), -32601);
    c.send(initialize_request(2, "2025-11-25"));
    result_of(c.response(2));
    c.send(initialized_notification());
    c.send(modern_request(3, p.method, p.params));
    expect_error(c.response(3), -32601);
    EXPECT_EQ(c.finish(), 0);
    c.expect_schema_valid();
}

INSTANTIATE_TEST_SUITE_P(
    Stdio, StdioRemovedMethod,
    testing::Values(
        removed_method{"Initialize",
                       "initialize",
                       {{"protocolVersion", "2025-11-25"},
                        {"capabilities", json::object{}},
                        {"clientInfo", {{"name", "x"}, {"version", "1"}}}}},
        removed_method{"Ping", "ping", {}},
        removed_method{"LoggingSetLevel", "logging/setLevel", {{"level", "info"}}},
        removed_method{"ResourcesSubscribe", "resources/subscribe", {{"uri", "duet://demo/readme"}}},
        removed_method{"ResourcesUnsubscribe", "resources/unsubscribe", {{"uri", "duet://demo/readme"}}},
        removed_method{"Unknown", "no/such/method", {}}),
    [](auto const& p) { return std::string(p.param.name); });

// ERA-POLICY step 9: no `_meta` and no session: -32602 naming the metadata key and every version.
TEST(StdioErrors, NoMetaAndNoSessionNamesTheKey) {
    stdio_client c;
    c.send(legacy_request(1, "tools/list"));
    auto const r = c.response(1);
    expect_error(r, -32602);
    auto const e = error_of(r);
    EXPECT_NE(std::string(e.at("message").as_string()).find(key_protocol_version), std::string::npos) << r;
    EXPECT_EQ(e.at("data").at("requiredMetaKey"), json::value(key_protocol_version));
    EXPECT_EQ(e.at("data").at("modernVersions"), (json::array{"2026-07-28"}));
    // `_meta` that is not an object counts as absent.
    c.send(legacy_request(2, "tools/list", {{"_meta", "2026-07-28"}}));
    expect_error(c.response(2), -32602);
    // A modern envelope without clientCapabilities is invalid params too, and so is a version that is no
    // string.
    c.send(legacy_request(3, "tools/list", {{"_meta", {{key_protocol_version, "2026-07-28"}}}}));
    expect_error(c.response(3), -32602);
    c.send(legacy_request(
        4, "tools/list",
        {{"_meta", {{key_protocol_version, 20260728}, {key_client_capabilities, json::object{}}}}}));
    expect_error(c.response(4), -32602);
    c.send(legacy_request(
        5, "tools/list",
        {{"_meta", {{key_protocol_version, "2026-07-28"}, {key_client_capabilities, "none"}}}}));
    expect_error(c.response(5), -32602);
    EXPECT_EQ(c.finish(), 0);
    c.expect_schema_valid();
}

// ERA-POLICY: an unknown method inside a legacy session is -32601 too.
TEST(StdioErrors, UnknownLegacyMethodIsMethodNotFound) {
    stdio_client c;
    c.send(initialize_request(1, "2025-11-25"));
    result_of(c.response(1));
    c.send(initialized_notification());
    c.send(legacy_request(2, "no/such/method"));
    expect_error(c.response(2), -32601);
    c.send(legacy_request(3, "server/discover"));
    expect_error(c.response(3), -32601);
    EXPECT_EQ(c.finish(), 0);
    c.expect_schema_valid();
}

// DIGEST §8 / ERA-POLICY: resource not found is -32002 for legacy and -32602 with data.uri for modern.
TEST(StdioErrors, ResourceNotFoundDiffersByEra) {
    stdio_client c;
    c.send(initialize_request(1, "2025-11-25"));
    result_of(c.response(1));
    c.send(initialized_notification());
    c.send(legacy_request(2, "resources/read", {{"uri", "duet://demo/missing"}}));
    auto const legacy = c.response(2);
    expect_error(legacy, -32002);
    EXPECT_EQ(error_of(legacy).at("data").at("uri"), "duet://demo/missing");
    c.send(modern_request(3, "resources/read", {{"uri", "duet://demo/missing"}}));
    auto const modern = c.response(3);
    expect_error(modern, -32602);
    EXPECT_EQ(error_of(modern).at("data").at("uri"), "duet://demo/missing");
    EXPECT_EQ(c.finish(), 0);
    c.expect_schema_valid();
}

// DIGEST §12: an unknown tool is -32602; arguments a typed tool cannot decode are an isError result.
TEST(StdioErrors, UnknownToolIsInvalidParamsAndBadArgumentsAreToolErrors) {
    stdio_client c;
    c.send(modern_request(1, "tools/call", call_params("no-such-tool")));
    expect_error(c.response(1), -32602);
    c.send(modern_request(2, "tools/call", call_params("add", {{"a", "one"}, {"b", 2}})));
    auto const bad_type = result_of(c.response(2));
    EXPECT_TRUE(is_error_result(bad_type)) << json::value(bad_type);
    c.send(modern_request(3, "tools/call", call_params("add", {{"a", 1}})));
    auto const missing = result_of(c.response(3));
    EXPECT_TRUE(is_error_result(missing)) << json::value(missing);
    c.send(modern_request(4, "tools/call", call_params("add", {{"a", 1}, {"b", 2}})));
    auto const ok = result_of(c.response(4));
    EXPECT_FALSE(is_error_result(ok)) << json::value(ok);
    // The double 3.0 goes out as `3`, as JavaScript writes it, and reads back as an integer.
    EXPECT_EQ(ok.at("structuredContent"), (json::object{{"result", 3}}));
    EXPECT_EQ(c.finish(), 0);
    c.expect_schema_valid();
}

// DIGEST §8: an invalid cursor is -32602 in both eras; "" is a valid cursor.
TEST(StdioErrors, InvalidCursorIsInvalidParams) {
    stdio_client c;
    c.send(modern_request(1, "tools/list", {{"cursor", "not-a-cursor"}}));
    expect_error(c.response(1), -32602);
    c.send(modern_request(2, "tools/list", {{"cursor", ""}}));
    EXPECT_FALSE(result_of(c.response(2)).at("tools").as_array().empty());
    c.send(initialize_request(3, "2025-11-25"));
    result_of(c.response(3));
    c.send(initialized_notification());
    c.send(legacy_request(4, "prompts/list", {{"cursor", "zz"}}));
    expect_error(c.response(4), -32602);
    EXPECT_EQ(c.finish(), 0);
    c.expect_schema_valid();
}

} // namespace
