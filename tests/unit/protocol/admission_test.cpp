// Tests for duet/protocol/admission.hpp without HTTP (stdio, or any transport that passes no headers): which
// era governs one request, or why it is refused.
//
// Requirements: ERA-POLICY "Admission of one request" steps 1-9 and "Consequences"; DIGEST §14 rows 1-12
// (the compatibility matrix), §1 (the (conf) -32601 rules), §2 (the envelope), §11 (legacy lifecycle: ping
// before initialize, negotiation); seeds/negotiation-module.txt (admit, negotiateLegacy, "a second initialize
// renegotiates", "non-object _meta counts as absent"); seeds/handshake-cap-pr.txt (initialize never
// negotiates 2026-07-28). HTTP-only behaviour lives in admission_http_test.cpp.
#include <duet/protocol/admission.hpp>
#include <duet/protocol/meta_keys.hpp>

#include "unit/protocol/admission_support.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace {

using namespace duet::test::admission_rows;

// ---- fixtures ---------------------------------------------------------------------------------------------

server_capabilities const& bare_server() {
    static server_capabilities const caps;
    return caps;
}

admission_context context(std::optional<version> session = std::nullopt,
                          era_support eras = era_support::both) {
    admission_context ctx;
    ctx.session.legacy = session;
    ctx.capabilities = &full_server();
    ctx.eras = eras;
    return ctx;
}

// ---- expectations -----------------------------------------------------------------------------------------

constexpr refused not_found_legacy{errc::method_not_found, 200};
constexpr refused invalid_400{errc::invalid_params, 400};

// ---- DIGEST §14 rows 1-12, one table row each -------------------------------------------------------------

struct matrix_row {
    std::string_view name;
    std::string_view method;
    std::string_view params; // JSON, "@M" = the valid modern envelope
    outcome expected;
    std::optional<version> session = std::nullopt;
    bool bare = false; // the server advertises no capability
};

void PrintTo(matrix_row const& row, std::ostream* os) {
    *os << row.name << ": " << row.method << ' ' << row.params;
}

class CompatibilityMatrix : public ::testing::TestWithParam<matrix_row> {};

TEST_P(CompatibilityMatrix, AnswersAsTheMatrixSays) {
    auto const& row = GetParam();
    auto ctx = context(row.session);
    if (row.bare)
        ctx.capabilities = &bare_server();
    EXPECT_TRUE(matches(admit(make_request(row.method, row.params), ctx), row.expected));
}

constexpr auto v2024 = version::v2024_11_05;

