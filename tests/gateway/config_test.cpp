// `duet gateway --config FILE` and `--check-config FILE`, the real binary with config files the tests write:
// the mcpServers shape MCP hosts use (a Claude-Desktop file with nothing else works), Duet's own keys under
// "gateway", flags over the file, secrets by reference (env:VAR, file:PATH from the file's directory)
// reaching the upstream, and every error naming its key path.
#include "gateway/announcing_upstream.hpp"
#include "gateway/gateway_process.hpp"
#include "http/mcp_http.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "support/test_certs.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace gateway_config_tests {

namespace json = boost::json;
using namespace duet::test;
using namespace duet::test::http;
using namespace duet::test::gateway;

// A config file (or any text) in a temporary directory of its own.
class config_dir {
public:
    // Writes `text` to NAME in the directory; its path.
    std::string write(std::string const& name, std::string const& text) const {
        auto const path = (dir_.path() / name).string();
        std::ofstream(path) << text;
        return path;
    }
    std::string write_json(std::string const& name, json::value const& config) const {
        return write(name, json::serialize(config));
    }
    [[nodiscard]] std::string path() const { return dir_.path().string(); }

private:
    temp_dir dir_;
};

struct outcome {
    int code = -1;
    std::string out; ///< the first stdout line
    std::string err;
};

// `duet gateway ARGS...`, to its exit (for what exits before serving).
outcome run_gateway(std::vector<std::string> args) {
    std::vector<std::string> argv{DUET_BINARY, "gateway"};
    argv.insert(argv.end(), args.begin(), args.end());
    child_process child(argv, child_process::input::null);
    outcome o;
    o.out = first_stdout_line(child);
    o.code = child.wait_exit(wait_limit);
    o.err = child.stderr_text();
    return o;
}

outcome check_config(std::string const& file) {
    return run_gateway({"--check-config", file});
}

// The demo server on stdio as a config file's upstream.
json::object demo_server(std::string const& era_flag = "--legacy-only") {
    return {{"command", DUET_BINARY}, {"args", json::array{"serve", "--stdio", era_flag}}};
}

// What the echo tool at `ep` answers through the gateway.
std::string echo(endpoint const& ep, std::string const& text) {
    mcp_http c(ep);
    auto const r =
        only_message(c.post(modern_request(1, "tools/call", call_params("echo", {{"text", text}}))));
    return first_text(result_of(r));
}

// The file's one error (of `--check-config`): exit 2, `says` on stderr after "FILE: ".
void expect_config_error(json::value const& config, std::string const& says) {
    config_dir dir;
    auto const file = dir.write_json("gateway.json", config);
    auto const o = check_config(file);
    EXPECT_EQ(o.code, 2) << o.err;
    EXPECT_NE(o.err.find(file + ": " + says), std::string::npos) << "want: " << says << "\ngot: " << o.err;
    EXPECT_TRUE(o.out.empty()) << o.out;
}

TEST(GatewayConfig, CheckConfigSaysOkNamingEveryUpstream) {
    config_dir dir;
    auto const file =
        dir.write_json("gateway.json", json::object{{"mcpServers",
                                                     {{"files", demo_server()},
                                                      {"search",
                                                       {{"url", "https://search.example/mcp"},
                                                        {"headers", {{"X-Team", "docs"}}},
                                                        {"tools", {{"deny", json::array{"delete_*"}}}}}}}},
                                                    {"gateway", {{"port", 9000}, {"poolSize", 2}}}});
    auto const o = check_config(file);
    EXPECT_EQ(o.code, 0) << o.err;
    EXPECT_EQ(o.out, file + ": ok (2 upstreams: files, search)") << o.err;
}

TEST(GatewayConfig, AWrongTypeIsAnErrorNamingItsPath) {
    expect_config_error(
        json::object{{"mcpServers", {{"files", {{"command", "npx"}, {"args", json::array{"-y", "x", 3}}}}}}},
        "mcpServers.files.args[2]: expected a string");
    expect_config_error(
        json::object{{"mcpServers", {{"files", demo_server()}}}, {"gateway", {{"merge", "yes"}}}},
        "gateway.merge: expected true or false");
}

