// Tests for duet/protocol/admission.hpp on HTTP (admission_context::http set): the header cross-checks of a
// modern request, and the session rules of a POST without a version claim.
//
// Requirements: ERA-POLICY step 3 (MCP-Protocol-Version / Mcp-Method / Mcp-Name / Mcp-Param-* mirror the body
// after decoding `=?base64?…?=`, else -32020 (400), checked before step 4) and "HTTP routing of one POST";
// DIGEST §9 (header names case-insensitive, values case-sensitive, integers compared numerically; the (conf)
// order header -32020 before version -32022), §14 rows 2 and 13; seeds/handshake-cap-pr.txt (a
// counter-offered session that keeps sending `MCP-Protocol-Version: 2026-07-28` is served at the negotiated
// version).
#include <duet/jsonrpc/codec.hpp>
#include <duet/protocol/admission.hpp>

#include "unit/protocol/admission_support.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace {

using namespace duet::test::admission_rows;

// ---- fixtures ---------------------------------------------------------------------------------------------

// The x-mcp-header bindings of a "forecast" tool; every other tool has none.
std::vector<param_header> const forecast_bindings{
    {"Region", {"region"}, param_type::string},
    {"Count", {"count"}, param_type::integer},
    {"Verbose", {"verbose"}, param_type::boolean},
    {"Tenant", {"scope", "tenant"}, param_type::string},
};
param_header_lookup const bindings_of = [](std::string_view tool) -> std::span<param_header const> {
    if (tool == "forecast")
        return forecast_bindings;
    return {};
};

// ---- expectations -----------------------------------------------------------------------------------------

constexpr refused mismatch_400{errc::header_mismatch, 400};
constexpr refused invalid_params_400{errc::invalid_params, 400};
constexpr refused invalid_request_400{errc::invalid_request, 400};

// ---- one POST: body, headers, session ---------------------------------------------------------------------

struct post_row {
    std::string_view name;
    std::string_view method;
    std::string_view params; // JSON, "@M" = the valid modern envelope
    std::vector<http_header> headers;
    outcome expected;
    std::optional<version> session = std::nullopt;
};

void PrintTo(post_row const& row, std::ostream* os) {
    *os << row.name << ": " << row.method << ' ' << row.params;
    for (auto const& h : row.headers)
        *os << " [" << h.name << ": " << h.value << ']';
}

admit_result admit_post(duet::jsonrpc::request const& req, http_facts const& http,
                        std::optional<version> session = std::nullopt) {
    admission_context ctx;
    ctx.session.legacy = session;
    ctx.capabilities = &full_server();
    ctx.http = &http;
    ctx.param_headers = &bindings_of;
    return admit(req, ctx);
}

class HttpPost : public ::testing::TestWithParam<post_row> {};

TEST_P(HttpPost, IsAdmittedAsPolicySays) {
    auto const& row = GetParam();
    http_facts const http{row.headers};
    EXPECT_TRUE(matches(admit_post(make_request(row.method, row.params), http, row.session), row.expected));
}

http_header pv(std::string value) {
    return {"MCP-Protocol-Version", std::move(value)};
}
http_header mm(std::string value) {
    return {"Mcp-Method", std::move(value)};
}
http_header mn(std::string value) {
    return {"Mcp-Name", std::move(value)};
}

