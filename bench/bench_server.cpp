// bench_server: a server built on Duet's library for what `duet serve` cannot show.
//
//     bench_server [--port P | --stdio] [--io-threads N] [--store redis://HOST:PORT [--store-prefix P]]
//
// It offers two tools: `echo`, written as a coroutine (so it runs on the I/O thread, where the demo server's
// plain `echo` hops to the blocking pool and back), and `touch_tools`, which adds or removes a tool named
// `extra` and so announces notifications/tools/list_changed to every listener. `make bench` uses it to time
// the list_changed fan-out to many listen streams (the demo's tools cannot change from outside) and, as a
// diagnostic row, to show what the thread hop of a plain handler costs. HTTP uses `duet serve`'s defaults
// (http_options{}, loopback); the first stdout line is the endpoint URL, as with `duet serve`. With --store,
// several of them share announcements and legacy sessions through Redis, as `duet serve --store` does (the
// scale-out rows).
#include <duet/server/content.hpp>
#include <duet/server/server.hpp>
#include <duet/transport/http_server.hpp>
#include <duet/transport/stdio.hpp>
#include <duet/version.hpp>

#include "common/store_flags.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

namespace json = boost::json;
using namespace duet::server;

json::object text_schema() {
    return {{"type", "object"},
            {"properties", {{"text", {{"type", "string"}}}}},
            {"required", json::array{"text"}}};
}

int usage() {
    std::fputs("usage: bench_server [--port P | --stdio] [--io-threads N] [--store URL [--store-prefix P]]\n",
               stderr);
    return 2;
}

} // namespace

int main(int argc, char** argv) {
    // First: every Redis object made below ends while its thread still runs (store_flags.hpp).
    duet::apps::store_runtime store_thread;
    duet::transport::http_options http;
    duet::transport::stdio_options stdio;
    bool use_stdio = false;
    duet::apps::store_flags store;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "--stdio")
            use_stdio = true;
        else if (arg == "--port" && i + 1 < argc)
            http.port = static_cast<std::uint16_t>(std::atoi(argv[++i]));
        else if (arg == "--store" && i + 1 < argc)
            store.url = argv[++i];
        else if (arg == "--store-prefix" && i + 1 < argc)
            store.prefix = argv[++i];
        else if (arg == "--io-threads" && i + 1 < argc)
            http.io_threads = stdio.io_threads = static_cast<std::size_t>(std::atoi(argv[++i]));
        else
            return usage();
    }

    server_options options{.info = {.name = "duet-bench", .version = std::string(duet::version)}};
    if (auto why = duet::apps::apply_store_flags(store, store_thread, options, http)) {
        std::fprintf(stderr, "bench_server: %s\n", why->text.c_str());
        return why->exit_code;
    }
    server srv(options);
    if (auto why = duet::apps::await_store(options)) {
        std::fprintf(stderr, "bench_server: %s\n", why->text.c_str());
        return why->exit_code;
    }
    srv.add_tool(tool{.name = "echo", .input_schema = text_schema()},
                 [](json::object const& args, request_context&) -> boost::asio::awaitable<tool_result> {
                     co_return tool_result::text(args.at("text").as_string());
                 });
    std::atomic<bool> extra{false};
    srv.add_tool(
        tool{.name = "touch_tools", .input_schema = {{"type", "object"}}},
        [&srv, &extra](json::object const&, request_context&) -> boost::asio::awaitable<tool_result> {
            if (extra.exchange(!extra.load()))
                srv.remove_tool("extra");
            else
                srv.add_tool(
                    tool{.name = "extra", .input_schema = text_schema()},
                    [](json::object const&, request_context&) -> boost::asio::awaitable<tool_result> {
                        co_return tool_result::text("extra");
                    });
            co_return tool_result::text("changed");
        });

    if (use_stdio)
        return duet::transport::serve_stdio(srv, stdio);

    duet::transport::http_server server(srv, http);
    if (auto ec = server.listen()) {
        std::fprintf(stderr, "bench_server: cannot listen: %s\n", ec.message().c_str());
        return 1;
    }
    std::printf("%s\n", server.url().c_str());
    std::fflush(stdout);
    server.run();
    return 0;
}
