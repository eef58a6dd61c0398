// asking_server: an MCP server (stdio) whose tool asks the user a question while it runs, written once for
// both protocol eras.
//
//     asking_server        # newline-delimited JSON-RPC on stdin/stdout; logs on stderr
//
// A legacy client (a session opened with initialize) gets a real elicitation/create request in the middle
// of the call. A modern client (stateless) gets an `input_required` result naming the question, and calls
// again with the answer. The tool's code is the same for both: ctx.async_input.
#include <duet/server/server.hpp>
#include <duet/transport/stdio.hpp>

#include <boost/asio/awaitable.hpp>

#include <string>
#include <utility>

namespace json = boost::json;
using duet::server::request_context;
using duet::server::tool_result;

namespace {

// The question: a form-mode elicitation asking for one string. `key` names it within the call; a modern
// client's answer comes back under it.
duet::server::input_request name_question() {
    return {.key = "name",
            .method = "elicitation/create",
            .params = json::object{{"message", "What is your name?"},
                                   {"requestedSchema",
                                    {{"type", "object"},
                                     {"properties", {{"name", {{"type", "string"}}}}},
                                     {"required", json::array{"name"}}}}}};
}

// A coroutine handler: only these may ask. For a modern client it may run twice: once up to async_input,
// which ends that run with the input_required result, then from the start again when the client retries
// with the answer. So do nothing before the question that must not happen twice.
boost::asio::awaitable<tool_result> greet(json::object const& args, request_context& ctx) {
    std::string greeting = "Hello";
    if (auto const* g = args.if_contains("greeting"); g && g->is_string())
        greeting = g->get_string();

    // Named, not a temporary: GCC 12 may destroy a temporary argument of a coroutine too early.
    auto question = name_question();
    auto answer = co_await ctx.async_input(std::move(question));
    if (!answer) // the client declared no elicitation capability, timed out, or went away
        co_return tool_result::error("Could not ask for a name: " + answer.error().to_string());

    // An ElicitResult: {"action": "accept" | "decline" | "cancel", "content": {...}}.
    auto const* result = answer->if_object();
    auto const* action = result ? result->if_contains("action") : nullptr;
    if (!action || !action->is_string() || action->get_string() != "accept")
        co_return tool_result::text("No name given, so no greeting");
    auto const* content = result->if_contains("content");
    auto const* name = content && content->is_object() ? content->get_object().if_contains("name") : nullptr;
    if (!name || !name->is_string())
        co_return tool_result::error("The answer carried no name");
    co_return tool_result::text(greeting + ", " + std::string(name->get_string()) + "!");
}

} // namespace

int main() {
    duet::server::server srv({.info = {.name = "asking-server", .version = "1.0.0"}});
    srv.add_tool(
        {.name = "greet",
         .description = "Asks the user's name, then greets them",
         .input_schema = {{"type", "object"},
                          {"properties",
                           {{"greeting", {{"type", "string"}, {"description", "Default: Hello"}}}}}}},
        greet);
    return duet::transport::serve_stdio(srv); // until end of input
}