std::vector<post_row> const post_rows{
    // Step 3: the version and method headers of a modern request.
    {"ModernWithMatchingHeadersIsServed",
     "tools/list",
     "{@M}",
     {pv("2026-07-28"), mm("tools/list")},
     modern_serve},
    {"VersionHeaderMissingIsHeaderMismatch", "tools/list", "{@M}", {mm("tools/list")}, mismatch_400},
    {"VersionHeaderDifferingFromBodyIsHeaderMismatch",
     "tools/list",
     "{@M}",
     {pv("2025-11-25"), mm("tools/list")},
     mismatch_400},
    {"VersionHeaderIsComparedExactly",
     "tools/list",
     "{@M}",
     {pv("2026-07-28 "), mm("tools/list")},
     mismatch_400},
    {"ModernHeaderWithUnknownBodyVersionIsHeaderMismatch",
     "server/discover",
     R"({"_meta":{@P:"v999",@C:{}}})",
     {pv("2026-07-28"), mm("server/discover")},
     mismatch_400},
    {"UnknownVersionInHeaderAndBodyIsUnsupported",
     "server/discover",
     R"({"_meta":{@P:"v999",@C:{}}})",
     {pv("v999"), mm("server/discover")},
     unsupported_400},
    {"LegacyVersionInHeaderAndMetaIsUnsupported",
     "tools/list",
     R"({"_meta":{@P:"2025-11-25",@C:{}}})",
     {pv("2025-11-25"), mm("tools/list")},
     unsupported_400},
    {"VersionHeaderBase64IsDecodedBeforeComparing",
     "tools/list",
     "{@M}",
     {pv("=?base64?MjAyNi0wNy0yOA==?="), mm("tools/list")},
     modern_serve},
    {"HeaderNamesAreCaseInsensitive",
     "tools/list",
     "{@M}",
     {{"mcp-protocol-version", "2026-07-28"}, {"MCP-METHOD", "tools/list"}},
     modern_serve},
    {"UnrelatedHeadersAreIgnored",
     "tools/list",
     "{@M}",
     {{"Content-Type", "application/json"}, pv("2026-07-28"), {"Mcp-Session-Id", "abc"}, mm("tools/list")},
     modern_serve},
    {"MethodHeaderMissingIsHeaderMismatch", "tools/list", "{@M}", {pv("2026-07-28")}, mismatch_400},
    {"MethodHeaderDifferingFromBodyIsHeaderMismatch",
     "tools/list",
     "{@M}",
     {pv("2026-07-28"), mm("tools/call")},
     mismatch_400},
    {"MethodHeaderValueIsCaseSensitive",
     "tools/list",
     "{@M}",
     {pv("2026-07-28"), mm("Tools/List")},
     mismatch_400},
    {"HeadersAreCheckedBeforeTheMethod", "no/such/method", "{@M}", {pv("2026-07-28")}, mismatch_400},
    // Step 3: Mcp-Name mirrors params.name (tools/call, prompts/get) or params.uri (resources/read).
    {"NameHeaderMirroringToolNameIsServed",
     "tools/call",
     R"({@M,"name":"echo"})",
     {pv("2026-07-28"), mm("tools/call"), mn("echo")},
     modern_serve},
    {"NameHeaderMissingForToolsCallIsHeaderMismatch",
     "tools/call",
     R"({@M,"name":"echo"})",
     {pv("2026-07-28"), mm("tools/call")},
     mismatch_400},
    {"NameHeaderDifferingFromToolNameIsHeaderMismatch",
     "tools/call",
     R"({@M,"name":"echo"})",
     {pv("2026-07-28"), mm("tools/call"), mn("Echo")},
     mismatch_400},
    {"NameHeaderMirroringPromptNameIsServed",
     "prompts/get",
     R"({@M,"name":"greet"})",
     {pv("2026-07-28"), mm("prompts/get"), mn("greet")},
     modern_serve},
    {"NameHeaderMissingForPromptsGetIsHeaderMismatch",
     "prompts/get",
     R"({@M,"name":"greet"})",
     {pv("2026-07-28"), mm("prompts/get")},
     mismatch_400},
    {"NameHeaderMirroringResourceUriIsServed",
     "resources/read",
     R"({@M,"uri":"file:///a.txt"})",
     {pv("2026-07-28"), mm("resources/read"), mn("file:///a.txt")},
     modern_serve},
    {"NameHeaderForResourcesReadMirrorsUriNotName",
     "resources/read",
     R"({@M,"uri":"file:///a.txt","name":"a"})",
     {pv("2026-07-28"), mm("resources/read"), mn("a")},
     mismatch_400},
    {"NameHeaderMissingForResourcesReadIsHeaderMismatch",
     "resources/read",
     R"({@M,"uri":"file:///a.txt"})",
     {pv("2026-07-28"), mm("resources/read")},
     mismatch_400},
    {"NameHeaderBase64IsDecodedBeforeComparing",
     "tools/call",
     R"({@M,"name":"h\u00e9llo"})",
     {pv("2026-07-28"), mm("tools/call"), mn("=?base64?aMOpbGxv?=")},
     modern_serve},
    {"NameHeaderWithMalformedBase64IsHeaderMismatch",
     "tools/call",
     R"({@M,"name":"echo"})",
     {pv("2026-07-28"), mm("tools/call"), mn("=?base64?%%%?=")},
     mismatch_400},
    {"NameHeaderWithoutBodyCounterpartIsHeaderMismatch",
     "tools/call",
     "{@M}",
     {pv("2026-07-28"), mm("tools/call"), mn("echo")},
     mismatch_400},
    // Steps 2, 4, 5 keep their place around step 3.
    {"VersionNotStringIsInvalidParamsBeforeHeaders",
     "tools/list",
     R"({"_meta":{@P:5,@C:{}}})",
     {},
     invalid_params_400},
    {"MissingClientCapabilitiesWithCorrectHeadersIsInvalidParams",
     "server/discover",
     R"({"_meta":{@P:"2026-07-28"}})",
     {pv("2026-07-28"), mm("server/discover")},
     invalid_params_400},
    {"ModernInitializeWithHeadersIsMethodNotFound404",
     "initialize",
     "{@M}",
     {pv("2026-07-28"), mm("initialize")},
     not_found_404},
    {"ModernUnknownMethodWithHeadersIsMethodNotFound404",
     "no/such/method",
     "{@M}",
     {pv("2026-07-28"), mm("no/such/method")},
     not_found_404},
    // DIGEST §14 row 13 and ERA-POLICY "HTTP routing": no claim in the body and no session.
    {"Row13NoSessionModernHeaderWithoutMetaIsInvalidParams",
     "tools/list",
     "{}",
     {pv("2026-07-28"), mm("tools/list")},
     invalid_params_400},
    {"Row13DiscoverWithModernHeaderWithoutMetaIsInvalidParams",
     "server/discover",
     "{}",
     {pv("2026-07-28"), mm("server/discover")},
     invalid_params_400},
    {"VersionHeaderWithMetaLackingVersionIsInvalidParams",
     "tools/list",
     R"({"_meta":{@C:{}}})",
     {pv("2026-07-28"), mm("tools/list")},
     invalid_params_400},
    {"NoSessionLegacyHeaderWithoutMetaIsInvalidParams",
     "tools/list",
     "{}",
     {pv("2025-11-25")},
     invalid_params_400},
    {"NoSessionNoHeaderWithoutMetaIsInvalidParams", "tools/list", "{}", {}, invalid_params_400},
    {"PingBeforeInitializeIsAnswered", "ping", "{}", {}, ping_answer},
    {"InitializeOpensSessionWhateverItsVersionHeader",
     "initialize",
     R"({"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}})",
     {pv("2026-07-28")},
     handshake(v2025_06)},
    // ERA-POLICY "HTTP routing": a known session continues it; the session decides the version.
    {"LegacySessionWithModernHeaderIsServedAtNegotiatedVersion",
     "tools/list",
     "{}",
     {pv("2026-07-28")},
     legacy_serve(v2025_11),
     v2025_11},
    {"LegacySessionWithNegotiatedHeaderIsServed",
     "tools/call",
     R"({"name":"echo"})",
     {pv("2025-06-18")},
     legacy_serve(v2025_06),
     v2025_06},
    {"LegacySessionWithOtherHandshakeHeaderIsServedAtSessionVersion",
     "tools/list",
     "{}",
     {pv("2025-11-25")},
     legacy_serve(v2025_06),
     v2025_06},
    {"LegacySessionWithoutVersionHeaderIsServed", "tools/list", "{}", {}, legacy_serve(v2025_03), v2025_03},
    {"LegacySessionWithGarbageVersionHeaderIsBadRequest",
     "tools/list",
     "{}",
     {pv("garbage")},
     invalid_request_400,
     v2025_11},
    {"LegacySessionWithEmptyVersionHeaderIsBadRequest",
     "tools/list",
     "{}",
     {pv("")},
     invalid_request_400,
     v2025_11},
    {"LegacySessionDoesNotCheckModernRoutingHeaders",
     "tools/call",
     R"({"name":"echo"})",
     {pv("2025-11-25"), mm("tools/list"), mn("other")},
     legacy_serve(v2025_11),
     v2025_11},
    {"LegacySessionModernRequestStillNeedsModernHeaders", "tools/list", "{@M}", {}, mismatch_400, v2025_11},
    {"LegacySessionModernRequestWithHeadersIsModern",
     "tools/list",
     "{@M}",
     {pv("2026-07-28"), mm("tools/list")},
     modern_serve,
     v2025_11},
    // An unknown or stale session id never reaches admission: route_post() decides it
    // (http_routing_test.cpp).
};

