// Both eras on one stdio process (ERA-POLICY, DIGEST §10, §11, §14): a legacy session and modern requests
// interleave, each answered in its own era's shape, and the single-era flags behave like single-era servers.
// Every transcript is checked against the official schema of its era at the end.
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "stdio/stdio_client.hpp"

#include <gtest/gtest.h>

namespace {

namespace json = boost::json;
using namespace duet::test;

// ERA-POLICY "Consequences": legacy and modern requests in one process, each in its own shape; initialize
// asking for 2026-07-28 gets 2025-11-25; no legacy result ever carries resultType / ttlMs / cacheScope;
// modern results carry resultType, serverInfo, and cache hints on discover, lists and read.
TEST(StdioTranscript, LegacySessionAndModernRequestsInterleave) {
    stdio_client c;
    c.send(initialize_request(1, "2026-07-28"));
    auto init = c.response(1);
    EXPECT_EQ(result_of(init).at("protocolVersion"), "2025-11-25");
    expect_legacy_result(init);
    c.send(initialized_notification());

    c.send(modern_request("d", "server/discover"));
    auto discover = c.response("d");
    expect_modern_result(discover, true);
    EXPECT_EQ(result_of(discover).at("supportedVersions"), (json::array{"2026-07-28"}));

    c.send(legacy_request(2, "tools/list"));
    c.send(modern_request(3, "tools/list"));
    c.send(legacy_request(4, "resources/list"));
    c.send(modern_request(5, "resources/list"));
    c.send(legacy_request(6, "resources/templates/list"));
    c.send(modern_request(7, "resources/templates/list"));
    c.send(legacy_request(8, "prompts/list"));
    c.send(modern_request(9, "prompts/list"));
    c.send(legacy_request(10, "resources/read", {{"uri", "duet://demo/readme"}}));
    c.send(modern_request(11, "resources/read", {{"uri", "duet://demo/greeting/ada"}}));
    c.send(legacy_request(12, "tools/call", call_params("echo", {{"text", "legacy"}})));
    c.send(modern_request(13, "tools/call", call_params("echo", {{"text", "modern"}})));
    c.send(legacy_request(14, "prompts/get", {{"name", "review"}, {"arguments", {{"language", "c++"}}}}));
    c.send(modern_request(15, "prompts/get", {{"name", "review"}, {"arguments", {{"language", "go"}}}}));
    json::object const complete{{"ref", {{"type", "ref/prompt"}, {"name", "review"}}},
                                {"argument", {{"name", "language"}, {"value", "c"}}}};
    c.send(legacy_request(16, "completion/complete", complete));
    c.send(modern_request(17, "completion/complete", complete));
    c.send(legacy_request(18, "ping"));

    for (int id : {2, 4, 6, 8, 10, 12, 14, 16, 18})
        expect_legacy_result(c.response(id));
    for (int id : {3, 5, 7, 9, 11})
        expect_modern_result(c.response(id), true);
    for (int id : {13, 15, 17})
        expect_modern_result(c.response(id), false);

    EXPECT_EQ(first_text(result_of(c.response(12))), "legacy");
    EXPECT_EQ(first_text(result_of(c.response(13))), "modern");
    auto const values = result_of(c.response(17)).at("completion").at("values");
    EXPECT_EQ(values, (json::array{"c", "c++"}));

    EXPECT_EQ(c.finish(), 0);
    c.expect_schema_valid();
}

// ERA-POLICY: a modern request never reads or changes the session; modern logging/setLevel is -32601 and the
// session's own setLevel still governs legacy requests.
TEST(StdioTranscript, ModernRequestNeverTouchesSession) {
    stdio_client c;
    // A modern request first opens nothing: a later _meta-less request still has no session.
    c.send(modern_request(1, "tools/list"));
    expect_modern_result(c.response(1), true);
    c.send(legacy_request(2, "tools/list"));
    expect_error(c.response(2), -32602);

    c.send(initialize_request(3, "2025-06-18"));
    EXPECT_EQ(result_of(c.response(3)).at("protocolVersion"), "2025-06-18");
    c.send(initialized_notification());
    // A modern initialize is not a handshake: -32601, and the session keeps its version.
    c.send(modern_request(4, "initialize",
                          {{"protocolVersion", "2025-11-25"},
                           {"capabilities", json::object{}},
                           {"clientInfo", {{"name", "x"}, {"version", "1"}}}}));
    expect_error(c.response(4), -32601);
    c.send(modern_request(5, "logging/setLevel", {{"level", "emergency"}}));
    expect_error(c.response(5), -32601);

    // Lists still come in the session's own version (checked closed against the 2025-06-18 schema at the
    // end).
    c.send(legacy_request(7, "tools/list"));
    expect_legacy_result(c.response(7));
    c.send(legacy_request(8, "resources/templates/list"));
    expect_legacy_result(c.response(8));
    // The session still logs at its default threshold (modern setLevel changed nothing), in its own version.
    c.send(legacy_request(6, "tools/call", call_params("countdown", {{"n", 1}})));
    auto done = c.response(6);
    expect_legacy_result(done);
    auto const logs = std::count_if(c.messages().begin(), c.messages().end(), [](auto const& m) {
        return is_notification(m, "notifications/message");
    });
    EXPECT_EQ(logs, 1);
    EXPECT_EQ(c.finish(), 0);
    EXPECT_EQ(c.log().legacy_version(), "2025-06-18");
    c.expect_schema_valid();
}

// ERA-POLICY: a second initialize renegotiates; the client gets the answer it asks for.
TEST(StdioTranscript, SecondInitializeRenegotiates) {
    stdio_client c;
    c.send(initialize_request(1, "2025-11-25"));
    EXPECT_EQ(result_of(c.response(1)).at("protocolVersion"), "2025-11-25");
    c.send(initialized_notification());
    c.send(initialize_request(2, "2025-06-18"));
    EXPECT_EQ(result_of(c.response(2)).at("protocolVersion"), "2025-06-18");
    c.send(initialize_request(3, "1999-01-01"));
    EXPECT_EQ(result_of(c.response(3)).at("protocolVersion"), "2025-11-25");
    c.send(initialized_notification());
    c.send(legacy_request(4, "tools/list"));
    expect_legacy_result(c.response(4));
    EXPECT_EQ(c.finish(), 0);
    c.expect_schema_valid();
}

// DIGEST §3 / ERA-POLICY: supportedVersions is the modern list, identical to -32022's data.supported.
TEST(StdioTranscript, DiscoverListsModernVersionsLikeUnsupportedVersionError) {
    stdio_client c;
    c.send(modern_request(1, "server/discover"));
    auto const discover = result_of(c.response(1));
    EXPECT_EQ(discover.at("supportedVersions"), (json::array{"2026-07-28"}));
    auto meta = modern_meta();
    meta[key_protocol_version] = "2027-01-01";
    c.send(modern_request(2, "server/discover", {{"_meta", meta}}));
    auto const unsupported = c.response(2);
    expect_error(unsupported, -32022);
    auto const data = error_of(unsupported).at("data");
    EXPECT_EQ(data.at("supported"), discover.at("supportedVersions"));
    EXPECT_EQ(data.at("requested"), "2027-01-01");
    EXPECT_EQ(c.finish(), 0);
    c.expect_schema_valid();
}

// --legacy-only: modern `_meta` gives no modern service; initialize opens the only era there is.
TEST(StdioEraFlags, LegacyOnlyServesOnlyTheHandshakeEra) {
    stdio_client c({"--legacy-only"}, served_eras::legacy_only);
    c.send(modern_request(1, "server/discover"));
    auto const refused = c.response(1);
    expect_error(refused, -32602);
    EXPECT_FALSE(error_of(refused).at("data").as_object().contains("modernVersions")) << refused;
    c.send(legacy_request(2, "ping"));
    EXPECT_TRUE(result_of(c.response(2)).empty());
    c.send(initialize_request(3, "2026-07-28"));
    EXPECT_EQ(result_of(c.response(3)).at("protocolVersion"), "2025-11-25");
    c.send(initialized_notification());
    c.send(legacy_request(4, "tools/list"));
    expect_legacy_result(c.response(4));
    // Inside the session a `_meta` claim is just metadata: served as legacy, in legacy shape.
    c.send(modern_request(5, "tools/list"));
    expect_legacy_result(c.response(5));
    // server/discover does not exist in the legacy era.
    c.send(modern_request(6, "server/discover"));
    expect_error(c.response(6), -32601);
    EXPECT_EQ(c.finish(), 0);
    c.expect_schema_valid();
}

// --modern-only: initialize and _meta-less ping are refused naming the key; modern requests are served.
TEST(StdioEraFlags, ModernOnlyRefusesTheHandshake) {
    stdio_client c({"--modern-only"}, served_eras::modern_only);
    c.send(initialize_request(1, "2025-11-25"));
    auto const refused = c.response(1);
    expect_error(refused, -32602);
    auto const error = error_of(refused);
    EXPECT_NE(std::string(error.at("message").as_string()).find(key_protocol_version), std::string::npos);
    EXPECT_FALSE(error.at("data").as_object().contains("handshakeVersions")) << refused;
    c.send(legacy_request(2, "ping"));
    expect_error(c.response(2), -32602);
    c.send(modern_request(3, "server/discover"));
    auto const discover = c.response(3);
    expect_modern_result(discover, true);
    EXPECT_EQ(result_of(discover).at("supportedVersions"), (json::array{"2026-07-28"}));
    c.send(modern_request(4, "tools/call", call_params("add", {{"a", 2}, {"b", 3}})));
    auto const sum = result_of(c.response(4));
    // The double 5.0 goes out as `5`, as JavaScript writes it, and reads back as an integer.
    EXPECT_EQ(sum.at("structuredContent"), (json::object{{"result", 5}}));
    // Still no session: a _meta-less request is refused again.
    c.send(legacy_request(5, "tools/list"));
    expect_error(c.response(5), -32602);
    EXPECT_EQ(c.finish(), 0);
    c.expect_schema_valid();
}

} // namespace
