// Interop over HTTPS with a real peer on the official TypeScript SDK: the @modelcontextprotocol/server 2.4.0
// server of tests/interop/peers/v2_http_server.mjs behind Node's https.createServer, with a certificate of a
// CA the test makes (support/test_certs.hpp). The Duet client, trusting that CA through tls.ca_file, does in
// every connect mode what it does over plain HTTP (interop_test.cpp); trusting only the system's store, it
// refuses the peer's certificate in words.
//
// Skipped where node or the npm packages are not installed (scripts/bootstrap installs them; a skip fails
// `make test`).
#include "client/sync_client.hpp"
#include "client/url_process.hpp"
#include "support/test_certs.hpp"

#include <boost/json/object.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

// A namespace of its own: the suite is compiled in unity batches, where the other files' helpers (the plain
// interop test's among them) share the anonymous namespace.
namespace {
namespace https_interop {

using namespace duet;
using namespace duet::test::client_side;
namespace json = boost::json;

std::string v2_peer() {
    return std::string(DUET_SOURCE_DIR) + "/tests/interop/peers/v2_http_server.mjs";
}

bool v2_sdk_installed() {
    auto const modules =
        std::filesystem::path(DUET_SOURCE_DIR) / "tests/interop/node_modules/@modelcontextprotocol";
    return std::filesystem::exists(modules / "server") && std::filesystem::exists(modules / "node");
}

client::client_options options_for(client::connect_mode m) {
    client::client_options o;
    o.mode = m;
    o.verdicts = nullptr;
    return o;
}

std::string first_text(json::object const& result) {
    auto const& content = result.at("content").as_array();
    return content.empty() ? std::string() : std::string(content.at(0).as_object().at("text").as_string());
}

// The peer over HTTPS with a certificate for 127.0.0.1 and localhost, issued by a CA made for the test.
class https_peer {
public:
    explicit https_peer(std::string const& node)
        : pki_(dir_.path()),
          cert_(pki_.issue({.name = "v2-peer", .dns = {"localhost"}, .ips = {"127.0.0.1"}})),
          process_({node, v2_peer(), "--tls-cert", cert_.cert, "--tls-key", cert_.key}) {}

    [[nodiscard]] std::string const& url() const { return process_.url(); }
    [[nodiscard]] std::string const& ca_file() const { return pki_.ca_file(); }

    client::http_target trusting_ca() const {
        client::http_target t{url(), {}};
        t.tls.ca_file = ca_file();
        return t;
    }

private:
    duet::test::temp_dir dir_;
    duet::test::test_pki pki_;
    duet::test::cert_files cert_;
    url_process process_;
};

#define DUET_SKIP_WITHOUT_V2_PEER(node)                                                                      \
    DUET_SKIP_WITHOUT_NODE(node);                                                                            \
    if (!v2_sdk_installed())                                                                                 \
    GTEST_SKIP() << "the npm SDKs are not installed (scripts/bootstrap)"

struct https_row {
    std::string_view name;
    client::connect_mode mode;
    protocol::era expected;
};

void PrintTo(https_row const& r, std::ostream* os) {
    *os << r.name;
}

class TypescriptV2HttpsServer : public ::testing::TestWithParam<https_row> {};

TEST_P(TypescriptV2HttpsServer, ServesEveryCallToAClientTrustingItsCa) {
    auto const node = node_binary();
    DUET_SKIP_WITHOUT_V2_PEER(node);
    https_peer server(node);
    ASSERT_TRUE(server.url().starts_with("https://127.0.0.1:")) << server.url();
    sync_client c;
    auto r = c.connect(server.trusting_ca(), options_for(GetParam().mode));
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(c->era(), GetParam().expected);
    EXPECT_EQ(c->server_info().at("name"), "interop-v2-server");

    auto tools = c.run(c->async_list_tools());
    ASSERT_TRUE(tools) << tools.error().to_string();
    std::vector<std::string> names;
    for (auto const& t : *tools)
        names.emplace_back(t.at("name").as_string());
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, (std::vector<std::string>{"add", "echo"}));

    auto echo = c.run(c->async_call_tool("echo", json::object{{"text", "across SDKs, encrypted"}}));
    ASSERT_TRUE(echo) << echo.error().to_string();
    EXPECT_EQ(first_text(*echo), "across SDKs, encrypted");
    auto sum = c.run(c->async_call_tool("add", json::object{{"a", 2}, {"b", 40}}));
    ASSERT_TRUE(sum) << sum.error().to_string();
    EXPECT_EQ(first_text(*sum), "42");
    auto read = c.run(c->async_read_resource("interop://greeting"));
    ASSERT_TRUE(read) << read.error().to_string();
    EXPECT_EQ(read->at("contents").as_array().at(0).as_object().at("text"), "hello from the v2 SDK");
    auto prompt = c.run(c->async_get_prompt("hello", json::object{{"who", "Duet"}}));
    ASSERT_TRUE(prompt) << prompt.error().to_string();
    EXPECT_EQ(prompt->at("messages").as_array().at(0).at("content").at("text"), "Hello, Duet!");
}

INSTANTIATE_TEST_SUITE_P(
    Interop, TypescriptV2HttpsServer,
    ::testing::Values(https_row{"Legacy", client::connect_mode::legacy, protocol::era::legacy},
                      https_row{"Modern", client::connect_mode::modern, protocol::era::modern},
                      https_row{"Auto", client::connect_mode::auto_detect, protocol::era::modern}),
    [](auto const& row) { return std::string(row.param.name); });

// The CA the test made is in no system store: a client that does not name it must not get through, whatever
// the mode (auto must not fall back to anything that skips verification).
TEST(TypescriptV2HttpsServerUntrusted, IsRefusedWithoutItsCaInEveryMode) {
    auto const node = node_binary();
    DUET_SKIP_WITHOUT_V2_PEER(node);
    https_peer server(node);
    ASSERT_FALSE(server.url().empty());
    for (auto mode :
         {client::connect_mode::legacy, client::connect_mode::modern, client::connect_mode::auto_detect}) {
        sync_client c;
        auto r = c.connect(client::http_target{server.url(), {}}, options_for(mode));
        ASSERT_FALSE(r) << to_string(mode) << ": connected to a server whose CA it was not given";
        EXPECT_EQ(r.error().code, client::errc::tls_failed)
            << to_string(mode) << ": " << r.error().to_string();
        EXPECT_NE(r.error().message.find("certificate verify failed"), std::string::npos)
            << to_string(mode) << ": " << r.error().to_string();
    }
}

} // namespace https_interop
} // namespace