matrix_row const matrix_rows[] = {
    // Row 1 / step 2: M with a version that is not a string -> -32602 (400), in any session.
    {"Row1VersionNumberIsInvalidParams", "tools/list", R"({"_meta":{@P:20260728,@C:{}}})", invalid_400},
    {"Row1VersionNullIsInvalidParams", "server/discover", R"({"_meta":{@P:null,@C:{}}})", invalid_400},
    {"Row1VersionNotStringInLegacySessionIsInvalidParams", "tools/list", R"({"_meta":{@P:["2026-07-28"]}})",
     invalid_400, v2025_11},
    // Row 3 / step 4: M with a string that is not a modern version -> -32022 (400).
    {"Row3UnknownVersionIsUnsupported", "server/discover", R"({"_meta":{@P:"2027-01-01",@C:{}}})",
     unsupported_400},
    {"Row3LegacyVersionInMetaIsUnsupported", "tools/list", R"({"_meta":{@P:"2025-11-25",@C:{}}})",
     unsupported_400},
    {"Row3LegacyVersionInMetaInsideItsOwnSessionIsUnsupported", "tools/list",
     R"({"_meta":{@P:"2025-06-18",@C:{}}})", unsupported_400, v2025_06},
    {"Row3VersionWithTrailingSpaceIsUnsupported", "tools/list", R"({"_meta":{@P:"2026-07-28 ",@C:{}}})",
     unsupported_400},
    {"Row3EmptyVersionIsUnsupported", "tools/list", R"({"_meta":{@P:"",@C:{}}})", unsupported_400},
    {"Row3VersionIsCheckedBeforeClientCapabilities", "tools/list", R"({"_meta":{@P:"v999"}})",
     unsupported_400},
    {"Row3LegacyVersionInMetaOnInitializeIsUnsupported", "initialize",
     R"({"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"},
         "_meta":{@P:"2025-06-18"}})",
     unsupported_400},
    // Row 4 / step 5: clientCapabilities missing or not an object -> -32602 (400); clientInfo optional.
    {"Row4ClientCapabilitiesMissingIsInvalidParams", "tools/list", R"({"_meta":{@P:"2026-07-28"}})",
     invalid_400},
    {"Row4ClientCapabilitiesStringIsInvalidParams", "tools/list", R"({"_meta":{@P:"2026-07-28",@C:"x"}})",
     invalid_400},
    {"Row4ClientCapabilitiesNullIsInvalidParams", "tools/list", R"({"_meta":{@P:"2026-07-28",@C:null}})",
     invalid_400, v2025_11},
    {"Row4ClientCapabilitiesAreCheckedBeforeTheMethod", "no/such/method", R"({"_meta":{@P:"2026-07-28"}})",
     invalid_400},
    {"Row4ClientInfoIsOptional", "tools/list", "{@M}", modern_serve},
    {"Row4ClientInfoWithoutVersionIsInvalidParams", "tools/list", R"({"_meta":{@P:"2026-07-28",@C:{},
         "io.modelcontextprotocol/clientInfo":{"name":"c"}}})",
     invalid_400},
    {"Row4UnknownLogLevelIsInvalidParams", "tools/list", R"({"_meta":{@P:"2026-07-28",@C:{},
         "io.modelcontextprotocol/logLevel":"verbose"}})",
     invalid_400},
    {"Row4KnownLogLevelIsServed", "tools/list", R"({"_meta":{@P:"2026-07-28",@C:{},
         "io.modelcontextprotocol/logLevel":"debug"}})",
     modern_serve},
    // Row 5: methods the modern protocol does not have -> -32601 (404).
    {"Row5ModernInitializeIsMethodNotFound", "initialize",
     R"({@M,"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}})",
     not_found_404},
    {"Row5ModernInitializeInLegacySessionIsMethodNotFound", "initialize", "{@M}", not_found_404, v2025_11},
    {"Row5ModernPingIsMethodNotFound", "ping", "{@M}", not_found_404},
    {"Row5ModernLoggingSetLevelIsMethodNotFound", "logging/setLevel", R"({@M,"level":"info"})",
     not_found_404},
    {"Row5ModernResourcesSubscribeIsMethodNotFound", "resources/subscribe", R"({@M,"uri":"file:///a"})",
     not_found_404},
    {"Row5ModernResourcesUnsubscribeIsMethodNotFound", "resources/unsubscribe", R"({@M,"uri":"file:///a"})",
     not_found_404},
    // 2025-11-25's tasks/result left core, and the extension has none (SEP-2663).
    {"Row5ModernTasksResultIsMethodNotFound", "tasks/result", R"({@M,"taskId":"t"})", not_found_404},
    {"Row5ModernUnknownMethodIsMethodNotFound", "no/such/method", "{@M}", not_found_404},
    {"Row5ModernNotificationSentAsRequestIsMethodNotFound", "notifications/cancelled", "{@M}", not_found_404},
    {"Row5ModernServerToClientMethodIsMethodNotFound", "sampling/createMessage", "{@M}", not_found_404},
    // Row 6: a gated method whose capability the server does not advertise -> -32601 (404).
    {"Row6ModernToolsListNotAdvertisedIsMethodNotFound", "tools/list", "{@M}", not_found_404, std::nullopt,
     true},
    {"Row6ModernToolsCallNotAdvertisedIsMethodNotFound", "tools/call", R"({@M,"name":"echo"})", not_found_404,
     std::nullopt, true},
    {"Row6ModernPromptsGetNotAdvertisedIsMethodNotFound", "prompts/get", R"({@M,"name":"p"})", not_found_404,
     std::nullopt, true},
    {"Row6ModernResourcesReadNotAdvertisedIsMethodNotFound", "resources/read", R"({@M,"uri":"file:///a"})",
     not_found_404, std::nullopt, true},
    {"Row6ModernCompletionNotAdvertisedIsMethodNotFound", "completion/complete", "{@M}", not_found_404,
     std::nullopt, true},
    {"Row6ModernDiscoverNeedsNoCapability", "server/discover", "{@M}", modern_serve, std::nullopt, true},
    {"Row6ModernListenNeedsNoCapability", "subscriptions/listen", "{@M}", modern_serve, std::nullopt, true},
    {"Row6LegacyToolsListNotAdvertisedIsMethodNotFound", "tools/list", "{}", not_found_legacy, v2025_11,
     true},
    {"Row6LegacyLoggingSetLevelNotAdvertisedIsMethodNotFound", "logging/setLevel", R"({"level":"info"})",
     not_found_legacy, v2025_06, true},
    // Row 7: modern methods are served as modern, statelessly, in any session, including a legacy one.
    {"Row7DiscoverWithoutSessionIsModern", "server/discover", "{@M}", modern_serve},
    {"Row7DiscoverInLegacySessionIsModern", "server/discover", "{@M}", modern_serve, v2025_11},
    {"Row7ToolsListInOldLegacySessionIsModern", "tools/list", "{@M}", modern_serve, v2024},
    {"Row7ToolsCallInLegacySessionIsModern", "tools/call", R"({@M,"name":"echo","arguments":{}})",
     modern_serve, v2025_03},
    {"Row7ListenInLegacySessionIsModern", "subscriptions/listen", "{@M}", modern_serve, v2025_06},
    {"Row7ResourcesReadIsModern", "resources/read", R"({@M,"uri":"file:///a"})", modern_serve},
    {"Row7PromptsGetIsModern", "prompts/get", R"({@M,"name":"p"})", modern_serve},
    {"Row7CompletionCompleteIsModern", "completion/complete", "{@M}", modern_serve, v2025_11},
    // Row 8 / step 6: initialize without M is the legacy handshake; bad params -> -32602.
    {"Row8InitializeAsking20260728Negotiates20251125", "initialize",
     R"({"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"c","version":"1"}})",
     handshake(v2025_11)},
    {"Row8InitializeAskingUnknownVersionNegotiates20251125", "initialize",
     R"({"protocolVersion":"2027-01-01","capabilities":{},"clientInfo":{"name":"c","version":"1"}})",
     handshake(v2025_11)},
    {"Row8InitializeAskingEmptyVersionNegotiates20251125", "initialize",
     R"({"protocolVersion":"","capabilities":{},"clientInfo":{"name":"c","version":"1"}})",
     handshake(v2025_11)},
    {"Row8InitializeWithProtocolVersionNumberIsInvalidParams", "initialize",
     R"({"protocolVersion":20251125,"capabilities":{},"clientInfo":{"name":"c","version":"1"}})",
     invalid_400},
    {"Row8InitializeWithoutProtocolVersionIsInvalidParams", "initialize",
     R"({"capabilities":{},"clientInfo":{"name":"c","version":"1"}})", invalid_400},
    {"Row8InitializeWithoutCapabilitiesIsInvalidParams", "initialize",
     R"({"protocolVersion":"2025-11-25","clientInfo":{"name":"c","version":"1"}})", invalid_400},
    {"Row8InitializeWithCapabilitiesNotObjectIsInvalidParams", "initialize",
     R"({"protocolVersion":"2025-11-25","capabilities":[],"clientInfo":{"name":"c","version":"1"}})",
     invalid_400},
    {"Row8InitializeWithoutClientInfoIsInvalidParams", "initialize",
     R"({"protocolVersion":"2025-11-25","capabilities":{}})", invalid_400},
    {"Row8InitializeWithClientInfoMissingVersionIsInvalidParams", "initialize",
     R"({"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c"}})", invalid_400},
    {"Row8InitializeWithoutParamsIsInvalidParams", "initialize", "null", invalid_400},
    {"Row8InitializeWithArrayParamsIsInvalidParams", "initialize", R"(["2025-11-25"])", invalid_400},
    // Row 9 (ERA-POLICY "Consequences"): a second initialize renegotiates.
    {"Row9SecondInitializeRenegotiates", "initialize",
     R"({"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}})",
     handshake(v2025_06), v2024},
    {"Row9SecondInitializeAskingModernGets20251125", "initialize",
     R"({"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"c","version":"1"}})",
     handshake(v2025_11), v2025_06},
    {"Row9SecondInitializeWithBadParamsIsInvalidParams", "initialize", R"({"protocolVersion":"2025-06-18"})",
     invalid_400, v2025_11},
    // Row 10 / step 7: ping without M before initialize is answered {}.
    {"Row10PingWithoutParamsBeforeInitializeIsAnswered", "ping", "null", ping_answer},
    {"Row10PingWithEmptyParamsBeforeInitializeIsAnswered", "ping", "{}", ping_answer},
    // Row 11 / step 8: no M in a legacy session -> served under the session's version; modern-only -> -32601.
    {"Row11ToolsListInSessionIsServedAtSessionVersion", "tools/list", "{}", legacy_serve(v2025_11), v2025_11},
    {"Row11ToolsCallInOldestSessionIsServedAtSessionVersion", "tools/call", R"({"name":"echo"})",
     legacy_serve(v2024), v2024},
    {"Row11PingInSessionIsServedAtSessionVersion", "ping", "null", legacy_serve(v2025_03), v2025_03},
    {"Row11LoggingSetLevelInSessionIsServed", "logging/setLevel", R"({"level":"info"})",
     legacy_serve(v2025_06), v2025_06},
    {"Row11ResourcesSubscribeInSessionIsServed", "resources/subscribe", R"({"uri":"file:///a"})",
     legacy_serve(v2025_11), v2025_11},
    {"Row11ServerDiscoverInSessionIsMethodNotFound", "server/discover", "{}", not_found_legacy, v2025_11},
    {"Row11SubscriptionsListenInSessionIsMethodNotFound", "subscriptions/listen", "{}", not_found_legacy,
     v2025_11},
    {"Row11ElicitationCreateFromClientIsMethodNotFound", "elicitation/create", "{}", not_found_legacy,
     v2025_11},
    {"Row11NotificationSentAsRequestIsMethodNotFound", "notifications/initialized", "{}", not_found_legacy,
     v2025_11},
    {"Row11UnknownMethodInSessionIsMethodNotFound", "tasks/delete", R"({"taskId":"t"})", not_found_legacy,
     v2025_11},
    {"Row11MetaWithoutVersionInSessionIsLegacy", "tools/list", R"({"_meta":{"progressToken":1}})",
     legacy_serve(v2025_06), v2025_06},
    // Row 12 / step 9: no M, no session, not initialize or ping -> -32602 (400).
    {"Row12ToolsListWithoutMetaOrSessionIsInvalidParams", "tools/list", "{}", invalid_400},
    {"Row12DiscoverWithoutMetaIsInvalidParams", "server/discover", "null", invalid_400},
    {"Row12UnknownMethodWithoutMetaIsInvalidParams", "no/such/method", "{}", invalid_400},
    {"Row12MetaWithoutVersionIsInvalidParams", "tools/list", R"({"_meta":{@C:{}}})", invalid_400},
};