INSTANTIATE_TEST_SUITE_P(AdmissionHttp, HttpPost, ::testing::ValuesIn(post_rows),
                         [](auto const& p) { return std::string(p.param.name); });

// ---- Mcp-Param-* ------------------------------------------------------------------------------------------

struct param_row {
    std::string_view name;
    std::string_view arguments; // JSON of params.arguments of tools/call "forecast"
    std::vector<http_header> param_headers;
    outcome expected;
};

void PrintTo(param_row const& row, std::ostream* os) {
    *os << row.name << ": " << row.arguments;
    for (auto const& h : row.param_headers)
        *os << " [" << h.name << ": " << h.value << ']';
}

class ParamHeaders : public ::testing::TestWithParam<param_row> {};

// DIGEST §9: each x-mcp-header argument present and not null travels as Mcp-Param-{Name}, compared after
// decoding (integers numerically); a missing, extra or differing header is -32020 (400).
TEST_P(ParamHeaders, MirrorTheMarkedArguments) {
    auto const& row = GetParam();
    http_facts http{{pv("2026-07-28"), mm("tools/call"), mn("forecast")}};
    http.headers.insert(http.headers.end(), row.param_headers.begin(), row.param_headers.end());
    auto const params = R"({@M,"name":"forecast","arguments":)" + std::string(row.arguments) + "}";
    EXPECT_TRUE(matches(admit_post(make_request("tools/call", params), http), row.expected));
}

