// bench_fanout_server: the server `make bench` measures the list_changed fan-out and listen-stream memory on.
//
// `duet serve` cannot change its tools at runtime from outside, so this is Duet's library with the defaults
// of `duet serve` (http_options{}, loopback, port chosen by --port) and two tools: `echo`, and `touch_tools`,
// which adds or removes a tool named `extra` and so announces notifications/tools/list_changed to every
// listener. The load generator opens its listen streams, then calls `touch_tools` and times the last stream's
// notification. The first stdout line is the endpoint URL, as with `duet serve`.
#include <duet/server/content.hpp>
#include <duet/server/server.hpp>
#include <duet/transport/http_server.hpp>

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

} // namespace

int main(int argc, char** argv) {
    duet::transport::http_options http;
    if (argc == 3 && std::string(argv[1]) == "--port")
        http.port = static_cast<std::uint16_t>(std::atoi(argv[2]));
    else if (argc != 1) {
        std::fputs("usage: bench_fanout_server [--port P]\n", stderr);
        return 2;
    }

    server srv({.info = {.name = "duet-bench-fanout", .version = "0.1.0"}});
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

    duet::transport::http_server server(srv, http);
    if (auto ec = server.listen()) {
        std::fprintf(stderr, "bench_fanout_server: cannot listen: %s\n", ec.message().c_str());
        return 1;
    }
    std::printf("%s\n", server.url().c_str());
    std::fflush(stdout);
    server.run();
    return 0;
}