INSTANTIATE_TEST_SUITE_P(Admission, CompatibilityMatrix, ::testing::ValuesIn(matrix_rows),
                         [](auto const& p) { return std::string(p.param.name); });

// ---- seeds and consequences -------------------------------------------------------------------------------

// seeds/handshake-cap-pr.txt, DIGEST §11: a supported handshake version is echoed.
TEST(Admission, InitializeEchoesEveryHandshakeVersion) {
    for (auto const v : handshake_versions) {
        auto const params = R"({"protocolVersion":")" + std::string(to_string(v)) +
                            R"(","capabilities":{},"clientInfo":{"name":"c","version":"1"}})";
        EXPECT_TRUE(matches(admit(make_request("initialize", params), context()), handshake(v)))
            << to_string(v);
    }
}

// ERA-POLICY step 6: the handshake carries the table row of initialize; nothing modern is attached.
TEST(Admission, HandshakeCarriesTheInitializeRowAndNoEnvelope) {
    auto const a = admit(
        make_request(
            "initialize",
            R"({"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}})"),
        context());
    ASSERT_TRUE(a.has_value()) << describe(a);
    EXPECT_EQ(a->method, &info(method_id::initialize));
    EXPECT_FALSE(a->envelope.has_value());
}

// ERA-POLICY step 1: `_meta` present but not an object counts as absent metadata (5, "x", [], null), on
// initialize, on ping, without a session and inside one.
TEST(Admission, NonObjectMetaCountsAsAbsent) {
    for (std::string_view const meta : {"5", R"("x")", "[]", "null"}) {
        SCOPED_TRACE(meta);
        std::string const m(meta);
        EXPECT_TRUE(
            matches(admit(make_request("initialize", R"({"_meta":)" + m +
                                                         R"(,"protocolVersion":"2025-03-26","capabilities":{},
                                                   "clientInfo":{"name":"c","version":"1"}})"),
                          context()),
                    handshake(v2025_03)));
        EXPECT_TRUE(matches(admit(make_request("ping", R"({"_meta":)" + m + "}"), context()), ping_answer));
        EXPECT_TRUE(
            matches(admit(make_request("tools/list", R"({"_meta":)" + m + "}"), context()), invalid_400));
        EXPECT_TRUE(matches(admit(make_request("tools/list", R"({"_meta":)" + m + "}"), context(v2025_06)),
                            legacy_serve(v2025_06)));
    }
}

