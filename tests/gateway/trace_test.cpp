// W3C Trace Context end to end: a handler sees the trace its request carries (params._meta first, else the
// HTTP headers); the client sends request_options::trace in _meta and as headers; the gateway passes a
// downstream request's trace on to its upstream as its own hop (same trace id and flags, a new parent id) and
// names the trace id in its per-request log line.
#include <duet/client/client.hpp>
#include <duet/server/server.hpp>

#include "client/sync_client.hpp"
#include "gateway/gateway_process.hpp"
#include "http/mcp_http.hpp"
#include "http/servers.hpp"
#include "stdio/messages.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {
namespace trace_suite {

using namespace duet;
using namespace duet::test;
using namespace duet::test::http;

constexpr char const* sent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
constexpr char const* trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";

// The demo server with a `trace` tool answering with the traceparent and tracestate its request carried.
struct traced_server {
    traced_server() {
        s.srv().add_tool(server::tool{.name = "trace", .description = "The request's trace"},
                         [](boost::json::object const&, server::request_context& ctx) {
                             auto const* t = ctx.trace();
                             return server::tool_result::text(t ? t->traceparent + " " + t->tracestate
                                                                : "none");
                         });
    }
    inproc_server s;
};

std::string text_of(reply const& r) {
    auto const m = r.json();
    auto const* result = m.is_object() ? m.as_object().if_contains("result") : nullptr;
    if (!result) {
        ADD_FAILURE() << "not a result: " << r.body;
        return {};
    }
    auto const* content = result->as_object().at("content").as_array().data();
    return std::string(content->as_object().at("text").as_string());
}

// A modern tools/call of `trace` whose _meta carries `traceparent` and `tracestate` beside the envelope.
boost::json::object traced_call(int id, std::string const& traceparent, std::string const& tracestate) {
    auto r = modern_request(id, "tools/call", call_params("trace"));
    auto& meta = r["params"].as_object()["_meta"].as_object();
    meta["traceparent"] = traceparent;
    meta["tracestate"] = tracestate;
    return r;
}

TEST(TraceContextE2E, TheHandlerSeesTheTraceInMeta) {
    traced_server up;
    mcp_http c(up.s.ep());
    EXPECT_EQ(text_of(c.post(traced_call(1, sent, "a=1"))), std::string(sent) + " a=1");
}

TEST(TraceContextE2E, TheHandlerSeesTheTraceInHeadersWhenMetaHasNone) {
    traced_server up;
    mcp_http c(up.s.ep());
    auto r = c.post(modern_request(1, "tools/call", call_params("trace")),
                    {{"traceparent", sent}, {"tracestate", "h=2"}});
    EXPECT_EQ(text_of(r), std::string(sent) + " h=2");
    auto none = c.post(modern_request(2, "tools/call", call_params("trace")), {{"traceparent", "garbage"}});
    EXPECT_EQ(text_of(none), "none") << "an invalid traceparent starts no trace";
}

TEST(TraceContextE2E, ALegacySessionsRequestsCarryTheirTraceToo) {
    traced_server up;
    mcp_http c(up.s.ep());
    c.initialize("2025-11-25");
    auto r = c.post(legacy_request(2, "tools/call", call_params("trace")), {{"traceparent", sent}});
    EXPECT_EQ(text_of(r), std::string(sent) + " ");
}

TEST(TraceContextE2E, TheGatewayPassesTheTraceOnAsItsOwnHopAndLogsItsId) {
    traced_server up;
    gateway::gateway_process gw(up.s.ep().authority().insert(0, "http://") + up.s.ep().path);
    mcp_http c(gw.ep());
    auto const seen = text_of(c.post(traced_call(1, sent, "a=1")));
    // 00-TRACE-PARENT-01 a=1: the same trace and flags, the gateway's span as the parent.
    ASSERT_EQ(seen.size(), 55u + 4u) << seen;
    EXPECT_EQ(seen.substr(0, 36), std::string("00-") + trace_id + "-");
    EXPECT_NE(seen.substr(36, 16), "00f067aa0ba902b7");
    EXPECT_NE(seen.substr(36, 16), "0000000000000000");
    EXPECT_EQ(seen.substr(52), "-01 a=1");
    EXPECT_TRUE(gw.wait_for_log(std::string("trace=") + trace_id)) << gw.stderr_text();
}

// A TCP relay in front of a server that keeps every byte clients send through it: what a client puts on the
// wire, headers included, while a real server answers it.
class recording_relay {
public:
    explicit recording_relay(endpoint const& to)
        : to_(boost::asio::ip::make_address(to.host), to.port),
          acceptor_(io_, {boost::asio::ip::make_address("127.0.0.1"), 0}) {
        accepting_ = std::thread([this] {
            for (;;) {
                auto down = std::make_shared<tcp::socket>(io_);
                boost::system::error_code ec;
                acceptor_.accept(*down, ec);
                if (ec || stopping_)
                    return;
                auto up = std::make_shared<tcp::socket>(io_);
                up->connect(to_, ec);
                if (ec)
                    return;
                std::lock_guard lock(mutex_);
                sockets_.push_back(down);
                sockets_.push_back(up);
                pumps_.emplace_back([this, down, up] { pump(*down, *up, true); });
                pumps_.emplace_back([this, down, up] { pump(*up, *down, false); });
            }
        });
    }
    ~recording_relay() {
        // A blocking accept is not woken by closing its socket from another thread: a last connection is.
        stopping_ = true;
        boost::system::error_code ignored;
        tcp::socket wake(io_);
        wake.connect(acceptor_.local_endpoint(), ignored);
        accepting_.join();
        acceptor_.close(ignored);
        std::lock_guard lock(mutex_);
        for (auto& s : sockets_)
            s->shutdown(tcp::socket::shutdown_both, ignored);
        for (auto& t : pumps_)
            t.join();
    }
    [[nodiscard]] endpoint ep(std::string path) const {
        return endpoint{"127.0.0.1", acceptor_.local_endpoint().port(), std::move(path)};
    }
    [[nodiscard]] std::string sent() const {
        std::lock_guard lock(mutex_);
        return sent_;
    }

private:
    using tcp = boost::asio::ip::tcp;