http_header param(std::string name, std::string value) {
    return {"Mcp-Param-" + std::move(name), std::move(value)};
}

std::vector<param_row> const param_rows{
    {"AllMirroredIsServed",
     R"({"region":"us-west","count":7,"verbose":true,"scope":{"tenant":"acme"}})",
     {param("Region", "us-west"), param("Count", "7"), param("Verbose", "true"), param("Tenant", "acme")},
     modern_serve},
    {"NoMarkedArgumentsNeedNoHeaders", R"({"other":1})", {}, modern_serve},
    {"StringIsComparedExactly", R"({"region":"us-west"})", {param("Region", "us-east")}, mismatch_400},
    {"StringIsCaseSensitive", R"({"region":"us-west"})", {param("Region", "US-West")}, mismatch_400},
    {"StringBase64IsDecoded",
     R"({"region":"h\u00e9llo"})",
     {param("Region", "=?base64?aMOpbGxv?=")},
     modern_serve},
    {"StringWithOuterSpacesTravelsAsBase64",
     R"({"region":" padded "})",
     {param("Region", "=?base64?IHBhZGRlZCA=?=")},
     modern_serve},
    {"MalformedBase64IsHeaderMismatch",
     R"({"region":"us-west"})",
     {param("Region", "=?base64?%%%?=")},
     mismatch_400},
    {"IntegerIsComparedNumerically", R"({"count":7})", {param("Count", "007")}, modern_serve},
    {"NegativeIntegerIsComparedNumerically", R"({"count":-3})", {param("Count", "-3")}, modern_serve},
    {"IntegerAboveInt64MaxIsComparedNumerically",
     R"({"count":18446744073709551615})",
     {param("Count", "18446744073709551615")},
     modern_serve},
    {"IntegerAboveInt64MaxDifferingByOneIsHeaderMismatch",
     R"({"count":18446744073709551615})",
     {param("Count", "18446744073709551614")},
     mismatch_400},
    {"IntegerAtInt64MinIsComparedNumerically",
     R"({"count":-9223372036854775808})",
     {param("Count", "-9223372036854775808")},
     modern_serve},
    {"IntegerHeaderBeyondUint64IsHeaderMismatch",
     R"({"count":7})",
     {param("Count", "18446744073709551623")},
     mismatch_400},
    {"NegativeHeaderForAPositiveIntegerIsHeaderMismatch",
     R"({"count":7})",
     {param("Count", "-7")},
     mismatch_400},
    {"PlusSignedHeaderIsComparedNumerically", R"({"count":7})", {param("Count", "+7")}, modern_serve},
    {"DifferentIntegerIsHeaderMismatch", R"({"count":7})", {param("Count", "8")}, mismatch_400},
    {"NonNumericIntegerHeaderIsHeaderMismatch", R"({"count":7})", {param("Count", "seven")}, mismatch_400},
    {"FractionalIntegerHeaderIsHeaderMismatch", R"({"count":7})", {param("Count", "7.0")}, mismatch_400},
    {"BooleanTrueIsServed", R"({"verbose":true})", {param("Verbose", "true")}, modern_serve},
    {"BooleanFalseIsServed", R"({"verbose":false})", {param("Verbose", "false")}, modern_serve},
    {"BooleanIsCaseSensitive", R"({"verbose":true})", {param("Verbose", "True")}, mismatch_400},
    {"BooleanAsNumberIsHeaderMismatch", R"({"verbose":true})", {param("Verbose", "1")}, mismatch_400},
    {"MissingHeaderForPresentValueIsHeaderMismatch",
     R"({"region":"us-west","count":7})",
     {param("Region", "us-west")},
     mismatch_400},
    {"HeaderForAbsentArgumentIsHeaderMismatch",
     R"({"region":"us-west"})",
     {param("Region", "us-west"), param("Count", "7")},
     mismatch_400},
    {"NullValueNeedsNoHeader", R"({"region":null,"count":null})", {}, modern_serve},
    {"HeaderForNullValueIsHeaderMismatch", R"({"region":null})", {param("Region", "null")}, mismatch_400},
    {"NestedArgumentIsMirrored", R"({"scope":{"tenant":"acme"}})", {param("Tenant", "acme")}, modern_serve},
    {"NestedArgumentMissingHeaderIsHeaderMismatch", R"({"scope":{"tenant":"acme"}})", {}, mismatch_400},
    {"ParamHeaderNamesAreCaseInsensitive",
     R"({"region":"us-west","verbose":false})",
     {{"mcp-param-region", "us-west"}, {"MCP-PARAM-VERBOSE", "false"}},
     modern_serve},
};

