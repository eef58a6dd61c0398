// list_and_call_client: connects to an MCP server of either era (a stdio child or an HTTP URL), lists its
// tools, calls one with JSON arguments and prints "era ERA VERSION", "tool NAME" per tool, then "result "
// and the result's JSON (or text). Errors go to stderr: exit 1, or 2 for a usage error. For example:
//     list_and_call_client --era modern --answer Ada greet '{"greeting":"Hi"}' -- ./asking_server
#include <duet/client/client.hpp>
#include <duet/client/elicitation_form.hpp>
#include <duet/jsonrpc/json_text.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>

#include <cstddef>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

namespace json = boost::json;
namespace client = duet::client;

namespace {

int usage() {
    std::fprintf(stderr, "usage: list_and_call_client [--era legacy|modern|auto] [--answer TEXT] TOOL JSON "
                         "(URL | -- COMMAND [ARG...])\n");
    return 2;
}

int failure(char const* what, client::error const& e) {
    std::fprintf(stderr, "%s: %s\n", what, e.to_string().c_str());
    return 1;
}

// Answers a server's question: every string field of the form gets `answer`. A client declares the
// elicitation capability only when this handler is set; it answers a legacy server's elicitation/create
// request and a modern server's input_required round alike.
client::input_handlers::handler answer_with(std::string answer) {
    return [answer](json::object const& params) -> client::input_answer {
        json::object content;
        for (auto const& field : client::requested_fields(params))
            if (field.type == "string")
                content[field.name] = answer;
        std::fprintf(stderr, "answering the server's question with \"%s\"\n", answer.c_str());
        return json::object{{"action", "accept"}, {"content", std::move(content)}};
    };
}

// Everything a client does is a coroutine on one executor; each step returns a result to check.
boost::asio::awaitable<int> run(client::server_target target, client::client_options options,
                                std::string tool, json::object arguments) {
    auto connected = co_await client::client::async_connect(std::move(target), std::move(options));
    if (!connected)
        co_return failure("cannot connect", connected.error());
    auto c = *connected;
    std::printf("era %s %s\n", duet::protocol::to_string(c->era()).data(),
                duet::protocol::to_string(c->version()).data());
    auto tools = co_await c->async_list_tools(); // every page
    if (!tools)
        co_return failure("tools/list failed", tools.error());
    for (auto const& t : *tools)
        std::printf("tool %s\n", t.at("name").as_string().c_str());

    // Named arguments, not temporaries: GCC 12 may destroy a coroutine's temporary arguments too early.
    auto result = co_await c->async_call_tool(std::move(tool), std::move(arguments));
    co_await c->async_close();
    if (!result) // a protocol or transport failure; a tool's own failure is a result with isError
        co_return failure("tools/call failed", result.error());
    bool const failed = result->contains("isError") && result->at("isError") == true;
    std::string text;
    if (auto const* structured = result->if_contains("structuredContent"))
        text = duet::jsonrpc::to_json_text(*structured); // integral doubles as 12, not 1.2E1
    else
        for (auto const& item : result->at("content").as_array()) // at(): throws on a malformed result
            if (item.at("type").as_string() == "text")
                text += item.at("text").as_string();
    std::fprintf(failed ? stderr : stdout, "%s %s\n", failed ? "tool error" : "result", text.c_str());
    co_return failed ? 1 : 0;
}

} // namespace

int main(int argc, char** argv) {
    std::vector<std::string_view> const args(argv + 1, argv + argc);
    client::client_options options;
    std::size_t i = 0;
    for (; i + 1 < args.size() && (args[i] == "--era" || args[i] == "--answer"); i += 2) {
        if (args[i] == "--answer")
            options.inputs.elicitation = answer_with(std::string(args[i + 1]));
        else if (auto mode = client::parse_connect_mode(args[i + 1]))
            options.mode = *mode; // legacy: initialize; modern: stateless; auto: probe, then fall back
        else
            return usage();
    }
    boost::system::error_code ec;
    auto arguments = args.size() >= i + 3 ? json::parse(args[i + 1], ec) : json::value();
    if (ec || !arguments.is_object())
        return usage();
    client::server_target target;
    if (args.size() == i + 3)
        target = client::http_target{std::string(args[i + 2])};
    else if (args[i + 2] == "--") // the command, then its arguments
        target = client::stdio_target{std::string(args[i + 3]), {args.begin() + i + 4, args.end()}};
    else
        return usage();
    std::string tool(args[i]);  // named: see run()
    boost::asio::io_context io; // run by one thread: a client must not run its handlers concurrently
    auto done = boost::asio::co_spawn(
        io, run(std::move(target), std::move(options), std::move(tool), std::move(arguments.get_object())),
        boost::asio::use_future);
    io.run();
    try {
        return done.get();
    } catch (std::exception const& e) { // what the coroutine threw: a malformed result, out of memory
        std::fprintf(stderr, "list_and_call_client: %s\n", e.what());
        return 1;
    }
}