TEST(GatewayConfig, UnknownKeyIsAnErrorNamingItsPath) {
    expect_config_error(
        json::object{{"mcpServers", {{"files", {{"comand", "npx"}, {"command", "npx"}}}}}},
        "mcpServers.files.comand: unknown key (expected one of: type, command, args, env, url");
    expect_config_error(json::object{{"mcpServers", {{"files", demo_server()}}}, {"gateway", {{"prot", 1}}}},
                        "gateway.prot: unknown key (expected one of: host, port, path,");
    expect_config_error(json::object{{"mcpServers", {{"files", demo_server()}}}, {"gatway", json::object{}}},
                        "gatway: unknown key (expected one of: mcpServers, gateway");
}

TEST(GatewayConfig, AMissingKeyIsAnErrorNamingItsPath) {
    expect_config_error(json::object{{"gateway", {{"port", 1}}}}, "mcpServers: missing");
    expect_config_error(json::object{{"mcpServers", {{"files", {{"args", json::array{"x"}}}}}}},
                        "mcpServers.files: missing command (a stdio upstream) or url (an HTTP one)");
    expect_config_error(json::object{{"mcpServers", {{"search", demo_server()}}},
                                     {"gateway", {{"rateLimits", {{"perCaller", {{"burst", 5}}}}}}}},
                        "gateway.rateLimits.perCaller: missing perSecond");
}

TEST(GatewayConfig, CommandAndUrlTogetherAreAnError) {
    expect_config_error(
        json::object{{"mcpServers", {{"both", {{"command", "npx"}, {"url", "http://127.0.0.1:1/mcp"}}}}}},
        "mcpServers.both: both command and url");
    expect_config_error(
        json::object{{"mcpServers", {{"web", {{"url", "http://127.0.0.1:1/mcp"}, {"env", {{"A", "b"}}}}}}}},
        "mcpServers.web.env: not for an HTTP upstream");
}

TEST(GatewayConfig, ABadUrlIsAnErrorNamingItsPath) {
    expect_config_error(json::object{{"mcpServers", {{"web", {{"url", "ftp://example/mcp"}}}}}},
                        "mcpServers.web.url: ");
}

TEST(GatewayConfig, ABadUpstreamNameIsAnError) {
    expect_config_error(
        json::object{{"mcpServers", {{"my server", demo_server()}}}},
        "mcpServers[\"my server\"]: not an upstream name (letters, digits, '-', '_' and '.' only)");
}

TEST(GatewayConfig, ABadGlobOrRenameIsAnErrorNamingItsPath) {
    expect_config_error(
        json::object{{"mcpServers",
                      {{"files", {{"command", "npx"}, {"tools", {{"allow", json::array{"read_*", ""}}}}}}}}},
        "mcpServers.files.tools.allow[1]: \"\" is not a glob");
    expect_config_error(
        json::object{{"mcpServers",
                      {{"files",
                        {{"command", "npx"},
                         {"prompts", {{"deny", json::array{"a*"}}, {"rename", {{"ab", "b"}}}}}}}}}},
        "mcpServers.files.prompts: \"ab\" is renamed but hidden by allow/deny");
    expect_config_error(
        json::object{
            {"mcpServers", {{"files", {{"command", "npx"}, {"resources", {{"rename", {{"a", "b"}}}}}}}}}},
        "mcpServers.files.resources.rename: unknown key (expected one of: allow, deny)");
}

TEST(GatewayConfig, TheOldSseTransportIsRefusedInWords) {
    expect_config_error(
        json::object{{"mcpServers", {{"old", {{"type", "sse"}, {"url", "http://127.0.0.1:1/sse"}}}}}},
        "mcpServers.old.type: \"sse\" (the old HTTP+SSE transport) is not supported");
}

TEST(GatewayConfig, AnUnsetEnvReferenceIsAnErrorNamingItsPath) {
    ::unsetenv("DUET_TEST_CONFIG_UNSET");
    expect_config_error(
        json::object{
            {"mcpServers",
             {{"files", {{"command", "npx"}, {"env", {{"API_TOKEN", "env:DUET_TEST_CONFIG_UNSET"}}}}}}}},
        "mcpServers.files.env.API_TOKEN: the environment has no DUET_TEST_CONFIG_UNSET");
    expect_config_error(json::object{{"mcpServers", {{"files", demo_server()}}},
                                     {"gateway", {{"bearerToken", "env:DUET_TEST_CONFIG_UNSET"}}}},
                        "gateway.bearerToken: the environment has no DUET_TEST_CONFIG_UNSET");
}