INSTANTIATE_TEST_SUITE_P(AdmissionHttp, ParamHeaders, ::testing::ValuesIn(param_rows),
                         [](auto const& p) { return std::string(p.param.name); });

// A tool without x-mcp-header bindings needs no Mcp-Param-* header, whatever its arguments.
TEST(AdmissionHttp, ToolWithoutBindingsNeedsNoParamHeaders) {
    http_facts const http{{pv("2026-07-28"), mm("tools/call"), mn("plain")}};
    EXPECT_TRUE(matches(
        admit_post(make_request("tools/call", R"({@M,"name":"plain","arguments":{"region":"x"}})"), http),
        modern_serve));
}

// ---- seeds ------------------------------------------------------------------------------------------------

// seeds/handshake-cap-pr.txt: initialize asking 2026-07-28 is counter-offered 2025-11-25; the session it
// opens keeps serving at 2025-11-25 even when the client stamps `MCP-Protocol-Version: 2026-07-28` without
// `_meta`.
TEST(AdmissionHttp, CounterOfferedSessionIsServedAtNegotiatedVersionDespiteModernHeader) {
    http_facts const first{{pv("2026-07-28")}};
    auto const opened = admit_post(
        make_request(
            "initialize",
            R"({"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"c","version":"1"}})"),
        first);
    ASSERT_TRUE(matches(opened, handshake(v2025_11)));

    http_facts const next{{pv("2026-07-28"), {"Mcp-Session-Id", "s-1"}}};
    auto const served = admit_post(make_request("tools/list", "{}"), next, opened->version);
    ASSERT_TRUE(matches(served, legacy_serve(v2025_11)));
    EXPECT_FALSE(served->envelope.has_value()); // legacy: no resultType will be stamped
}

