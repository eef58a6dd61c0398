// The connect modes' edge cases (ERA-POLICY "Client side", seed handshake-cap-pr), against scripted fakes
// (tests/client/fakes, run by node) and Duet's own single-era servers:
//
//  - legacy: a modern version is a usage error before anything is spawned; a counter-offer is adopted (stdio:
//    the version reported; HTTP: the next MCP-Protocol-Version header); a modern InitializeResult is
//    rejected;
//  - auto: a legacy-only server (an error, a timeout, or a stdio process that exits on the probe) is reached
//    through initialize; a pinned modern version is never downgraded; 401 is an auth error, not evidence;
//    the verdict is remembered per server.
#include "client/sync_client.hpp"
#include "client/url_process.hpp"
#include "http/servers.hpp"
#include "support/files.hpp"

#include <boost/asio/error.hpp>

#include <cstdio>

namespace {

using namespace duet;
using namespace duet::test::client_side;
using duet::test::take_file;
namespace json = boost::json;

client::client_options mode(client::connect_mode m) {
    client::client_options o;
    o.mode = m;
    o.verdicts = nullptr;
    // Generous: a probe that times out is legacy evidence, so a server slow to start on a loaded machine (an
    // asan build beside another) would be taken for legacy. The one test of a server that never answers it
    // shortens it.
    o.probe_timeout = std::chrono::seconds(20);
    return o;
}

std::string temp_log(std::string const& name) {
    auto path = ::testing::TempDir() + "duet-client-" + std::to_string(::getpid()) + "-" + name + ".log";
    std::remove(path.c_str());
    return path;
}

TEST(LegacyConnect, ModernVersionIsAUsageErrorBeforeAnythingIsSpawned) {
    // A command that does not exist: reaching the spawn would give spawn_failed, not usage.
    auto o = mode(client::connect_mode::legacy);
    o.version = protocol::version::v2026_07_28;
    sync_client c;
    auto r = c.connect(client::stdio_target{"/nonexistent/duet-test-server", {}}, o);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, client::errc::usage);
}

TEST(LegacyConnect, ModernVersionOverHttpIsAUsageErrorBeforeAnyByteIsSent) {
    auto o = mode(client::connect_mode::legacy);
    o.version = protocol::version::v2026_07_28;
    sync_client c;
    // Port 9 on loopback: nothing listens; a connection attempt would fail with connect_failed.
    auto r = c.connect(client::http_target{"http://127.0.0.1:9/mcp", {}}, o);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, client::errc::usage);
}

TEST(LegacyConnect, OffersTheLatestHandshakeVersionAndAdoptsACounterOfferOnStdio) {
    auto const node = node_binary();
    DUET_SKIP_WITHOUT_NODE(node);
    auto const log = temp_log("counter-offer");
    ::setenv("FAKE_LOG", log.c_str(), 1);
    sync_client c;
    auto r = c.connect(client::stdio_target{node, {fake("stdio_scripted.mjs"), "counter-offer"}},
                       mode(client::connect_mode::legacy));
    ::unsetenv("FAKE_LOG");
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(c->version(), protocol::version::v2025_03_26) << "the answer, not the offer";
    c.close();
    auto const sent = take_file(log);
    EXPECT_NE(sent.find(R"("protocolVersion":"2025-11-25")"), std::string::npos) << sent;
    EXPECT_NE(sent.find("notifications/initialized"), std::string::npos);
}

TEST(LegacyConnect, CounterOfferIsCarriedByTheNextVersionHeaderOnHttp) {
    auto const node = node_binary();
    DUET_SKIP_WITHOUT_NODE(node);
    url_process server({node, fake("http_scripted.mjs"), "counter-offer"});
    ASSERT_FALSE(server.url().empty());
    sync_client c;
    auto r = c.connect(client::http_target{server.url(), {}}, mode(client::connect_mode::legacy));
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(c->version(), protocol::version::v2025_06_18);
    auto tools = c.run(c->async_list_tools());
    ASSERT_TRUE(tools) << tools.error().to_string();
    ASSERT_EQ(tools->size(), 1u);
    EXPECT_EQ(tools->at(0).as_object().at("name"), "header-2025-06-18");
}