// ERA-POLICY step 9: the -32602 names the metadata key and every version, modern and legacy, in both message
// and data (DIGEST §14 row 12).
TEST(Admission, MissingVersionNamesTheKeyAndEveryVersion) {
    auto const a = admit(make_request("tools/list", "{}"), context());
    ASSERT_TRUE(matches(a, invalid_400));
    auto const e = a.error().error;
    for (std::string_view const needle :
         {meta_key::protocol_version, std::string_view("2026-07-28"), std::string_view("2025-11-25"),
          std::string_view("2025-06-18"), std::string_view("2025-03-26"), std::string_view("2024-11-05")}) {
        EXPECT_NE(e.message.find(needle), std::string::npos) << needle;
        EXPECT_NE(json::serialize(e.data).find(needle), std::string::npos) << needle;
    }
    EXPECT_EQ(e, missing_protocol_version(true, true));
}

// ERA-POLICY step 4, DIGEST §2: -32022 data = {supported: the discover list, requested: the value
// byte-exact}.
TEST(Admission, UnsupportedVersionEchoesTheRequestedValueByteExact) {
    for (std::string_view const requested :
         {"2025-11-25", "2027-01-01", "", " 2026-07-28", "2026-07-28\t", "v\xC3\xA9rsion", "a\"b\\c"}) {
        json::object meta{{meta_key::protocol_version, requested},
                          {meta_key::client_capabilities, json::object{}}};
        duet::jsonrpc::request req{1, "server/discover", json::object{{"_meta", std::move(meta)}}};
        auto const a = admit(req, context());
        ASSERT_TRUE(matches(a, unsupported_400)) << requested;
        EXPECT_EQ(a.error().error, unsupported_protocol_version(requested));
        auto const error = a.error().error;
        auto const& data = error.data.as_object();
        EXPECT_EQ(std::string_view(data.at("requested").as_string()), requested);
        EXPECT_EQ(data.at("supported"), json::value(advertised_modern_versions()));
    }
}

