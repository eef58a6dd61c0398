// The `duet` client commands as scripts use them: output on stdout (text, or JSON with --json), progress and
// diagnostics on stderr, and the documented exit codes (apps/duet/client_cli.hpp): 0 ok, 1 tool error,
// 2 usage, 3 unreachable, 4 JSON-RPC error.
#include <duet/version.hpp>

#include "client/sync_client.hpp"
#include "http/servers.hpp"
#include "support/files.hpp"

#include <boost/json/parse.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>

namespace {

namespace json = boost::json;
using duet::test::take_file;

struct outcome {
    int code = -1;
    std::string out;
    std::string err;
};

// Runs `duet ARGS` through the shell with stdin from /dev/null.
outcome duet(std::string const& args) {
    static int counter = 0;
    auto const base =
        ::testing::TempDir() + "duet-cli-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    std::string command = DUET_BINARY;
    command += " " + args + " </dev/null >" + base + ".out 2>" + base + ".err";
    int const status = std::system(command.c_str());
    outcome o;
    o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    o.out = take_file(base + ".out");
    o.err = take_file(base + ".err");
    return o;
}

std::string stdio_server_args() {
    std::string s = " -- ";
    s.append(DUET_BINARY);
    s.append(" serve --stdio");
    return s;
}
std::string const stdio_server = stdio_server_args();

TEST(DuetCli, VersionIsDuetsOneVersion) {
    auto const o = duet("--version");
    EXPECT_EQ(o.code, 0) << o.err;
    EXPECT_EQ(o.out, "duet " + std::string(duet::version) + "\n");
}

TEST(DuetCli, CallPrintsTheToolTextAndExitsZero) {
    auto const o = duet("call echo text=hello" + stdio_server);
    EXPECT_EQ(o.code, 0) << o.err;
    EXPECT_EQ(o.out, "hello\n");
}

TEST(DuetCli, ValuesThatLookLikeJsonAreJson) {
    auto const o = duet("call add a=2 b=3.5 --json" + stdio_server);
    ASSERT_EQ(o.code, 0) << o.err;
    auto const r = json::parse(o.out).as_object();
    EXPECT_EQ(r.at("structuredContent").at("result"), 5.5);
}

// A double result prints as JavaScript writes it (duet/jsonrpc/json_text.hpp): 5, not Boost.JSON's 5E0, both
// in the tool's text and in the whole result under --json.
TEST(DuetCli, DoubleResultsPrintInTheirShortestForm) {
    auto const o = duet("call add a=2 b=3" + stdio_server);
    EXPECT_EQ(o.code, 0) << o.err;
    EXPECT_EQ(o.out, "{\"result\":5}\n");
    auto const fraction = duet("call add a=0.1 b=0.2" + stdio_server);
    EXPECT_EQ(fraction.out, "{\"result\":0.30000000000000004}\n");
    auto const j = duet("call add a=2 b=3 --json" + stdio_server);
    ASSERT_EQ(j.code, 0) << j.err;
    EXPECT_NE(j.out.find(R"("structuredContent":{"result":5})"), std::string::npos) << j.out;
    EXPECT_NE(j.out.find(R"("text":"{\"result\":5}")"), std::string::npos) << j.out;
}

TEST(DuetCli, ToolErrorExitsOneWithTheTextOnStderr) {
    auto const o = duet("call add a=x b=2" + stdio_server);
    EXPECT_EQ(o.code, 1);
    EXPECT_TRUE(o.out.empty());
    EXPECT_NE(o.err.find("Invalid arguments"), std::string::npos) << o.err;
}

TEST(DuetCli, ProgressGoesToStderrAndQuietSilencesIt) {
    auto const o = duet("call countdown n=2" + stdio_server);
    EXPECT_EQ(o.code, 0) << o.err;
    EXPECT_NE(o.err.find("progress 1/2"), std::string::npos) << o.err;
    EXPECT_EQ(o.out, "liftoff after 2 steps\n");
    auto const q = duet("call -q countdown n=2" + stdio_server);
    EXPECT_EQ(q.err.find("progress"), std::string::npos) << q.err;
}

TEST(DuetCli, ElicitationIsDeclinedWithoutATerminalOrWithNoInput) {
    for (std::string const era : {"legacy", "modern"}) {
        auto const o = duet("call ask_name --era " + era + stdio_server);
        EXPECT_EQ(o.code, 0) << era << o.err;
        EXPECT_EQ(o.out, "The user declined to answer\n") << era;
        EXPECT_NE(o.err.find("What is your name? (declined: stdin is not a terminal)"), std::string::npos)
            << era << o.err;
        auto const n = duet("call --no-input ask_name --era " + era + stdio_server);
        EXPECT_EQ(n.out, "The user declined to answer\n") << era;
        EXPECT_NE(n.err.find("(declined: --no-input)"), std::string::npos) << era << n.err;
    }
}

TEST(DuetCli, JsonListsAreJsonArrays) {
    auto const o = duet("tools --json --era legacy" + stdio_server);
    ASSERT_EQ(o.code, 0) << o.err;
    EXPECT_EQ(json::parse(o.out).as_array().size(), 7u); // the demo's seven tools
}

TEST(DuetCli, DiscoverNamesTheEraEachModeReaches) {
    for (auto const* era : {"legacy", "modern", "auto"}) {
        auto const o = duet(std::string("discover --json --era ") + era + stdio_server);
        ASSERT_EQ(o.code, 0) << era << ": " << o.err;
        auto const r = json::parse(o.out).as_object();
        EXPECT_EQ(r.at("era"), std::string_view(era) == "legacy" ? "legacy" : "modern") << era;
        EXPECT_EQ(r.at("serverInfo").at("name"), "duet-demo");
    }
}

TEST(DuetCli, ServerErrorExitsFourAndShowsTheCode) {
    auto const o = duet("call no_such_tool" + stdio_server);
    EXPECT_EQ(o.code, 4);
    EXPECT_NE(o.err.find("-32602"), std::string::npos) << o.err;
}

TEST(DuetCli, UsageErrorsExitTwoBeforeAnythingRuns) {
    auto const no_server = duet("tools");
    EXPECT_EQ(no_server.code, 2);
    EXPECT_NE(no_server.err.find("which server"), std::string::npos) << no_server.err;

    auto const bad_era = duet("tools --era newest" + stdio_server);
    EXPECT_EQ(bad_era.code, 2);

    auto const modern_on_legacy =
        duet("tools --era legacy --protocol-version 2026-07-28 -- /nonexistent/server");
    EXPECT_EQ(modern_on_legacy.code, 2) << modern_on_legacy.err;
    EXPECT_NE(modern_on_legacy.err.find("2026-07-28"), std::string::npos);

    auto const bad_argument = duet("call echo text" + stdio_server);
    EXPECT_EQ(bad_argument.code, 2);
    EXPECT_NE(bad_argument.err.find("key=value"), std::string::npos) << bad_argument.err;
}

TEST(DuetCli, UnreachableServerExitsThree) {
    auto const refused = duet("tools http://127.0.0.1:9/mcp");
    EXPECT_EQ(refused.code, 3);
    auto const missing = duet("tools -- /nonexistent/duet-server");
    EXPECT_EQ(missing.code, 3);
    EXPECT_NE(missing.err.find("/nonexistent/duet-server"), std::string::npos) << missing.err;
}

TEST(DuetCli, ReadsAndPromptsOverHttp) {
    duet::test::http::inproc_server http;
    auto const url = "http://" + http.ep().authority() + http.ep().path;
    auto const read = duet("read duet://demo/readme " + url);
    EXPECT_EQ(read.code, 0) << read.err;
    EXPECT_NE(read.out.find("# Duet demo"), std::string::npos);
    auto const prompt = duet("prompt --era legacy review language=go " + url);
    EXPECT_EQ(prompt.code, 0) << prompt.err;
    EXPECT_NE(prompt.out.find("user: Please review this go code"), std::string::npos) << prompt.out;
}

} // namespace