TEST(LegacyConnect, ModernInitializeResultIsRejected) {
    auto const node = node_binary();
    DUET_SKIP_WITHOUT_NODE(node);
    sync_client c;
    auto r = c.connect(client::stdio_target{node, {fake("stdio_scripted.mjs"), "modern-initialize"}},
                       mode(client::connect_mode::legacy));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, client::errc::version_rejected);
}

// The client's stdio reader hands on a line once a read completes it, however the child's writes cut it:
// pieces of 7 bytes, CRLF and blank lines, a notification and an answer in one write, and a line longer than
// the reader's first buffer all come through as the same messages.
TEST(ClientStdioReader, LinesCutAnywhereComeThroughWhole) {
    auto const node = node_binary();
    DUET_SKIP_WITHOUT_NODE(node);
    sync_client c;
    auto r = c.connect(client::stdio_target{node, {fake("stdio_scripted.mjs"), "fragmented"}},
                       mode(client::connect_mode::legacy));
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(c->version(), protocol::version::v2025_11_25);
    auto tools = c.run(c->async_list_tools());
    ASSERT_TRUE(tools) << tools.error().to_string();
    ASSERT_EQ(tools->size(), 2u);
    EXPECT_EQ(tools->at(0).as_object().at("name"), "fake_tool");
    EXPECT_EQ(tools->at(1).as_object().at("description").as_string().size(), 20000u);
    std::string method("prompts/list");
    auto refused = c.run(c->async_request(std::move(method), json::object{}));
    ASSERT_FALSE(refused);
    ASSERT_EQ(refused.error().code, client::errc::rpc_error) << refused.error().to_string();
    EXPECT_EQ(refused.error().rpc->code, -32601);
}

// A line over client_options::max_message_bytes (here 1 MiB; a line of exactly the bound would be a message)
// ends the conversation: the call waiting for it fails as too_large, saying so, and nothing after it is read.
TEST(ClientStdioReader, ALineOverTheBoundFailsAsTooLargeAndEndsTheConnection) {
    auto const node = node_binary();
    DUET_SKIP_WITHOUT_NODE(node);
    sync_client c;
    auto o = mode(client::connect_mode::legacy);
    o.max_message_bytes = 1024 * 1024;
    auto r = c.connect(client::stdio_target{node, {fake("stdio_scripted.mjs"), "oversized-answer"}}, o);
    ASSERT_TRUE(r) << r.error().to_string();
    auto tools = c.run(c->async_list_tools());
    ASSERT_FALSE(tools);
    EXPECT_EQ(tools.error().code, client::errc::too_large) << tools.error().to_string();
    EXPECT_NE(tools.error().message.find("over 1048576 bytes"), std::string::npos) << tools.error().message;
    std::string method("ping");
    auto after = c.run(c->async_request(std::move(method), json::object{}));
    ASSERT_FALSE(after);
    EXPECT_EQ(after.error().code, client::errc::too_large) << "the connection ended with that error";
}

// The same bound over HTTP, on a whole JSON answer and on an SSE event: the call fails as too_large, its
// connection is dropped without reading the rest, and the client goes on serving other calls.
TEST(ClientHttpReader, AnAnswerOverTheBoundFailsAsTooLargeAndTheClientGoesOn) {
    auto const node = node_binary();
    DUET_SKIP_WITHOUT_NODE(node);
    for (std::string const fake_mode : {"big-json", "big-sse"}) {
        url_process server({node, fake("http_scripted.mjs"), fake_mode});
        ASSERT_FALSE(server.url().empty());
        sync_client c;
        auto o = mode(client::connect_mode::legacy);
        o.max_message_bytes = 1024 * 1024;
        auto r = c.connect(client::http_target{server.url(), {}}, o);
        ASSERT_TRUE(r) << r.error().to_string();
        auto tools = c.run(c->async_list_tools());
        ASSERT_FALSE(tools) << fake_mode;
        EXPECT_EQ(tools.error().code, client::errc::too_large)
            << fake_mode << ": " << tools.error().to_string();
        std::string method("prompts/list");
        auto after = c.run(c->async_request(std::move(method), json::object{}));
        ASSERT_FALSE(after);
        EXPECT_EQ(after.error().code, client::errc::rpc_error)
            << fake_mode << ": " << after.error().to_string();
    }
}