// ERA-POLICY "Consequences": a modern request never reads the session. The same request gets the same answer
// with no session and in a Legacy(v) session of every version. (A stale session id never reaches admission:
// route_post() sends a claimed request to the modern route whatever it names, http_routing_test.cpp.)
TEST(Admission, ModernAdmissionDoesNotDependOnTheSession) {
    constexpr std::string_view requests[][2] = {
        {"tools/list", "{@M}"},
        {"server/discover", "{@M}"},
        {"initialize", "{@M}"},
        {"ping", "{@M}"},
        {"no/such/method", "{@M}"},
        {"tools/list", R"({"_meta":{@P:"2025-11-25"}})"},
        {"tools/list", R"({"_meta":{@P:7}})"},
        {"tools/list", R"({"_meta":{@P:"2026-07-28"}})"},
    };
    for (auto const& [method, params] : requests) {
        SCOPED_TRACE(std::string(method) + " " + std::string(params));
        auto const req = make_request(method, params);
        auto const baseline = admit(req, context());
        std::vector<admission_context> others;
        for (auto const v : handshake_versions)
            others.push_back(context(v));
        for (auto const& ctx : others) {
            auto const a = admit(req, ctx);
            ASSERT_EQ(a.has_value(), baseline.has_value()) << describe(a);
            if (!a) {
                EXPECT_EQ(a.error(), baseline.error());
                continue;
            }
            EXPECT_EQ(a->what, baseline->what);
            EXPECT_EQ(a->era, era::modern);
            EXPECT_EQ(a->version, baseline->version);
            EXPECT_EQ(a->method, baseline->method);
        }
    }
}

