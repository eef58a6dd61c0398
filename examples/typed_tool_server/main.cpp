// typed_tool_server: an MCP server with one typed tool, for clients of both protocol eras.
//
//     typed_tool_server                 # stdio: newline-delimited JSON-RPC on stdin/stdout
//     typed_tool_server --http PORT     # Streamable HTTP on 127.0.0.1:PORT/mcp (0: a free port); the first
//                                       # line on stdout is the URL
//
// Everything else this program says goes to stderr: on stdio, stdout carries MCP messages only.
#include <duet/server/server.hpp>
#include <duet/transport/http_server.hpp>
#include <duet/transport/stdio.hpp>

#include <boost/describe/class.hpp>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

namespace {

// The tool's arguments. Boost.Describe lets the library turn the struct into the tool's inputSchema and the
// client's JSON into the struct: every member is a property, required unless it is a std::optional. Arguments
// that do not fit come back to the client as a tool error; the handler below never sees them.
struct measure_args {
    double width;
    double height;
    std::optional<std::string> unit;
};
BOOST_DESCRIBE_STRUCT(measure_args, (), (width, height, unit))

// What the tool returns: described too, so it becomes the tool's outputSchema and every result's
// structuredContent (plus the same JSON as text, for clients that only read text).
struct measurement {
    double area;
    double perimeter;
    std::string unit;
};
BOOST_DESCRIBE_STRUCT(measurement, (), (area, perimeter, unit))

int usage() {
    std::fprintf(stderr, "usage: typed_tool_server [--http PORT]\n");
    return 2;
}

} // namespace

int main(int argc, char** argv) {
    // One server object serves both eras: legacy clients (initialize, sessions) and modern ones (stateless,
    // the version in every request), deciding per request.
    duet::server::server srv({.info = {.name = "typed-tool-server", .version = "1.0.0"}});

    srv.add_typed_tool<measure_args>(
        {.name = "measure",
         .title = "Measure a rectangle",
         .description = "The area and perimeter of a width x height rectangle",
         // The schema comes from measure_args; only the descriptions of its members are added here.
         .input_schema = {{"properties",
                           {{"width", {{"description", "Width of the rectangle"}}},
                            {"height", {{"description", "Height of the rectangle"}}},
                            {"unit", {{"description", "Unit of length (default m)"}}}}}},
         // Arithmetic never blocks, so it runs where the request is served instead of on the server's
         // thread pool (the default, which any slow or blocking function needs).
         .run_plain = duet::server::plain_run::inline_on_io},
        [](measure_args const& in, duet::server::request_context&) {
            return measurement{in.width * in.height, 2 * (in.width + in.height), in.unit.value_or("m")};
        });

    if (argc == 1)
        return duet::transport::serve_stdio(srv); // until end of input

    std::uint16_t port = 0;
    if (argc != 3 || std::strcmp(argv[1], "--http") != 0)
        return usage();
    auto const* end = argv[2] + std::strlen(argv[2]);
    if (auto [at, ec] = std::from_chars(argv[2], end, port); ec != std::errc{} || at != end)
        return usage();

    // Binds 127.0.0.1 only (the default host): reaching beyond loopback is a decision to take on purpose,
    // with allowed_hosts and authorization (see http_options).
    duet::transport::http_server http(srv, {.port = port});
    if (auto ec = http.listen()) {
        std::fprintf(stderr, "typed_tool_server: cannot listen on 127.0.0.1:%s: %s\n", argv[2],
                     ec.message().c_str());
        return 1;
    }
    std::printf("%s\n", http.url().c_str()); // the URL first, for whoever started us to read
    std::fflush(stdout);
    std::fprintf(stderr, "typed_tool_server: serving %s; Ctrl-C stops\n", http.url().c_str());
    http.run(); // serves until SIGINT or SIGTERM, then lets requests in flight finish
    return 0;
}