// The last line a child writes without a newline is not a message: the call it would answer fails as
// closed when the child's output ends.
TEST(ClientStdioReader, FinalLineWithoutNewlineIsNotAMessage) {
    auto const node = node_binary();
    DUET_SKIP_WITHOUT_NODE(node);
    sync_client c;
    auto r = c.connect(client::stdio_target{node, {fake("stdio_scripted.mjs"), "unterminated-answer"}},
                       mode(client::connect_mode::legacy));
    ASSERT_TRUE(r) << r.error().to_string();
    auto tools = c.run(c->async_list_tools());
    ASSERT_FALSE(tools);
    EXPECT_EQ(tools.error().code, client::errc::closed) << tools.error().to_string();
    EXPECT_EQ(tools.error().message, "the server process closed its output");
}

TEST(ModernConnect, HandshakeVersionIsAUsageError) {
    auto o = mode(client::connect_mode::modern);
    o.version = protocol::version::v2025_06_18;
    sync_client c;
    auto r = c.connect(client::stdio_target{"/nonexistent/duet-test-server", {}}, o);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, client::errc::usage);
}

TEST(ModernConnect, DeclaringRootsOrSamplingWarnsOfTheDeprecation) {
    auto o = mode(client::connect_mode::modern);
    std::vector<std::string> warnings;
    o.on_warning = [&](std::string const& w) {
        warnings.push_back(w);
    };
    o.inputs.sampling =
        [](json::object const&) -> boost::system::result<json::object, jsonrpc::error_object> {
        return json::object{};
    };
    sync_client c;
    ASSERT_TRUE(c.connect(client::stdio_target{DUET_BINARY, {"serve", "--stdio"}}, o));
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("deprecated"), std::string::npos);

    auto legacy = mode(client::connect_mode::legacy);
    legacy.inputs = o.inputs;
    legacy.on_warning = o.on_warning;
    sync_client l;
    ASSERT_TRUE(l.connect(client::stdio_target{DUET_BINARY, {"serve", "--stdio"}}, legacy));
    EXPECT_EQ(warnings.size(), 1u) << "no warning on a legacy connect";
}

struct fallback_row {
    std::string_view name;
    std::string_view fake_mode;
    std::chrono::milliseconds probe_timeout = std::chrono::seconds(20);
};

void PrintTo(fallback_row const& r, std::ostream* os) {
    *os << r.name;
}

class AutoFallsBack : public ::testing::TestWithParam<fallback_row> {};

