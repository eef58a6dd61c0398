// The client library against Duet's own demo server, over a spawned `duet serve --stdio` and over Streamable
// HTTP (the server in-process on a loopback port), in each connect mode: the same calls work in both eras,
// and the era each mode reaches is the one ERA-POLICY "Client side" says (auto reaches modern on a dual-era
// server).
#include "client/sync_client.hpp"
#include "http/servers.hpp"

#include <boost/json/serialize.hpp>

namespace {

using namespace duet;
using namespace duet::test::client_side;
namespace json = boost::json;

enum class via { stdio, http };

struct era_row {
    std::string_view name;
    via transport;
    client::connect_mode mode;
    protocol::era expected;
};

void PrintTo(era_row const& r, std::ostream* os) {
    *os << r.name;
}

class ClientEras : public ::testing::TestWithParam<era_row> {
protected:
    void SetUp() override {
        if (GetParam().transport == via::http)
            http_ = std::make_unique<test::http::inproc_server>();
    }

    client::server_target target() const {
        if (http_)
            return client::http_target{"http://" + http_->ep().authority() + http_->ep().path, {}};
        return client::stdio_target{DUET_BINARY, {"serve", "--stdio"}};
    }

    client::client_options options() const {
        client::client_options o;
        o.mode = GetParam().mode;
        o.verdicts = nullptr; // every test probes afresh
        o.inputs.elicitation =
            [](json::object const& params) -> boost::system::result<json::object, jsonrpc::error_object> {
            EXPECT_TRUE(params.contains("requestedSchema"));
            return json::object{{"action", "accept"}, {"content", {{"name", "Ada"}}}};
        };
        return o;
    }

    std::unique_ptr<test::http::inproc_server> http_;
};

std::string first_text(json::object const& result) {
    auto const* content = result.if_contains("content");
    if (!content || !content->is_array() || content->get_array().empty())
        return {};
    auto const& b = content->get_array().front().as_object();
    return b.contains("text") ? std::string(b.at("text").as_string()) : std::string();
}

TEST_P(ClientEras, ConnectsInTheExpectedEra) {
    sync_client c;
    auto r = c.connect(target(), options());
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(c->era(), GetParam().expected);
    EXPECT_EQ(c->version(), GetParam().expected == protocol::era::modern ? protocol::version::v2026_07_28
                                                                         : protocol::version::v2025_11_25);
    EXPECT_EQ(c->server_info().at("name"), "duet-demo");
    EXPECT_TRUE(c->server_capabilities().contains("tools"));
}

TEST_P(ClientEras, ListsEveryToolAndCallsOne) {
    sync_client c;
    ASSERT_TRUE(c.connect(target(), options()));
    auto tools = c.run(c->async_list_tools());
    ASSERT_TRUE(tools) << tools.error().to_string();
    std::vector<std::string> names;
    for (auto const& t : *tools)
        names.emplace_back(t.as_object().at("name").as_string());
    EXPECT_THAT(names, ::testing::UnorderedElementsAre("add", "ask_name", "countdown", "echo", "long_job",
                                                       "touch_readme", "whoami"));

    auto r = c.run(c->async_call_tool("echo", json::object{{"text", "hello both eras"}}));
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(first_text(*r), "hello both eras");
    if (GetParam().expected == protocol::era::legacy)
        EXPECT_FALSE(r->contains("resultType")) << "legacy results carry no resultType";
    else
        EXPECT_EQ(r->at("resultType"), "complete");
}

TEST_P(ClientEras, ReadsAResourceAndGetsAPromptAndCompletes) {
    sync_client c;
    ASSERT_TRUE(c.connect(target(), options()));
    auto read = c.run(c->async_read_resource("duet://demo/greeting/grace"));
    ASSERT_TRUE(read) << read.error().to_string();
    EXPECT_EQ(read->at("contents").as_array().at(0).as_object().at("text"), "Hello, grace!");

    auto prompt = c.run(c->async_get_prompt("review", json::object{{"language", "c++"}}));
    ASSERT_TRUE(prompt) << prompt.error().to_string();
    EXPECT_EQ(prompt->at("description"), "Review of a c++ snippet");

    auto done =
        c.run(c->async_complete(json::object{{"type", "ref/prompt"}, {"name", "review"}}, "language", "ty"));
    ASSERT_TRUE(done) << done.error().to_string();
    EXPECT_EQ(done->at("completion").at("values"), (json::array{"typescript"}));
}

TEST_P(ClientEras, UnknownToolIsTheServersRpcError) {
    sync_client c;
    ASSERT_TRUE(c.connect(target(), options()));
    auto r = c.run(c->async_call_tool("no_such_tool", json::object{}));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, client::errc::rpc_error);
    EXPECT_EQ(r.error().rpc->code, -32602);
}