// ERA-POLICY "Consequences": the session a modern request arrives in changes nothing about its admission. (A
// stale Mcp-Session-Id never reaches admission: route_post() makes the request modern,
// http_routing_test.cpp.)
TEST(AdmissionHttp, SessionGivesTheSameModernAnswerAsNoSession) {
    http_facts const http{{pv("2026-07-28"), mm("tools/call"), mn("echo")}};
    auto const req = make_request("tools/call", R"({@M,"name":"echo"})");
    auto const fresh = admit_post(req, http);
    auto const in_session = admit_post(req, http, v2025_06);
    ASSERT_TRUE(matches(fresh, modern_serve));
    ASSERT_TRUE(matches(in_session, modern_serve));
    EXPECT_EQ(in_session->method, fresh->method);
    EXPECT_EQ(in_session->envelope.has_value(), fresh->envelope.has_value());
}

// -32020 says which header failed.
TEST(AdmissionHttp, HeaderMismatchNamesTheHeader) {
    struct row {
        std::vector<http_header> headers;
        std::string_view named;
    };
    for (auto const& [headers, named] : {
             row{{mm("tools/call"), mn("echo")}, "MCP-Protocol-Version"},
             row{{pv("2026-07-28"), mn("echo")}, "Mcp-Method"},
             row{{pv("2026-07-28"), mm("tools/call"), mn("other")}, "Mcp-Name"},
         }) {
        http_facts const http{headers};
        auto const a = admit_post(make_request("tools/call", R"({@M,"name":"echo"})"), http);
        ASSERT_TRUE(matches(a, mismatch_400)) << named;
        auto const error = a.error().error;
        EXPECT_NE(error.message.find(named), std::string::npos) << error.message;
        EXPECT_TRUE(error.data.is_null());
    }
}

// A session's request with a version header naming no version is refused naming the header's value, in its
// header form: bytes beyond ASCII echoed raw would make the answer invalid JSON text.
TEST(AdmissionHttp, UnsupportedVersionHeaderIsNamedInItsHeaderForm) {
    for (auto const& [value, named] : {std::pair<std::string, std::string>{"1999-01-01", "\"1999-01-01\""},
                                       {"2025\xff-06-18", "\"=?base64?MjAyNf8tMDYtMTg=?=\""}}) {
        http_facts const http{{pv(value), {"Mcp-Session-Id", "s-1"}}};
        auto const a = admit_post(make_request("tools/list", "{}"), http, v2025_06);
        ASSERT_TRUE(matches(a, invalid_request_400)) << named;
        auto const& message = a.error().error.message;
        EXPECT_NE(message.find(named), std::string::npos) << message;
        auto const text =
            duet::jsonrpc::serialize(duet::jsonrpc::error_response{std::nullopt, a.error().error});
        boost::system::error_code ec;
        (void)boost::json::parse(text, ec);
        EXPECT_FALSE(ec) << "the answer is JSON text";
    }
}

TEST(AdmissionHttp, HttpFactsFindIgnoresNameCase) {
    http_facts const http{{{"X-Other", "1"}, {"mcp-method", "tools/list"}, {"MCP-METHOD", "second"}}};
    EXPECT_EQ(http.find("Mcp-Method"), std::optional<std::string_view>("tools/list"));
    EXPECT_EQ(http.find("MCP-Protocol-Version"), std::nullopt);
}

} // namespace