// ERA-POLICY step 5: the admitted modern request carries its checked envelope and table row.
TEST(Admission, ModernAdmissionCarriesTheEnvelopeAndMethodRow) {
    auto const a = admit(make_request("tools/call", R"({"name":"echo","_meta":{
        @P:"2026-07-28",
        @C:{"elicitation":{}},
        "io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},
        "io.modelcontextprotocol/logLevel":"error","progressToken":"p"}})"),
                         context(v2025_11));
    ASSERT_TRUE(matches(a, modern_serve));
    EXPECT_EQ(a->method, &info(method_id::tools_call));
    ASSERT_TRUE(a->envelope.has_value());
    EXPECT_EQ(a->envelope->version, version::v2026_07_28);
    EXPECT_EQ(json::value(a->envelope->client_capabilities), json::parse(R"({"elicitation":{}})"));
    EXPECT_TRUE(declares(a->envelope->client_capabilities, client_capability::elicitation_form));
    EXPECT_EQ(a->envelope->log_level, log_level::error);
    EXPECT_EQ(a->envelope->progress_token, json::value("p"));
}

// ERA-POLICY step 8: a legacy admission carries no envelope, and the row of its method.
TEST(Admission, LegacyAdmissionCarriesNoEnvelope) {
    auto const a = admit(make_request("resources/read", R"({"uri":"file:///a"})"), context(v2025_06));
    ASSERT_TRUE(matches(a, legacy_serve(v2025_06)));
    EXPECT_EQ(a->method, &info(method_id::resources_read));
    EXPECT_FALSE(a->envelope.has_value());
}

// ERA-POLICY steps 2-5 order: not-a-string (step 2) wins over a bad version, which wins over bad
// capabilities, which win over the method.
TEST(Admission, ModernChecksRunInPolicyOrder) {
    EXPECT_TRUE(matches(admit(make_request("no/such", R"({"_meta":{@P:1}})"), context()), invalid_400));
    EXPECT_TRUE(matches(admit(make_request("no/such", R"({"_meta":{@P:"x"}})"), context()), unsupported_400));
    EXPECT_TRUE(
        matches(admit(make_request("no/such", R"({"_meta":{@P:"2026-07-28"}})"), context()), invalid_400));
    EXPECT_TRUE(matches(admit(make_request("no/such", "{@M}"), context()), not_found_404));
}

// DIGEST §1 and §14 row 11: every method a client sends is admitted in exactly the legacy versions the table
// gives it (and the server advertises everything here); anything else is -32601.
TEST(Admission, LegacySessionFollowsTheMethodTable) {
    for (auto const v : handshake_versions) {
        for (auto const& row : method_table()) {
            if (row.id == method_id::initialize)
                continue; // the handshake, not a session method
            bool const admissible =
                row.kind == message_kind::request && row.client_sends() && row.available_in(v);
            auto const a = admit(make_request(row.name, "{}"), context(v));
            EXPECT_TRUE(matches(a, admissible ? outcome{legacy_serve(v)} : outcome{not_found_legacy}))
                << row.name << " in " << to_string(v);
        }
    }
}

// DIGEST §1 and §14 rows 5-7: a modern request for any table method is admitted iff 2026-07-28 has it as a
// client request; otherwise -32601 (404).
TEST(Admission, ModernRequestFollowsTheMethodTable) {
    for (auto const& row : method_table()) {
        bool const admissible =
            row.kind == message_kind::request && row.client_sends() && row.available_in(version::v2026_07_28);
        if (row.gate == capability::tasks)
            continue; // served only to requests that declare the extension: tasks_test.cpp
        auto const a = admit(make_request(row.name, "{@M}"), context());
        EXPECT_TRUE(matches(a, admissible ? outcome{modern_serve} : outcome{not_found_404})) << row.name;
        if (a) {
            EXPECT_EQ(a->method, &row);
        }
    }
}

// DIGEST §1 (conf): a gated method is -32601 in either era until its capability is advertised.
TEST(Admission, GatedMethodsNeedTheirAdvertisedCapability) {
    server_capabilities const nothing;
    auto modern_bare = context();
    modern_bare.capabilities = &nothing;
    auto legacy_bare = context(v2025_11);
    legacy_bare.capabilities = &nothing;
    for (auto const& row : method_table()) {
        if (row.gate == capability::none || row.kind != message_kind::request)
            continue;
        if (row.modern && row.gate != capability::tasks) { // tasks need the extension too: tasks_test.cpp
            EXPECT_TRUE(matches(admit(make_request(row.name, "{@M}"), modern_bare), not_found_404))
                << row.name;
            EXPECT_TRUE(matches(admit(make_request(row.name, "{@M}"), context()), modern_serve)) << row.name;
        }
        if (row.legacy_since) {
            EXPECT_TRUE(matches(admit(make_request(row.name, "{}"), legacy_bare), not_found_legacy))
                << row.name;
            EXPECT_TRUE(
                matches(admit(make_request(row.name, "{}"), context(v2025_11)), legacy_serve(v2025_11)))
                << row.name;
        }
    }
}

// resources/(un)subscribe needs `resources.subscribe`, not just `resources`.
TEST(Admission, ResourcesSubscribeNeedsTheSubscribeCapability) {
    server_capabilities caps;
    caps.resources = true;
    auto ctx = context(v2025_11);
    ctx.capabilities = &caps;
    EXPECT_TRUE(matches(admit(make_request("resources/list", "{}"), ctx), legacy_serve(v2025_11)));
    EXPECT_TRUE(matches(admit(make_request("resources/subscribe", R"({"uri":"a"})"), ctx), not_found_legacy));
    EXPECT_TRUE(
        matches(admit(make_request("resources/unsubscribe", R"({"uri":"a"})"), ctx), not_found_legacy));
}

// ---- negotiate_legacy -------------------------------------------------------------------------------------

struct negotiation_row {
    std::string_view name;
    std::string_view params;
    version negotiated;
};

void PrintTo(negotiation_row const& row, std::ostream* os) {
    *os << row.name << ' ' << row.params;
}

class NegotiateLegacy : public ::testing::TestWithParam<negotiation_row> {};

// ERA-POLICY step 6, seeds/handshake-cap-pr.txt: the requested handshake version, else 2025-11-25; never
// modern.
TEST_P(NegotiateLegacy, PicksTheRequestedHandshakeVersionElseTheLatest) {
    EXPECT_EQ(negotiate_legacy(json::parse(GetParam().params)), GetParam().negotiated);
}

INSTANTIATE_TEST_SUITE_P(
    Admission, NegotiateLegacy,
    ::testing::Values(
        negotiation_row{"Echoes20241105", R"({"protocolVersion":"2024-11-05"})", v2024},
        negotiation_row{"Echoes20250326", R"({"protocolVersion":"2025-03-26"})", v2025_03},
        negotiation_row{"Echoes20250618", R"({"protocolVersion":"2025-06-18"})", v2025_06},
        negotiation_row{"Echoes20251125", R"({"protocolVersion":"2025-11-25"})", v2025_11},
        negotiation_row{"ModernIsCounterOffered", R"({"protocolVersion":"2026-07-28"})", v2025_11},
        negotiation_row{"UnknownIsCounterOffered", R"({"protocolVersion":"2026-08"})", v2025_11},
        negotiation_row{"NotAStringIsCounterOffered", R"({"protocolVersion":20250618})", v2025_11},
        negotiation_row{"MissingIsCounterOffered", "{}", v2025_11},
        negotiation_row{"NoParamsIsCounterOffered", "null", v2025_11}),
    [](auto const& p) { return std::string(p.param.name); });

// ---- era_support ------------------------------------------------------------------------------------------

// A legacy-only server knows nothing of `_meta` versions: it answers as a legacy server alone would, and its
// step-9 error names only the handshake versions.
TEST(Admission, LegacyOnlyServerTreatsModernMetaAsAbsent) {
    auto const eras = era_support::legacy_only;
    EXPECT_TRUE(
        matches(admit(make_request("initialize", R"({@M,"protocolVersion":"2025-06-18","capabilities":{},
                                                            "clientInfo":{"name":"c","version":"1"}})"),
                      context(std::nullopt, eras)),
                handshake(v2025_06)));
    EXPECT_TRUE(
        matches(admit(make_request("tools/list", "{@M}"), context(v2025_11, eras)), legacy_serve(v2025_11)));
    EXPECT_TRUE(matches(admit(make_request("ping", "{@M}"), context(std::nullopt, eras)), ping_answer));
    EXPECT_TRUE(
        matches(admit(make_request("server/discover", "{@M}"), context(v2025_11, eras)), not_found_legacy));

    auto const a = admit(make_request("server/discover", "{@M}"), context(std::nullopt, eras));
    ASSERT_TRUE(matches(a, invalid_400));
    EXPECT_EQ(a.error().error, missing_protocol_version(false, true));
}

// A modern-only server has no handshake, no sessions and no pre-initialize ping: everything without M is
// step 9, and its error names only the modern versions.
TEST(Admission, ModernOnlyServerRefusesEverythingWithoutMeta) {
    auto const eras = era_support::modern_only;
    for (std::string_view const method : {"initialize", "ping", "tools/list", "no/such/method"}) {
        auto const a = admit(
            make_request(
                method,
                R"({"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}})"),
            context(std::nullopt, eras));
        ASSERT_TRUE(matches(a, invalid_400)) << method;
        EXPECT_EQ(a.error().error, missing_protocol_version(true, false)) << method;
    }
    // A session the transport might still report changes nothing.
    EXPECT_TRUE(matches(admit(make_request("tools/list", "{}"), context(v2025_11, eras)), invalid_400));
}

TEST(Admission, ModernOnlyServerServesModernRequests) {
    auto const eras = era_support::modern_only;
    EXPECT_TRUE(
        matches(admit(make_request("tools/list", "{@M}"), context(std::nullopt, eras)), modern_serve));
    EXPECT_TRUE(
        matches(admit(make_request("initialize", "{@M}"), context(std::nullopt, eras)), not_found_404));
    EXPECT_TRUE(matches(
        admit(make_request("tools/list", R"({"_meta":{@P:"2025-11-25"}})"), context(std::nullopt, eras)),
        unsupported_400));
}

} // namespace
