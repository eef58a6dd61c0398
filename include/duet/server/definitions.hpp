/// @file duet/server/definitions.hpp
///
/// The things a server offers, each declared once and served in both eras: tools, resources, resource
/// templates and prompts. Fields map one-to-one to the wire (DIGEST §12); empty optional fields are left out.
///
/// Every handler that serves a request (tools/call, prompts/get, resources/read) is a coroutine, so it can
/// ask the client for input with request_context::async_input in both eras. server::add_tool / add_prompt /
/// add_resource / add_resource_template also take plain functions and run them off the I/O threads, unless
/// the definition says the function is cheap enough to run where the request is served (`run_plain`).
///
///     server.add_tool(tool{.name = "echo", .description = "Echoes its text",
///                          .input_schema = {{"type","object"}, {"properties", {{"text",
///                          {{"type","string"}}}}}}, .handler = echo});
///     server.add_prompt(prompt{.name = "intro"}, [](prompt_arguments const& args, request_context& ctx)
///                                                    -> boost::asio::awaitable<prompt_result> { ... });
#pragma once

#include <duet/protocol/param_headers.hpp>
#include <duet/protocol/shaping.hpp>
#include <duet/protocol/tasks.hpp>
#include <duet/server/content.hpp>
#include <duet/server/protocol_error.hpp>
#include <duet/server/request_context.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace duet::server {

/// Where server::add_tool / add_resource / add_resource_template / add_prompt run a plain (non-coroutine)
/// handler. Coroutine handlers always run on the connection's executor; this setting does not apply to them.
enum class plain_run : std::uint8_t {
    /// On the server's blocking pool (server_options::blocking_threads), then back to the connection: any
    /// function is safe, however long it takes or blocks, at the price of two thread hand-offs per call.
    on_blocking_pool,
    /// On the I/O thread serving the request, with no hand-off: for functions that never block (no file or
    /// network I/O, no sleeping, no waiting on a lock others hold long) and return within microseconds, such
    /// as computing a result from the arguments. A slow one stalls every request that thread serves.
    inline_on_io,
};

/// A coroutine tool handler. Plain functions are accepted by server::add_tool and run off the I/O threads.
using tool_handler = std::function<boost::asio::awaitable<tool_result>(boost::json::object const& arguments,
                                                                       request_context& ctx)>;
/// A plain tool handler the server may call without a coroutine (see tool::direct).
using direct_tool_handler =
    std::function<tool_result(boost::json::object const& arguments, request_context& ctx)>;

struct tool {
    std::string name;
    std::string title;
    std::string description;
    boost::json::object input_schema{{"type", "object"}};
    std::optional<boost::json::object> output_schema;
    boost::json::object annotations;
    boost::json::array icons;
    boost::json::object meta;
    tool_handler handler;
    plain_run run_plain = plain_run::on_blocking_pool; ///< where a plain handler given to add_tool runs
    /// The same function as `handler`, callable without a coroutine: server::add_tool sets it for a plain
    /// function with plain_run::inline_on_io, and a call answered right away (no frame, no suspension) uses
    /// it instead of `handler`. Leave it empty unless it does exactly what `handler` does and never blocks.
    direct_tool_handler direct;
    /// Scopes a caller's bearer token must hold to call it, where the transport checks tokens
    /// (http_options::authorization): without them the call is refused with 403 `insufficient_scope`.
    std::vector<std::string> required_scopes;
    /// Whether a call may run as a task: the client gets a task handle at once (or after `task_after`) and
    /// fetches the result later (2025-11-25 core tasks, or the modern tasks extension; server.hpp's "Tasks").
    /// `required` refuses a client that cannot follow a task.
    protocol::task_support tasks = protocol::task_support::forbidden;
    /// A modern call that may become a task runs as a plain request this long first: done by then, it answers
    /// as usual; still running, it becomes a task and the handler goes on. Zero: a task from the start. A
    /// 2025-11-25 client that asks for a task gets one at once. The handler may also become a task sooner
    /// (request_context::async_become_task).
    std::chrono::milliseconds task_after{0};

    /// The Tool object as listed (newest shape).
    [[nodiscard]] boost::json::object to_json() const;
};

/// Template variables by name, as matched from a URI.
using uri_variables = std::map<std::string, std::string>;
/// Prompt arguments by name, as the client sent them.
using prompt_arguments = std::map<std::string, std::string>;

/// A coroutine resources/read handler for one resource. Plain functions are accepted by server::add_resource
/// and run off the I/O threads. An empty `contents` is a not-found error.
using resource_handler =
    std::function<boost::asio::awaitable<read_result>(std::string const& uri, request_context& ctx)>;
/// A coroutine resources/read handler for the URIs a template matches; `vars` holds the matched variables.
using resource_template_handler = std::function<boost::asio::awaitable<read_result>(
    std::string const& uri, uri_variables const& vars, request_context& ctx)>;
/// A coroutine prompts/get handler. Plain functions are accepted by server::add_prompt and run off the I/O
/// threads.
using prompt_handler = std::function<boost::asio::awaitable<prompt_result>(prompt_arguments const& arguments,
                                                                           request_context& ctx)>;
/// Completion candidates for one argument: (argument name, partial value, other arguments already chosen).
using completion_handler =
    std::function<std::vector<std::string>(std::string const& argument, std::string const& value,
                                           std::map<std::string, std::string> const& context)>;

struct resource {
    std::string uri;
    std::string name;
    std::string title;
    std::string description;
    std::string mime_type;
    std::optional<std::int64_t> size;
    boost::json::object annotations;
    boost::json::array icons;
    std::optional<protocol::cache_hints> hints; ///< resources/read cache hints; server default when empty
    resource_handler read;
    plain_run run_plain = plain_run::on_blocking_pool; ///< where a plain handler given to add_resource runs
    std::vector<std::string> required_scopes;          ///< to read it (see tool::required_scopes)

    [[nodiscard]] boost::json::object to_json() const;
};

struct resource_template {
    std::string uri_template; ///< RFC 6570 level 1-2: `{var}` matches one path segment, `{+var}` any text
    std::string name;
    std::string title;
    std::string description;
    std::string mime_type;
    boost::json::object annotations;
    boost::json::array icons;
    std::optional<protocol::cache_hints> hints;
    resource_template_handler read;
    completion_handler complete; ///< completes template variables (completion/complete with ref/resource)
    plain_run run_plain =
        plain_run::on_blocking_pool;          ///< where a plain handler given to add_resource_template runs
    std::vector<std::string> required_scopes; ///< to read what it matches (see tool::required_scopes)

    [[nodiscard]] boost::json::object to_json() const;
};

struct prompt_argument {
    std::string name;
    std::string title;
    std::string description;
    bool required = false;
};

struct prompt {
    std::string name;
    std::string title;
    std::string description;
    std::vector<prompt_argument> arguments;
    boost::json::array icons;
    prompt_handler get;
    completion_handler complete; ///< completes argument values (completion/complete with ref/prompt)
    plain_run run_plain = plain_run::on_blocking_pool; ///< where a plain handler given to add_prompt runs
    std::vector<std::string> required_scopes;          ///< to get it (see tool::required_scopes)

    [[nodiscard]] boost::json::object to_json() const;
};

} // namespace duet::server
