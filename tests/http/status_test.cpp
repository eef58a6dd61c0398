// The HTTP status of every refusal (DIGEST §9 status table, §2 error codes, §14 matrix; ERA-POLICY "HTTP
// routing of one POST"): header mismatches (-32020), unsupported versions (-32022) and a missing envelope
// (-32602) are 400, so is a handler's missing required client capability (-32021), unknown or removed methods
// 404 (-32601), notifications 202, GET/DELETE without a session 405 with Allow, a bad Accept 406, an
// oversized body 413, a foreign Origin or Host 403, a missing or wrong bearer token 401 with
// WWW-Authenticate. Every JSON-RPC error answers with the request's id (same JSON type).
#include <duet/server/content.hpp>

#include "http/mcp_http.hpp"
#include "http/servers.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"

#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

namespace {

namespace json = boost::json;
using namespace duet::test;
using namespace duet::test::http;

// A JSON-RPC error answering `id` (same JSON type) with `code`.
void expect_error_reply(reply const& r, unsigned status, json::value const& id, std::int64_t code) {
    EXPECT_EQ(r.status, status) << r.body;
    EXPECT_EQ(r.header("Content-Type"), "application/json") << r.body;
    auto const m = r.json();
    EXPECT_TRUE(is_response_to(m, id)) << "want id " << id << ": " << m;
    EXPECT_EQ(code_of(m), code) << m;
}

json::object echo_call(json::value id) {
    return modern_request(std::move(id), "tools/call", call_params("echo", {{"text", "hi"}}));
}

// DIGEST §9: MCP-Protocol-Version is required on a modern body and must equal its version.
TEST(HttpStatus, MissingOrDifferentVersionHeaderIsHeaderMismatch) {
    inproc_server s;
    mcp_http c(s.ep());
    auto const message = modern_request(1, "tools/list");
    auto missing = c.spec_for(message);
    remove_header(missing, "MCP-Protocol-Version");
    expect_error_reply(c.send(missing, message), 400, 1, -32020);

    auto const other = c.post(modern_request(2, "tools/list"), {{"MCP-Protocol-Version", "2025-11-25"}});
    expect_error_reply(other, 400, 2, -32020);

    // (conf) header 2026-07-28 with body v999 is a mismatch, checked before the version itself.
    auto bad_body = modern_request(3, "tools/list");
    bad_body["params"].as_object()["_meta"].as_object()[key_protocol_version] = "v999";
    expect_error_reply(c.post(bad_body, {{"MCP-Protocol-Version", "2026-07-28"}}), 400, 3, -32020);
    c.expect_schema_valid();
}

// DIGEST §9: Mcp-Method mirrors the body's method.
TEST(HttpStatus, MissingOrDifferentMethodHeaderIsHeaderMismatch) {
    inproc_server s;
    mcp_http c(s.ep());
    auto const message = echo_call(1);
    auto missing = c.spec_for(message);
    remove_header(missing, "Mcp-Method");
    expect_error_reply(c.send(missing, message), 400, 1, -32020);
    expect_error_reply(c.post(echo_call(2), {{"Mcp-Method", "tools/list"}}), 400, 2, -32020);
    c.expect_schema_valid();
}

// DIGEST §9: Mcp-Name mirrors params.name (tools/call, prompts/get) or params.uri (resources/read).
TEST(HttpStatus, MissingOrDifferentNameHeaderIsHeaderMismatch) {
    inproc_server s;
    mcp_http c(s.ep());
    auto const message = echo_call(1);
    auto missing = c.spec_for(message);
    remove_header(missing, "Mcp-Name");
    expect_error_reply(c.send(missing, message), 400, 1, -32020);
    expect_error_reply(c.post(echo_call(2), {{"Mcp-Name", "add"}}), 400, 2, -32020);
    auto const read = modern_request(3, "resources/read", {{"uri", "duet://demo/readme"}});
    expect_error_reply(c.post(read, {{"Mcp-Name", "duet://demo/other"}}), 400, 3, -32020);
    // A sentinel whose base64 is malformed holds no value at all.
    expect_error_reply(c.post(echo_call(4), {{"Mcp-Name", "=?base64?not*base64?="}}), 400, 4, -32020);
    c.expect_schema_valid();
}

// DIGEST §9: unsafe values (here non-ASCII) travel as =?base64?...?=; the server decodes before comparing,
// for Mcp-Name and Mcp-Param-* alike, and a safe value may be encoded too.
TEST(HttpStatus, Base64EncodedHeaderValuesAreDecodedBeforeComparing) {
    inproc_server s;
    std::string const name = "gr\xc3\xbc\xc3\x9f"; // "grüß"
    s.srv().add_tool(
        duet::server::tool{
            .name = name,
            .input_schema = {{"type", "object"},
                             {"properties", {{"who", {{"type", "string"}, {"x-mcp-header", "Who"}}}}},
                             {"required", json::array{"who"}}}},
        [](json::object const& args, duet::server::request_context&) {
            return duet::server::tool_result::text("Hello, " + std::string(args.at("who").as_string()) + "!");
        });
    mcp_http c(s.ep());
    std::string const who = "Zo\xc3\xab"; // "Zoë"
    auto const call = [&](json::value id) {
        return modern_request(std::move(id), "tools/call", call_params(name, {{"who", who}}));
    };
    auto const encoded_who = "=?base64?" + base64(who) + "?=";
    EXPECT_EQ(header_value(name), "=?base64?" + base64(name) + "?=");

    auto const r = c.post(call(1), {{"Mcp-Param-Who", encoded_who}});
    EXPECT_EQ(r.status, 200u) << r.body;
    EXPECT_EQ(first_text(result_of(r.json())), "Hello, Zo\xc3\xab!");

    // The decoded value must still match the body.
    expect_error_reply(c.post(call(2), {{"Mcp-Param-Who", "=?base64?" + base64("Zoe") + "?="}}), 400, 2,
                       -32020);
    expect_error_reply(c.post(call(3)), 400, 3, -32020); // the marked argument's header is missing
    expect_error_reply(c.post(call(4), {{"Mcp-Param-Who", encoded_who}, {"Mcp-Name", name.substr(0, 2)}}),
                       400, 4, -32020);

    auto const safe = c.post(echo_call(5), {{"Mcp-Name", "=?base64?" + base64("echo") + "?="}});
    EXPECT_EQ(safe.status, 200u) << safe.body;
    EXPECT_EQ(first_text(result_of(safe.json())), "hi");
    c.expect_schema_valid();
}

// DIGEST §2: -32022 with data {supported, requested}; supported = server/discover's supportedVersions.
TEST(HttpStatus, UnsupportedVersionIs400With32022) {
    inproc_server s;
    mcp_http c(s.ep());
    auto message = modern_request("v", "tools/list");
    message["params"].as_object()["_meta"].as_object()[key_protocol_version] = "2027-01-01";
    auto const r = c.post(message);
    expect_error_reply(r, 400, "v", -32022);
    auto const data = error_of(r.json()).at("data").as_object();
    EXPECT_EQ(data.at("requested"), "2027-01-01");
    auto const discover = result_of(c.post(modern_request(2, "server/discover")).json());
    EXPECT_EQ(data.at("supported"), discover.at("supportedVersions"));
    c.expect_schema_valid();
}

// DIGEST §2: a missing required envelope field is -32602 with 400, even with a correct version header; a
// modern version header on a body with no `_meta` and no session is -32602 too (§14 row 13).
TEST(HttpStatus, MissingEnvelopeIs400WithInvalidParams) {
    inproc_server s;
    mcp_http c(s.ep());
    auto no_caps = modern_request(1, "server/discover");
    no_caps["params"].as_object()["_meta"].as_object().erase(key_client_capabilities);
    expect_error_reply(c.post(no_caps), 400, 1, -32602);

    auto const bare = legacy_request(2, "server/discover");
    expect_error_reply(
        c.post(bare, {{"MCP-Protocol-Version", "2026-07-28"}, {"Mcp-Method", "server/discover"}}), 400, 2,
        -32602);
    c.expect_schema_valid();
}

// DIGEST §1 (conf): unknown and removed methods with valid modern `_meta` are -32601 with 404.
TEST(HttpStatus, UnknownOrRemovedMethodIs404With32601) {
    inproc_server s;
    mcp_http c(s.ep());
    expect_error_reply(c.post(modern_request(1, "no/such/method")), 404, 1, -32601);
    expect_error_reply(c.post(modern_request("p", "ping")), 404, "p", -32601);
    expect_error_reply(c.post(modern_request(3, "logging/setLevel", {{"level", "debug"}})), 404, 3, -32601);
    c.expect_schema_valid();
}

// DIGEST §9: an accepted notification is 202 with no body.
TEST(HttpStatus, NotificationIsAccepted202WithoutBody) {
    inproc_server s;
    mcp_http c(s.ep());
    auto const n =
        notification("notifications/cancelled", {{"requestId", 99}, {"reason", "changed my mind"}});
    auto const r = c.post(n, {{"Mcp-Method", "notifications/cancelled"}});
    EXPECT_EQ(r.status, 202u);
    EXPECT_TRUE(r.body.empty()) << r.body;
}

// ERA-POLICY: GET and DELETE belong to legacy sessions only; elsewhere 405, whose Allow names what the
// endpoint does accept (RFC 9110 §15.5.6).
TEST(HttpStatus, GetAndDeleteWithoutSessionAre405WithAllow) {
    inproc_server s;
    for (std::string const method : {"GET", "DELETE"}) {
        auto const r = exchange(
            s.ep(), {.method = method, .headers = {{"Accept", std::string(accept_both)}}, .body = {}});
        EXPECT_EQ(r.status, 405u) << method << " " << r.body;
        auto const allow = r.header("Allow");
        ASSERT_TRUE(allow) << method;
        EXPECT_NE(allow->find("POST"), std::string::npos) << *allow;
        EXPECT_EQ(allow->find(method), std::string::npos) << method << " refused yet allowed: " << *allow;
    }
    // A method the endpoint never serves lists everything it does.
    auto spec = post_spec("{}");
    spec.method = "PUT";
    auto const r = exchange(s.ep(), spec);
    EXPECT_EQ(r.status, 405u);
    auto const allow = r.header("Allow");
    ASSERT_TRUE(allow);
    EXPECT_NE(allow->find("POST"), std::string::npos) << *allow;
}

// Every JSON-RPC error answers with the request's id in its own JSON type, whatever refused it.
TEST(HttpStatus, EveryErrorEchoesTheRequestId) {
    inproc_server s;
    mcp_http c(s.ep());
    for (json::value const& id : {json::value(41), json::value("41")}) {
        expect_error_reply(c.post(echo_call(id), {{"Mcp-Name", "add"}}), 400, id, -32020);
        auto unsupported = modern_request(id, "tools/list");
        unsupported["params"].as_object()["_meta"].as_object()[key_protocol_version] = "2027-01-01";
        expect_error_reply(c.post(unsupported), 400, id, -32022);
        expect_error_reply(c.post(legacy_request(id, "tools/list")), 400, id, -32602);
        expect_error_reply(c.post(modern_request(id, "no/such/method")), 404, id, -32601);
        auto const unknown_session = c.post(legacy_request(id, "tools/list"),
                                            {{"Mcp-Session-Id", "00000000000000000000000000000000"}});
        EXPECT_EQ(unknown_session.status, 404u);
        EXPECT_TRUE(is_response_to(unknown_session.json(), id)) << unknown_session.body;
        // An error result of a served call is not a JSON-RPC error, but an unknown tool is.
        auto const unknown_tool = c.post(modern_request(id, "tools/call", call_params("nope")));
        EXPECT_TRUE(is_response_to(unknown_tool.json(), id)) << unknown_tool.body;
        EXPECT_EQ(code_of(unknown_tool.json()), -32602) << unknown_tool.body;
    }
    c.expect_schema_valid();
}

// DIGEST §9: a POST's Accept must list application/json and text/event-stream.
TEST(HttpStatus, AcceptWithoutBothTypesIs406) {
    inproc_server s;
    mcp_http c(s.ep());
    for (std::string const accept : {"application/json", "text/event-stream", "text/html"}) {
        auto const r = c.post(modern_request(1, "tools/list"), {{"Accept", accept}});
        EXPECT_EQ(r.status, 406u) << accept << ": " << r.body;
    }
    auto spec = c.spec_for(modern_request(2, "tools/list"));
    remove_header(spec, "Accept");
    EXPECT_EQ(exchange(s.ep(), spec).status, 406u);
    c.expect_schema_valid();
}

// DIGEST §9 status table: a handler that needs a client capability the request did not declare answers
// -32021 naming it, with 400 like the other modern refusals.
TEST(HttpStatus, MissingRequiredClientCapabilityIs400With32021) {
    inproc_server s;
    s.srv().add_tool(duet::server::tool{.name = "needs_elicitation", .description = "Requires elicitation"},
                     [](json::object const&, duet::server::request_context& ctx) {
                         ctx.require(duet::protocol::client_capability::elicitation_form);
                         return duet::server::tool_result::text("asked");
                     });
    mcp_http c(s.ep());
    auto const r = c.post(modern_request("need", "tools/call", call_params("needs_elicitation")));
    expect_error_reply(r, 400, "need", -32021);
    auto const m = r.json();
    EXPECT_TRUE(m.at("error").at("data").as_object().contains("requiredCapabilities")) << m;
    auto const declared = c.post(modern_request("has", "tools/call", call_params("needs_elicitation"),
                                                {{"elicitation", json::object{}}}));
    EXPECT_EQ(declared.status, 200u) << declared.body;
    c.expect_schema_valid();
}

// http_server.hpp: bodies are bounded before any JSON is parsed.
TEST(HttpStatus, BodyOverTheLimitIs413) {
    inproc_server s({.max_body_bytes = 2048});
    mcp_http c(s.ep());
    auto const big =
        c.post(modern_request(1, "tools/call", call_params("echo", {{"text", std::string(8192, 'x')}})));
    EXPECT_EQ(big.status, 413u) << big.body;
    auto const small =
        c.post(modern_request(2, "tools/call", call_params("echo", {{"text", std::string(512, 'x')}})));
    EXPECT_EQ(small.status, 200u) << small.body;
    c.expect_schema_valid();
}

// DIGEST §9: an invalid Origin is 403 (DNS-rebinding protection); loopback origins and none at all pass.
TEST(HttpStatus, ForeignOriginIs403) {
    inproc_server s;
    mcp_http c(s.ep());
    for (std::string const origin : {"http://evil.example", "https://evil.example:443", "null"}) {
        auto const r = c.post(modern_request(1, "tools/list"), {{"Origin", origin}});
        EXPECT_EQ(r.status, 403u) << origin << ": " << r.body;
    }
    for (std::string const origin : {"http://localhost:3000", "http://127.0.0.1"}) {
        auto const r = c.post(modern_request(2, "tools/list"), {{"Origin", origin}});
        EXPECT_EQ(r.status, 200u) << origin << ": " << r.body;
    }
    c.expect_schema_valid();
}

// http_server.hpp: a server bound to loopback answers only Host headers naming loopback, so a rebound DNS
// name cannot reach it.
TEST(HttpStatus, NonLoopbackHostIs403) {
    inproc_server s;
    mcp_http c(s.ep());
    for (std::string const& host : std::vector<std::string>{
             "evil.example", "evil.example:" + std::to_string(s.ep().port), "10.0.0.1"}) {
        auto const r = c.post(modern_request(1, "tools/list"), {{"Host", host}});
        EXPECT_EQ(r.status, 403u) << host << ": " << r.body;
    }
    auto const local =
        c.post(modern_request(2, "tools/list"), {{"Host", "localhost:" + std::to_string(s.ep().port)}});
    EXPECT_EQ(local.status, 200u) << local.body;
    c.expect_schema_valid();
}

// DIGEST §9: auth failures are 401 with WWW-Authenticate; the right token is served.
TEST(HttpStatus, BearerTokenIsRequiredWhenConfigured) {
    inproc_server s({.bearer_token = "s3cret"});
    mcp_http c(s.ep());
    auto const missing = c.post(modern_request(1, "tools/list"));
    EXPECT_EQ(missing.status, 401u) << missing.body;
    EXPECT_TRUE(missing.header("WWW-Authenticate").value_or("").starts_with("Bearer"));
    auto const wrong = c.post(modern_request(2, "tools/list"), {{"Authorization", "Bearer guess"}});
    EXPECT_EQ(wrong.status, 401u) << wrong.body;
    EXPECT_TRUE(wrong.header("WWW-Authenticate").value_or("").starts_with("Bearer"));
    auto const right = c.post(modern_request(3, "tools/list"), {{"Authorization", "Bearer s3cret"}});
    EXPECT_EQ(right.status, 200u) << right.body;
    expect_modern_result(right.json(), true);
    c.expect_schema_valid();
}

} // namespace