// A relative file: is the config file's directory's, whatever the gateway's working directory.
TEST(GatewayConfig, AnUnreadableFileReferenceIsAnErrorNamingItsPathFromTheFilesDirectory) {
    config_dir dir;
    auto const file = dir.write_json(
        "gateway.json",
        json::object{
            {"mcpServers",
             {{"search",
               {{"url", "http://127.0.0.1:1/mcp"}, {"headers", {{"Authorization", "file:gone.token"}}}}}}}});
    auto const o = check_config(file);
    EXPECT_EQ(o.code, 2);
    EXPECT_NE(o.err.find(file + ": mcpServers.search.headers.Authorization: cannot read " + dir.path() +
                         "/gone.token"),
              std::string::npos)
        << o.err;
}

TEST(GatewayConfig, AJsonSyntaxErrorNamesLineAndColumn) {
    config_dir dir;
    auto const file =
        dir.write("gateway.json", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",, }\n}\n");
    auto const o = check_config(file);
    EXPECT_EQ(o.code, 2);
    EXPECT_NE(o.err.find(file + ": line 3, column 26: not JSON"), std::string::npos) << o.err;
}

TEST(GatewayConfig, AnOutOfRangeNumberIsAnErrorNamingItsPath) {
    expect_config_error(
        json::object{{"mcpServers", {{"files", demo_server()}}}, {"gateway", {{"poolSize", 5000}}}},
        "gateway.poolSize: 5000 is out of range (1 to 1024)");
    expect_config_error(
        json::object{{"mcpServers", {{"files", demo_server()}}}, {"gateway", {{"port", 70000}}}},
        "gateway.port: 70000 is out of range (0 to 65535)");
    expect_config_error(json::object{{"mcpServers", {{"files", demo_server()}}},
                                     {"gateway", {{"upstreamTimeoutSeconds", 0}}}},
                        "gateway.upstreamTimeoutSeconds: 0 is out of range (0.05 to 86400)");
    expect_config_error(json::object{{"mcpServers", {{"files", demo_server()}}},
                                     {"gateway", {{"maxUpstreamMessage", "512B"}}}},
                        "gateway.maxUpstreamMessage: 512 is out of range (1024 to 4294967296)");
}

TEST(GatewayConfig, ABadLogFormatOrLevelOrMetricsPortIsAnErrorNamingItsPath) {
    expect_config_error(
        json::object{{"mcpServers", {{"files", demo_server()}}}, {"gateway", {{"logFormat", "yaml"}}}},
        "gateway.logFormat: \"text\" or \"json\"");
    expect_config_error(
        json::object{{"mcpServers", {{"files", demo_server()}}}, {"gateway", {{"logLevel", "loud"}}}},
        "gateway.logLevel: one of \"debug\", \"info\", \"warning\", \"error\"");
    expect_config_error(
        json::object{{"mcpServers", {{"files", demo_server()}}}, {"gateway", {{"metricsPort", 70000}}}},
        "gateway.metricsPort: 70000 is out of range (0 to 65535)");
}

TEST(GatewayConfig, EveryErrorIsSaidNotOnlyTheFirst) {
    config_dir dir;
    auto const file = dir.write_json("gateway.json", json::object{{"mcpServers", {{"a", {{"comand", "x"}}}}},
                                                                  {"gateway", {{"threads", 0}}}});
    auto const o = check_config(file);
    EXPECT_EQ(o.code, 2);
    EXPECT_NE(o.err.find(file + ": mcpServers.a.comand: unknown key"), std::string::npos) << o.err;
    EXPECT_NE(o.err.find(file + ": gateway.threads: 0 is out of range"), std::string::npos) << o.err;
}

TEST(GatewayConfig, ConfigWithErrorsExitsTwoSayingSoPrefixed) {
    config_dir dir;
    auto const file =
        dir.write_json("gateway.json", json::object{{"mcpServers", {{"a", {{"comand", "x"}}}}}});
    auto const o = run_gateway({"--port", "0", "--config", file});
    EXPECT_EQ(o.code, 2);
    EXPECT_NE(o.err.find("duet gateway: " + file + ": mcpServers.a.comand: unknown key"), std::string::npos)
        << o.err;
    EXPECT_TRUE(o.out.empty()) << o.out;
}