    void pump(tcp::socket& from, tcp::socket& to, bool record) {
        char buffer[4096];
        boost::system::error_code ec;
        for (;;) {
            auto const n = from.read_some(boost::asio::buffer(buffer), ec);
            if (ec)
                break;
            if (record) {
                std::lock_guard lock(mutex_);
                sent_.append(buffer, n);
            }
            boost::asio::write(to, boost::asio::buffer(buffer, n), ec);
            if (ec)
                break;
        }
        to.shutdown(tcp::socket::shutdown_send, ec);
    }

    boost::asio::io_context io_;
    tcp::endpoint to_;
    tcp::acceptor acceptor_;
    std::thread accepting_;
    std::atomic<bool> stopping_{false};
    mutable std::mutex mutex_;
    std::vector<std::shared_ptr<tcp::socket>> sockets_;
    std::vector<std::thread> pumps_;
    std::string sent_;
};

TEST(TraceContextE2E, TheClientSendsTheTraceInMetaAndAsHeaders) {
    traced_server up;
    recording_relay relay(up.s.ep());
    auto const url = "http://" + relay.ep(up.s.ep().path).authority() + up.s.ep().path;
    client_side::sync_client c;
    client::client_options options;
    options.mode = client::connect_mode::modern;
    ASSERT_TRUE(c.connect(client::http_target{url}, options));
    client::request_options traced;
    traced.trace = protocol::trace_context{sent, "a=1"};
    auto r = c.run(c->async_call_tool("trace", {}, std::move(traced)));
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_NE(boost::json::serialize(r->at("content")).find(std::string(sent) + " a=1"), std::string::npos)
        << "the server saw it";
    auto const wire = relay.sent();
    EXPECT_NE(wire.find(std::string("traceparent: ") + sent + "\r\n"), std::string::npos) << wire;
    EXPECT_NE(wire.find("tracestate: a=1\r\n"), std::string::npos) << wire;
    EXPECT_NE(wire.find(std::string(R"("traceparent":")") + sent), std::string::npos) << wire;
    c.close();
}

} // namespace trace_suite
} // namespace