TEST_P(ClientEras, ElicitationHandlerServesEitherEra) {
    // Legacy: a real elicitation/create request from the server; modern: an input_required round.
    sync_client c;
    ASSERT_TRUE(c.connect(target(), options()));
    auto r = c.run(c->async_call_tool("ask_name", json::object{}));
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(first_text(*r), "Hello, Ada!");
}

TEST_P(ClientEras, ProgressReachesTheCallback) {
    sync_client c;
    ASSERT_TRUE(c.connect(target(), options()));
    std::vector<double> seen;
    client::request_options o;
    o.on_progress = [&](client::progress_event const& p) {
        seen.push_back(p.progress);
        EXPECT_EQ(p.total, 3.0);
    };
    auto r = c.run(c->async_call_tool("countdown", json::object{{"n", 3}}, o));
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(seen, (std::vector<double>{1, 2, 3}));
}

// A log line on a request's own HTTP stream is that request's; on stdio nothing ties a line to a request, so
// the connection's handler hears it.
TEST_P(ClientEras, LogLinesOnARequestsOwnStreamReachItsOwnHandler) {
    sync_client c;
    std::vector<std::string> connection_lines;
    auto o = options();
    o.on_log = [&](client::log_event const& e) {
        connection_lines.emplace_back(e.data.as_string());
    };
    ASSERT_TRUE(c.connect(target(), o));
    std::vector<std::string> own_lines;
    client::request_options ro;
    ro.log_level = "debug"; // modern: this request asks for lines; legacy sessions hear them at debug anyway
    ro.on_log = [&](client::log_event const& e) {
        own_lines.emplace_back(e.data.as_string());
    };
    auto r = c.run(c->async_call_tool("countdown", json::object{{"n", 2}}, ro));
    ASSERT_TRUE(r) << r.error().to_string();
    std::vector<std::string> const ticks{"tick 1", "tick 2"};
    if (GetParam().transport == via::http) {
        EXPECT_EQ(own_lines, ticks);
        EXPECT_TRUE(connection_lines.empty()) << connection_lines.front();
    } else {
        EXPECT_EQ(connection_lines, ticks);
        EXPECT_TRUE(own_lines.empty()) << own_lines.front();
    }
}

TEST_P(ClientEras, CancellationEndsTheCallAndTheConnectionStaysUsable) {
    sync_client c;
    ASSERT_TRUE(c.connect(target(), options()));
    client::request_options o;
    o.cancel = std::make_shared<client::cancellation>();
    auto cancel = o.cancel;
    o.on_progress = [cancel](client::progress_event const&) {
        cancel->cancel();
    };
    auto r = c.run(c->async_call_tool("countdown", json::object{{"n", 20}}, o));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, client::errc::cancelled);
    auto again = c.run(c->async_call_tool("echo", json::object{{"text", "still here"}}));
    ASSERT_TRUE(again) << again.error().to_string();
    EXPECT_EQ(first_text(*again), "still here");
}

INSTANTIATE_TEST_SUITE_P(
    DemoServer, ClientEras,
    ::testing::Values(
        era_row{"StdioLegacy", via::stdio, client::connect_mode::legacy, protocol::era::legacy},
        era_row{"StdioModern", via::stdio, client::connect_mode::modern, protocol::era::modern},
        era_row{"StdioAuto", via::stdio, client::connect_mode::auto_detect, protocol::era::modern},
        era_row{"HttpLegacy", via::http, client::connect_mode::legacy, protocol::era::legacy},
        era_row{"HttpModern", via::http, client::connect_mode::modern, protocol::era::modern},
        era_row{"HttpAuto", via::http, client::connect_mode::auto_detect, protocol::era::modern}),
    [](auto const& row) { return std::string(row.param.name); });

} // namespace