TEST(GatewayConfig, ADisabledUpstreamIsSkippedUnread) {
    ::unsetenv("DUET_TEST_CONFIG_UNSET");
    config_dir dir;
    auto const file =
        dir.write_json("gateway.json", json::object{{"mcpServers",
                                                     {{"on", demo_server()},
                                                      {"off",
                                                       {{"command", "/nonexistent/server"},
                                                        {"disabled", true},
                                                        {"env", {{"T", "env:DUET_TEST_CONFIG_UNSET"}}}}}}}});
    auto const o = check_config(file);
    EXPECT_EQ(o.code, 0) << o.err;
    EXPECT_EQ(o.out, file + ": ok (1 upstream: on; disabled: off)");
    // Served: only the one enabled (the disabled one's command does not exist: reaching it would exit 3).
    gateway_process gw(std::vector<std::string>{"--config", file});
    ASSERT_TRUE(gw.url().ends_with("/mcp/on")) << gw.url() << gw.stderr_text();
    EXPECT_EQ(echo(gw.ep(), "on"), "on");
}

TEST(GatewayConfig, AClaudeDesktopFileWithOnlyMcpServersIsServed) {
    config_dir dir;
    auto const file = dir.write("claude_desktop_config.json",
                                "{\n  \"mcpServers\": {\n    \"demo\": {\n      \"command\": \"" DUET_BINARY
                                "\",\n      \"args\": [\"serve\", \"--stdio\"]\n    }\n  }\n}\n");
    gateway_process gw(std::vector<std::string>{"--config", file});
    ASSERT_TRUE(gw.url().ends_with("/mcp/demo")) << gw.url() << gw.stderr_text();
    EXPECT_EQ(echo(gw.ep(), "hello"), "hello");
}

// gateway_process passes --port 0: the file's port (1, which this test cannot bind) is overridden; its path
// is kept unless --path is given.
TEST(GatewayConfig, AGatewayStartedWithConfigServesItsUpstreamAndFlagsWinOverTheFile) {
    config_dir dir;
    auto const file = dir.write_json(
        "gateway.json", json::object{{"mcpServers", {{"demo", demo_server("--modern-only")}}},
                                     {"gateway", {{"port", 1}, {"path", "/tools"}, {"era", "modern"}}}});
    {
        gateway_process gw(std::vector<std::string>{"--config", file});
        ASSERT_TRUE(gw.url().ends_with("/tools/demo")) << gw.url() << gw.stderr_text();
        EXPECT_EQ(echo(gw.ep(), "from the file"), "from the file");
        EXPECT_TRUE(gw.wait_for_log("(modern 2026-07-28)")) << gw.stderr_text();
    }
    gateway_process gw(std::vector<std::string>{"--config", file, "--path", "/other"});
    ASSERT_TRUE(gw.url().ends_with("/other/demo")) << gw.url() << gw.stderr_text();
    EXPECT_EQ(echo(gw.ep(), "flag"), "flag");
}

TEST(GatewayConfig, AnUpstreamFlagReplacesTheFilesUpstreamOfThatNameAndAnotherIsAdded) {
    config_dir dir;
    // The file's "demo" cannot be reached (exit 3): served, the flag's replaced it.
    auto const file = dir.write_json(
        "gateway.json", json::object{{"mcpServers", {{"demo", {{"command", "/nonexistent/server"}}}}}});
    gateway_process gw(std::vector<std::string>{"--config", file, "--upstream",
                                                "demo=" + demo_upstream("--legacy-only"), "--upstream",
                                                "more=" + demo_upstream("--modern-only")});
    ASSERT_TRUE(gw.url().ends_with("/mcp/demo")) << gw.url() << gw.stderr_text();
    EXPECT_EQ(echo(gw.ep(), "replaced"), "replaced");
    auto more = gw.ep();
    more.path = "/mcp/more";
    EXPECT_EQ(echo(more, "added"), "added");
}

TEST(GatewayConfig, WithNeitherFlagNorFileGivingAnUpstreamItSaysSo) {
    auto const o = run_gateway({"--port", "0"});
    EXPECT_EQ(o.code, 2);
    EXPECT_NE(o.err.find("duet gateway: no upstream: give --upstream"), std::string::npos) << o.err;
    config_dir dir;
    auto const file = dir.write_json("gateway.json", json::object{{"mcpServers", json::object{}}});
    auto const empty = run_gateway({"--port", "0", "--config", file});
    EXPECT_EQ(empty.code, 2);
    EXPECT_NE(empty.err.find("no upstream"), std::string::npos) << empty.err;
}

