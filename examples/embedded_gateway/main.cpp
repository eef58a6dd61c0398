// embedded_gateway: a gateway inside your own program. It starts one MCP server as a stdio child (of either
// era) and serves it over Streamable HTTP on 127.0.0.1:PORT/mcp to clients of both eras.
//
//     embedded_gateway PORT -- COMMAND [ARG...]     # PORT 0: a free port; the first stdout line is the URL
//
// e.g. embedded_gateway 8750 -- ./typed_tool_server
// Logs (one line per forwarded request, the child's stderr) go to stderr. SIGINT or SIGTERM stops it.
#include <duet/gateway/upstream_backend.hpp>
#include <duet/transport/http_server.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <future>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace gateway = duet::gateway;

namespace {

// Runs `io` on this thread until `done` is ready: for the work before the HTTP server runs `io` (connecting
// to the upstream) and after it stopped (closing it).
template<class T>
T run_until(asio::io_context& io, std::future<T> done) {
    io.restart();
    while (done.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
        io.run_one();
    return done.get();
}

} // namespace

int main(int argc, char** argv) {
    std::uint16_t port = 0;
    auto const* end = argc > 1 ? argv[1] + std::strlen(argv[1]) : nullptr;
    if (argc < 4 || std::strcmp(argv[2], "--") != 0 || std::from_chars(argv[1], end, port).ptr != end) {
        std::fprintf(stderr, "usage: embedded_gateway PORT -- COMMAND [ARG...]\n");
        return 2;
    }

    // One io_context, run by one thread, carries both the HTTP server and the upstream connections: a
    // forwarded call stays on the thread that read it, and the backend gets the serial executor it needs.
    asio::io_context io;
    gateway::gateway_options options;
    options.upstream = duet::client::stdio_target{argv[3], std::vector<std::string>(argv + 4, argv + argc)};
    // mode auto (the default): asks server/discover, falls back to initialize; the upstream's era is found
    // once, here, and every downstream request is translated to it.
    auto created =
        run_until(io, asio::co_spawn(io, gateway::upstream_backend::async_create(options), asio::use_future));
    if (!created) {
        std::fprintf(stderr, "embedded_gateway: cannot start the upstream: %s\n",
                     created.error().to_string().c_str());
        return 1;
    }
    auto upstream = *created;

    // The server in front: it admits requests of both eras, keeps legacy sessions and modern input rounds,
    // and shapes results per era; the backend answers what the upstream offers. Its name and instructions
    // are the upstream's.
    duet::server::server srv(upstream->describe());
    upstream->attach(srv);

    std::vector<duet::transport::http_route> routes{{"/mcp", &srv}};
    int status = 0;
    {
        duet::transport::http_server http(std::move(routes), {.port = port, .io_threads = 1}, io);
        if (auto ec = http.listen()) {
            std::fprintf(stderr, "embedded_gateway: cannot listen on 127.0.0.1:%s: %s\n", argv[1],
                         ec.message().c_str());
            status = 1;
        } else {
            std::printf("%s\n", http.url().c_str());
            std::fflush(stdout);
            http.run(); // until SIGINT or SIGTERM, then drains
        }
    }
    // Before srv goes: stop relaying to it, then end the child.
    upstream->detach();
    run_until(io, asio::co_spawn(io, upstream->async_close(), asio::use_future));
    return status;
}