TEST_P(AutoFallsBack, ToInitializeOnALegacyStdioServer) {
    auto const node = node_binary();
    DUET_SKIP_WITHOUT_NODE(node);
    auto o = mode(client::connect_mode::auto_detect);
    o.probe_timeout = GetParam().probe_timeout;
    sync_client c;
    auto r = c.connect(
        client::stdio_target{node, {fake("stdio_scripted.mjs"), std::string(GetParam().fake_mode)}}, o);
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(c->era(), protocol::era::legacy);
    auto tools = c.run(c->async_list_tools());
    ASSERT_TRUE(tools) << tools.error().to_string();
    EXPECT_EQ(tools->size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(ProbeOutcomes, AutoFallsBack,
                         ::testing::Values(fallback_row{"ErrorAnswer", "legacy-error"},
                                           fallback_row{"NoAnswer", "silent-on-discover",
                                                        std::chrono::milliseconds(1500)},
                                           fallback_row{"ProcessExits", "exit-on-discover"}),
                         [](auto const& row) { return std::string(row.param.name); });

// The probe times out (the server is slow to read it), the handshake goes to the same process, and the server
// then reads the probe and exits: the client starts it again and shakes hands with the new one.
TEST(AutoConnect, StartsAgainAServerThatExitsOnAProbeItReadAfterTheTimeout) {
    auto const node = node_binary();
    DUET_SKIP_WITHOUT_NODE(node);
    auto const log = temp_log("slow-exit-on-discover");
    ::setenv("FAKE_LOG", log.c_str(), 1);
    auto o = mode(client::connect_mode::auto_detect);
    o.probe_timeout = std::chrono::milliseconds(100);
    sync_client c;
    auto r = c.connect(client::stdio_target{node, {fake("stdio_scripted.mjs"), "slow-exit-on-discover"}}, o);
    ::unsetenv("FAKE_LOG");
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(c->era(), protocol::era::legacy);
    auto tools = c.run(c->async_list_tools());
    ASSERT_TRUE(tools) << tools.error().to_string();
    EXPECT_EQ(tools->size(), 1u);
    c.close();
    // One probe, read by the first process; the handshake, read by the second, which saw no probe.
    auto const sent = take_file(log);
    auto const probe = sent.find("server/discover");
    ASSERT_NE(probe, std::string::npos) << sent;
    EXPECT_EQ(sent.find("server/discover", probe + 1), std::string::npos) << sent;
    EXPECT_NE(sent.find(R"("method":"initialize")", probe), std::string::npos) << sent;
}

TEST(AutoConnect, FallsBackOnDuetsLegacyOnlyServersOverBothTransports) {
    sync_client s;
    auto r = s.connect(client::stdio_target{DUET_BINARY, {"serve", "--stdio", "--legacy-only"}},
                       mode(client::connect_mode::auto_detect));
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(s->era(), protocol::era::legacy);

    test::http::inproc_server http({}, protocol::era_support::legacy_only);
    sync_client h;
    auto hr = h.connect(client::http_target{"http://" + http.ep().authority() + http.ep().path, {}},
                        mode(client::connect_mode::auto_detect));
    ASSERT_TRUE(hr) << hr.error().to_string();
    EXPECT_EQ(h->era(), protocol::era::legacy);
}

TEST(AutoConnect, ReachesModernOnAModernOnlyServer) {
    test::http::inproc_server http({}, protocol::era_support::modern_only);
    sync_client h;
    auto r = h.connect(client::http_target{"http://" + http.ep().authority() + http.ep().path, {}},
                       mode(client::connect_mode::auto_detect));
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(h->era(), protocol::era::modern);
}

TEST(AutoConnect, PinnedModernVersionIsNeverDowngraded) {
    auto o = mode(client::connect_mode::auto_detect);
    o.version = protocol::version::v2026_07_28;
    sync_client c;
    auto r = c.connect(client::stdio_target{DUET_BINARY, {"serve", "--stdio", "--legacy-only"}}, o);
    ASSERT_FALSE(r) << "a legacy-only server cannot serve a pinned modern version";
    EXPECT_NE(r.error().code, client::errc::usage);
}

TEST(AutoConnect, UnauthorizedIsAnAuthErrorNotLegacyEvidence) {
    auto const node = node_binary();
    DUET_SKIP_WITHOUT_NODE(node);
    url_process server({node, fake("http_scripted.mjs"), "auth"});
    ASSERT_FALSE(server.url().empty());
    sync_client c;
    auto r = c.connect(client::http_target{server.url(), {}}, mode(client::connect_mode::auto_detect));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, client::errc::auth_required);
    EXPECT_EQ(r.error().http_status, 401u);
}

TEST(AutoConnect, FallsBackOnAnSdkStyleLegacyHttpServer) {
    auto const node = node_binary();
    DUET_SKIP_WITHOUT_NODE(node);
    url_process server({node, fake("http_scripted.mjs"), "legacy-400"});
    ASSERT_FALSE(server.url().empty());
    sync_client c;
    auto r = c.connect(client::http_target{server.url(), {}}, mode(client::connect_mode::auto_detect));
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(c->era(), protocol::era::legacy);
}

TEST(AutoConnect, RemembersTheVerdictPerServer) {
    client::verdict_cache verdicts;
    auto o = mode(client::connect_mode::auto_detect);
    o.verdicts = &verdicts;
    client::stdio_target const dual{DUET_BINARY, {"serve", "--stdio"}};
    {
        sync_client c;
        ASSERT_TRUE(c.connect(dual, o));
    }
    auto const known = verdicts.find(client::describe(dual));
    ASSERT_TRUE(known);
    EXPECT_EQ(known->era, protocol::era::modern);

    // A remembered verdict is used without probing: told "legacy", the dual-era server is reached through
    // initialize even though a probe would have said modern.
    verdicts.remember(client::describe(dual),
                      client::era_verdict{protocol::era::legacy, protocol::version::v2025_06_18});
    sync_client again;
    ASSERT_TRUE(again.connect(dual, o));
    EXPECT_EQ(again->era(), protocol::era::legacy);
    EXPECT_EQ(again->version(), protocol::version::v2025_06_18);
}

} // namespace