// A stdio upstream's env entries, literal, env: and file: (relative to the config file), reach its child, and
// nothing else of the gateway's environment does.
TEST(GatewayConfig, SecretsByEnvAndFileReachAStdioUpstreamsChild) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    config_dir dir;
    dir.write("secret.txt", "from-a-file\n");
    ::setenv("DUET_TEST_CONFIG_SECRET", "from-the-environment", 1);
    auto const file = dir.write_json(
        "gateway.json",
        json::object{{"mcpServers",
                      {{"env",
                        {{"command", pinned_node()},
                         {"args", json::array{DUET_SOURCE_DIR "/tests/gateway/misbehaving_upstream.mjs"}},
                         {"era", "legacy"},
                         {"env",
                          {{"FROM_ENV", "env:DUET_TEST_CONFIG_SECRET"},
                           {"FROM_FILE", "file:secret.txt"},
                           {"LITERAL", "as-written"}}}}}}}});
    gateway_process gw(std::vector<std::string>{"--config", file});
    ::unsetenv("DUET_TEST_CONFIG_SECRET");
    mcp_http c(gw.ep());
    auto const r = only_message(c.post(modern_request(1, "tools/call", call_params("environment", {}))));
    auto const env = json::parse(first_text(result_of(r))).as_object();
    EXPECT_EQ(env.at("FROM_ENV"), "from-the-environment") << env;
    EXPECT_EQ(env.at("FROM_FILE"), "from-a-file") << env;
    EXPECT_EQ(env.at("LITERAL"), "as-written") << env;
    EXPECT_FALSE(env.contains("DUET_TEST_CONFIG_SECRET")) << env;
}

// A header from a file reaches an HTTP upstream that wants it (protected_upstream.mjs answers `whoami` with
// the Authorization it received), and its value is never logged.
TEST(GatewayConfig, AHeaderSecretReachesAnHttpUpstream) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    child_process up({"/usr/bin/env", "STATIC_TOKEN=from-config", pinned_node(),
                      DUET_SOURCE_DIR "/tests/gateway/protected_upstream.mjs"},
                     child_process::input::null);
    auto const url = first_stdout_line(up);
    ASSERT_FALSE(url.empty()) << up.stderr_text();
    config_dir dir;
    dir.write("token", "Bearer from-config\n");
    auto const file = dir.write_json(
        "gateway.json",
        json::object{
            {"mcpServers", {{"guarded", {{"url", url}, {"headers", {{"Authorization", "file:token"}}}}}}}});
    gateway_process gw(std::vector<std::string>{"--config", file});
    mcp_http c(gw.ep());
    auto const r = only_message(c.post(modern_request(1, "tools/call", call_params("whoami", {}))));
    EXPECT_EQ(first_text(result_of(r)), "Bearer from-config") << r;
    EXPECT_EQ(gw.stderr_text().find("from-config"), std::string::npos) << "the value is never logged";
}

// The file's bearerToken guards the gateway's own door.
TEST(GatewayConfig, TheFilesBearerTokenGuardsTheGateway) {
    config_dir dir;
    dir.write("door.token", "open-sesame\n");
    auto const file =
        dir.write_json("gateway.json", json::object{{"mcpServers", {{"demo", demo_server()}}},
                                                    {"gateway", {{"bearerToken", "file:door.token"}}}});
    gateway_process gw(std::vector<std::string>{"--config", file});
    mcp_http c(gw.ep());
    EXPECT_EQ(c.post(modern_request(1, "tools/list")).status, 401u);
    auto const r = only_message(c.post(modern_request(2, "tools/call", call_params("echo", {{"text", "in"}})),
                                       {{"Authorization", "Bearer open-sesame"}}));
    EXPECT_EQ(first_text(result_of(r)), "in") << r;
}

TEST(GatewayConfig, BadRateLimitAndSeparatorFlagsAreUsageErrors) {
    for (std::vector<std::string> const& flags : {std::vector<std::string>{"--rate-limit", "0"},
                                                  {"--rate-limit", "5/0.5"},
                                                  {"--rate-limit", "x"},
                                                  {"--tool-rate-limit", "5"},
                                                  {"--tool-rate-limit", "=5"},
                                                  {"--name-separator", "::"},
                                                  {"--name-separator", "_____"}}) {
        std::vector<std::string> args{"--port", "0", "--upstream", "stdio:/nonexistent/server"};
        args.insert(args.end(), flags.begin(), flags.end());
        auto const o = run_gateway(args);
        EXPECT_NE(o.code, 0) << flags[0] << " " << flags[1];
        EXPECT_NE(o.code, 3) << flags[0] << " " << flags[1] << ": refused before reaching the upstream";
    }
}

} // namespace gateway_config_tests
