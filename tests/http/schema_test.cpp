// Every body Duet sends over Streamable HTTP validates against the official JSON schema of its era and
// version
// (../shared/spec/<version>/schema.json): JSON responses, SSE events on POST streams, listen streams and the
// standalone GET stream, and the error bodies of refusals; legacy results closed (no field their version does
// not define), modern ones open, as tests/stdio does. One rich conversation per legacy version with a schema,
// modern traffic interleaved. Skipped when ../shared, node or the npm packages are missing.
#include "http/mcp_http.hpp"
#include "http/servers.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "support/schema_probes.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

namespace json = boost::json;
using namespace duet::test;
using namespace duet::test::http;

class HttpSchema : public testing::TestWithParam<char const*> {};

TEST_P(HttpSchema, EveryBodyValidatesAgainstItsEraSchema) {
    auto& schemas = schema_validator::shared();
    DUET_SKIP_WITHOUT_SCHEMAS(schemas);
    std::string const version = GetParam();
    inproc_server s;
    mcp_http c(s.ep());
    int id = 100;

    // Modern before any session, then the session and its standalone stream.
    auto listen = c.open(modern_request("listen", "subscriptions/listen",
                                        {{"notifications",
                                          {{"toolsListChanged", true},
                                           {"promptsListChanged", true},
                                           {"resourcesListChanged", true},
                                           {"resourceSubscriptions", json::array{"duet://demo/readme"}}}}}));
    ASSERT_TRUE(is_notification(c.next(*listen), "notifications/subscriptions/acknowledged"));
    c.post(modern_request("discover", "server/discover"));
    auto const init = c.initialize(version, {{"elicitation", json::object{}}});
    EXPECT_EQ(result_of(init.json()).at("protocolVersion"), json::value(version));
    auto get = c.open_spec([&] {
        request_spec spec;
        spec.method = "GET";
        spec.headers = c.session_headers();
        spec.headers.push_back({"Accept", "text/event-stream"});
        return spec;
    }());
    ASSERT_EQ(get->status(), 200u);

    send_schema_probes([&](json::value const& m) { c.post(m); }, id);

    // Refusals: their bodies are JSON-RPC errors of the era too.
    c.post(modern_request(id++, "tools/list"), {{"Mcp-Method", "prompts/list"}});
    auto unsupported = modern_request(id++, "tools/list");
    unsupported["params"].as_object()["_meta"].as_object()[key_protocol_version] = "2027-01-01";
    c.post(unsupported);
    c.post(legacy_request(id++, "tools/list"), {{"MCP-Protocol-Version", "banana"}});
    c.post(legacy_request(id++, "tools/list"), {{"Mcp-Session-Id", "00000000000000000000000000000000"}});

    // Progress and logs on POST streams, in both eras.
    json::object legacy_call = call_params("countdown", {{"n", 2}});
    legacy_call["_meta"] = json::object{{"progressToken", "legacy-progress"}};
    c.post(legacy_request("legacy-countdown", "tools/call", legacy_call));
    json::object modern_call = call_params("countdown", {{"n", 2}});
    modern_call["_meta"] = modern_meta({}, {{"progressToken", 7}, {key_log_level, "debug"}});
    c.post(modern_request("modern-countdown", "tools/call", modern_call));

    // A server-to-client request on a POST stream, and its answer.
    auto ask = c.open(legacy_request("ask", "tools/call", call_params("ask_name")));
    auto const asked = c.next(*ask);
    ASSERT_TRUE(is_server_request(asked, "elicitation/create")) << asked;
    c.post(client_response(asked.at("id"), {{"action", "accept"}, {"content", {{"name", "Lin"}}}}));
    EXPECT_EQ(first_text(result_of(c.rest(*ask).back())), "Hello, Lin!");

    // Runtime changes: untagged on the session's GET stream, tagged on the listen.
    add_runtime_tool(s.srv(), "late_tool");
    s.srv().notify_resource_updated("duet://demo/readme");
    EXPECT_TRUE(is_notification(c.next(*get), "notifications/tools/list_changed"));
    EXPECT_TRUE(is_notification(c.next(*get), "notifications/resources/updated"));
    EXPECT_TRUE(is_notification(c.next(*listen), "notifications/tools/list_changed"));
    EXPECT_TRUE(is_notification(c.next(*listen), "notifications/resources/updated"));

    s.stop(); // ends the listen with its result and the GET stream
    c.rest(*listen);
    c.rest(*get);
    EXPECT_EQ(c.log().legacy_version(), version);
    EXPECT_GT(c.log().expect_schema_valid(schemas), 60u);
}

INSTANTIATE_TEST_SUITE_P(Versions, HttpSchema, testing::Values("2025-11-25", "2025-06-18"),
                         [](auto const& p) {
                             return std::string(p.param) == "2025-11-25" ? "V20251125" : "V20250618";
                         });

} // namespace
