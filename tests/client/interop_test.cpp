// Interop with real peers on the official TypeScript SDKs, pinned in tests/interop (our own small programs
// under tests/interop/peers):
//
//  - a @modelcontextprotocol/server 2.4.0 server over HTTP answers both eras: every connect mode works, and
//    auto reaches modern;
//  - a @modelcontextprotocol/sdk 1.32.2 server over stdio speaks legacy only: legacy works and auto falls
//  back
//    to initialize.
//
// Skipped where node or the npm packages are not installed (scripts/bootstrap installs them).
#include "client/sync_client.hpp"
#include "client/url_process.hpp"
#include "http/servers.hpp"
#include "support/files.hpp"

#include <boost/json/parse.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace {

using namespace duet;
using namespace duet::test::client_side;
namespace json = boost::json;

std::string peer(std::string const& name) {
    return std::string(DUET_SOURCE_DIR) + "/tests/interop/peers/" + name;
}

bool sdks_installed() {
    auto const modules =
        std::filesystem::path(DUET_SOURCE_DIR) / "tests/interop/node_modules/@modelcontextprotocol";
    return std::filesystem::exists(modules / "server") && std::filesystem::exists(modules / "sdk") &&
           std::filesystem::exists(modules / "node");
}

#define DUET_SKIP_WITHOUT_PEERS(node)                                                                        \
    DUET_SKIP_WITHOUT_NODE(node);                                                                            \
    if (!sdks_installed())                                                                                   \
    GTEST_SKIP() << "the npm SDKs are not installed (scripts/bootstrap)"

client::client_options interop_options(client::connect_mode m) {
    client::client_options o;
    o.mode = m;
    o.verdicts = nullptr;
    return o;
}

std::string first_block_text(json::object const& result) {
    auto const& content = result.at("content").as_array();
    return content.empty() ? std::string() : std::string(content.at(0).as_object().at("text").as_string());
}

void exercise(sync_client& c, std::string const& sdk) {
    auto tools = c.run(c->async_list_tools());
    ASSERT_TRUE(tools) << tools.error().to_string();
    EXPECT_FALSE(tools->empty());
    auto echo = c.run(c->async_call_tool("echo", json::object{{"text", "across SDKs"}}));
    ASSERT_TRUE(echo) << echo.error().to_string();
    EXPECT_EQ(first_block_text(*echo), "across SDKs");
    auto read = c.run(c->async_read_resource("interop://greeting"));
    ASSERT_TRUE(read) << read.error().to_string();
    EXPECT_EQ(read->at("contents").as_array().at(0).as_object().at("text"),
              json::value("hello from the " + sdk + " SDK"));
    auto prompt = c.run(c->async_get_prompt("hello", json::object{{"who", "Duet"}}));
    ASSERT_TRUE(prompt) << prompt.error().to_string();
    EXPECT_EQ(prompt->at("messages").as_array().at(0).at("content").at("text"), "Hello, Duet!");
    auto missing = c.run(c->async_call_tool("no_such_tool", json::object{}));
    EXPECT_TRUE(!missing || missing->contains("isError")) << "an unknown tool is an error either way";
}

struct v2_row {
    std::string_view name;
    client::connect_mode mode;
    protocol::era expected;
};

void PrintTo(v2_row const& r, std::ostream* os) {
    *os << r.name;
}

class TypescriptV2HttpServer : public ::testing::TestWithParam<v2_row> {};

TEST_P(TypescriptV2HttpServer, ServesEveryCall) {
    auto const node = node_binary();
    DUET_SKIP_WITHOUT_PEERS(node);
    url_process server({node, peer("v2_http_server.mjs")});
    ASSERT_FALSE(server.url().empty());
    sync_client c;
    auto r = c.connect(client::http_target{server.url(), {}}, interop_options(GetParam().mode));
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(c->era(), GetParam().expected);
    EXPECT_EQ(c->server_info().at("name"), "interop-v2-server");
    exercise(c, "v2");
}

INSTANTIATE_TEST_SUITE_P(
    Interop, TypescriptV2HttpServer,
    ::testing::Values(v2_row{"Legacy", client::connect_mode::legacy, protocol::era::legacy},
                      v2_row{"Modern", client::connect_mode::modern, protocol::era::modern},
                      v2_row{"Auto", client::connect_mode::auto_detect, protocol::era::modern}),
    [](auto const& row) { return std::string(row.param.name); });

class TypescriptV1StdioServer : public ::testing::TestWithParam<client::connect_mode> {};

TEST_P(TypescriptV1StdioServer, IsReachedThroughInitialize) {
    auto const node = node_binary();
    DUET_SKIP_WITHOUT_PEERS(node);
    sync_client c;
    auto r =
        c.connect(client::stdio_target{node, {peer("v1_stdio_server.mjs")}}, interop_options(GetParam()));
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(c->era(), protocol::era::legacy);
    EXPECT_EQ(c->version(), protocol::version::v2025_11_25);
    exercise(c, "v1");
}

INSTANTIATE_TEST_SUITE_P(Interop, TypescriptV1StdioServer,
                         ::testing::Values(client::connect_mode::legacy, client::connect_mode::auto_detect),
                         [](auto const& row) { return std::string(to_string(row.param)); });

struct v2_client_row {
    std::string_view mode;
    std::string_view era;
    std::string_view version;
};

void PrintTo(v2_client_row const& r, std::ostream* os) {
    *os << r.mode;
}

class TypescriptV2Client : public ::testing::TestWithParam<v2_client_row> {};

TEST_P(TypescriptV2Client, UsesDuetsServer) {
    auto const node = node_binary();
    DUET_SKIP_WITHOUT_PEERS(node);
    duet::test::http::inproc_server http;
    auto const url = "http://" + http.ep().authority() + http.ep().path;
    auto const out = ::testing::TempDir() + "duet-v2-client-" + std::to_string(::getpid()) + ".out";
    std::string command = node;
    command +=
        " " + peer("v2_client.mjs") + " " + url + " " + std::string(GetParam().mode) + " </dev/null >" + out;
    int const status = std::system(command.c_str());
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "the v2 client failed (see its stderr above)";
    auto const seen = json::parse(duet::test::take_file(out)).as_object();
    EXPECT_EQ(seen.at("era"), json::value(GetParam().era));
    EXPECT_EQ(seen.at("version"), json::value(GetParam().version));
    EXPECT_EQ(seen.at("tools"),
              (json::array{"add", "ask_name", "countdown", "echo", "long_job", "touch_readme", "whoami"}));
    EXPECT_EQ(seen.at("echo"), "from the v2 client");
    EXPECT_EQ(seen.at("read").as_string().subview().substr(0, 11), "# Duet demo");
    EXPECT_EQ(seen.at("prompt").as_string().subview().substr(0, 27), "Please review this go code:");
}

INSTANTIATE_TEST_SUITE_P(Interop, TypescriptV2Client,
                         ::testing::Values(v2_client_row{"legacy", "legacy", "2025-11-25"},
                                           v2_client_row{"auto", "modern", "2026-07-28"},
                                           v2_client_row{"modern", "modern", "2026-07-28"}),
                         [](auto const& row) { return std::string(row.param.mode); });

} // namespace
