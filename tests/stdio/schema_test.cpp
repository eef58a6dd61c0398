// Every message the binary writes validates against the official JSON schema of its era and version
// (../shared/spec/<version>/schema.json): legacy results closed (no field their version does not define),
// modern results open. One rich transcript per legacy version with a schema, each with modern traffic
// interleaved. Skipped when ../shared, node or the npm packages are missing.
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "stdio/stdio_client.hpp"
#include "support/schema_probes.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

namespace json = boost::json;
using namespace duet::test;

class StdioSchema : public testing::TestWithParam<char const*> {};

TEST_P(StdioSchema, RichTranscriptValidatesAgainstTheOfficialSchemas) {
    auto& schemas = schema_validator::shared();
    DUET_SKIP_WITHOUT_SCHEMAS(schemas);
    std::string const version = GetParam();
    stdio_client c;
    int id = 100;

    // Modern before any session, then the session.
    c.send(modern_request("listen", "subscriptions/listen",
                          {{"notifications",
                            {{"toolsListChanged", true},
                             {"promptsListChanged", true},
                             {"resourcesListChanged", true},
                             {"resourceSubscriptions", json::array{"duet://demo/readme"}}}}}));
    c.send(modern_request("discover", "server/discover"));
    c.send(initialize_request(1, version, {{"elicitation", json::object{}}}));
    EXPECT_EQ(result_of(c.response(1)).at("protocolVersion"), json::value(version));
    c.send(initialized_notification());

    send_schema_probes([&](json::value const& m) { c.send(m); }, id);
    c.send(legacy_request(id++, "resources/unsubscribe", {{"uri", "duet://demo/readme"}}));

    // Progress and logs in both eras.
    json::object legacy_call = call_params("countdown", {{"n", 2}});
    legacy_call["_meta"] = json::object{{"progressToken", "legacy-progress"}};
    c.send(legacy_request("legacy-countdown", "tools/call", legacy_call));
    json::object modern_call = call_params("countdown", {{"n", 2}});
    modern_call["_meta"] = modern_meta({}, {{"progressToken", 7}, {key_log_level, "debug"}});
    c.send(modern_request("modern-countdown", "tools/call", modern_call));
    c.response("legacy-countdown");
    c.response("modern-countdown");

    // A server-to-client request and its answer.
    c.send(legacy_request("ask", "tools/call", call_params("ask_name")));
    auto const asked =
        c.wait_for([](json::value const& m) { return is_server_request(m, "elicitation/create"); });
    ASSERT_TRUE(asked);
    c.send(client_response(c.messages()[*asked].at("id"),
                           {{"action", "accept"}, {"content", {{"name", "Lin"}}}}));
    EXPECT_EQ(first_text(result_of(c.response("ask"))), "Hello, Lin!");

    for (int i = 100; i < id; ++i)
        c.response(i);
    EXPECT_EQ(c.finish(), 0); // ends the listen with its result
    EXPECT_EQ(c.log().legacy_version(), version);
    EXPECT_GT(c.log().expect_schema_valid(schemas), 50u); // how many depends on interleaving
}

INSTANTIATE_TEST_SUITE_P(Versions, StdioSchema, testing::Values("2025-11-25", "2025-06-18"),
                         [](auto const& p) {
                             return std::string(p.param) == "2025-11-25" ? "V20251125" : "V20250618";
                         });

} // namespace
