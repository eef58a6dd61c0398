// An http_server serving one endpoint on an io_context its owner runs other work on (an embedded gateway's
// upstream connections, say): requests are answered, the owner's own work runs on the same io_context, and
// run() returns once stop() drained it.
#include <duet/server/server.hpp>
#include <duet/transport/http_server.hpp>

#include "demo_server.hpp"
#include "http/mcp_http.hpp"
#include "stdio/messages.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace {
namespace shared_io_suite {

using namespace duet;
using namespace duet::test;
using namespace duet::test::http;

TEST(HttpSharedIo, OneEndpointServesOnTheOwnersIoContextBesideItsOtherWork) {
    auto srv = apps::make_demo_server(protocol::era_support::both);
    boost::asio::io_context io;
    transport::http_options options;
    options.port = 0;
    options.io_threads = 1;
    transport::http_server http(*srv, options, io);
    ASSERT_FALSE(http.listen());
    std::thread serving([&] { http.run(); });

    mcp_http c(endpoint::parse(http.url()));
    auto const r = c.post(modern_request(1, "tools/call", call_params("echo", {{"text", "shared"}})));
    EXPECT_EQ(r.status, 200u);
    EXPECT_NE(r.body.find("shared"), std::string::npos) << r.body;

    std::atomic<bool> ran{false};
    boost::asio::post(io, [&] { ran = true; });
    auto const give_up = std::chrono::steady_clock::now() + http_wait;
    while (!ran && std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_TRUE(ran) << "the owner's work runs on the io_context the server runs";

    http.stop();
    serving.join();
}

} // namespace shared_io_suite
} // namespace
