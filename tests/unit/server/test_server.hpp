// File: tests/unit/server/test_server.hpp
//
// Small servers for the in-process tests: a handful of tools (plain and coroutine, well-behaved and not), a
// resource, a template and a prompt, each registered the way an application would.
#pragma once

#include <duet/server/content.hpp>
#include <duet/server/definitions.hpp>
#include <duet/server/server.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/array.hpp>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

namespace duet::test {

inline constexpr char const* secret_detail = "db password is hunter2";

inline server::server_options test_options(std::size_t page_size = 100) {
    server::server_options o;
    o.info = {.name = "duet-demo", .version = "9.9.9"};
    o.page_size = page_size;
    return o;
}

inline server::tool plain_tool(std::string name) {
    return server::tool{
        .name = std::move(name),
        .input_schema = {{"type", "object"}, {"properties", {{"text", {{"type", "string"}}}}}}};
}

/// A tool named "ask" that asks the client roots/list in a legacy session: its text is "answered", or the
/// failure's description.
inline void add_roots_asking_tool(server::server& srv) {
    using namespace duet::server;
    srv.add_tool(plain_tool("ask"),
                 [](boost::json::object const&, request_context& ctx) -> boost::asio::awaitable<tool_result> {
                     // Named arguments: GCC 12 may destroy a coroutine's temporary arguments early
                     // (request_context.hpp).
                     std::string const method = "roots/list";
                     boost::json::value const params = boost::json::object{};
                     auto r = co_await ctx.async_request_client(method, params);
                     co_return r ? tool_result::text("answered") : tool_result::error(r.error().to_string());
                 });
}

/// echo (plain), until_cancelled (coroutine: progress once, then waits for cancellation), throws / throws_co
/// (std::runtime_error carrying a secret), refuses (protocol_error), one resource, one template, one prompt.
inline void add_test_features(server::server& srv) {
    using namespace duet::server;
    srv.add_tool(plain_tool("echo"), [](boost::json::object const& args, request_context&) {
        auto const* t = args.if_contains("text");
        return tool_result::text(t && t->is_string() ? std::string(t->get_string()) : std::string("(none)"));
    });
    srv.add_tool(plain_tool("until_cancelled"),
                 [](boost::json::object const&, request_context& ctx) -> boost::asio::awaitable<tool_result> {
                     ctx.report_progress(1);
                     boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
                     // Bounded: a test that forgets to cancel still ends.
                     for (int i = 0; i < 6000 && !ctx.cancelled(); ++i) {
                         timer.expires_after(std::chrono::milliseconds(10));
                         co_await timer.async_wait(boost::asio::use_awaitable);
                     }
                     co_return tool_result::text("stopped");
                 });
    srv.add_tool(plain_tool("throws"), [](boost::json::object const&, request_context&) -> tool_result {
        throw std::runtime_error(secret_detail);
    });
    srv.add_tool(plain_tool("throws_co"),
                 [](boost::json::object const&, request_context&) -> boost::asio::awaitable<tool_result> {
                     throw std::runtime_error(secret_detail);
                     co_return tool_result::text("unreachable");
                 });
    srv.add_tool(plain_tool("refuses"), [](boost::json::object const&, request_context&) -> tool_result {
        throw protocol_error(
            jsonrpc::error_object{-32602, "Widget out of range", boost::json::object{{"widget", 3}}});
    });
    srv.add_resource(resource{.uri = "test://doc", .name = "doc", .mime_type = "text/plain"},
                     [](std::string const& uri, request_context&) {
                         read_result r;
                         r.contents.push_back(text_resource_contents(uri, "doc"));
                         return r;
                     });
    srv.add_resource_template(resource_template{.uri_template = "test://items/{id}", .name = "item"},
                              [](std::string const& uri, uri_variables const& vars,
                                 request_context&) -> boost::asio::awaitable<read_result> {
                                  read_result r;
                                  r.contents.push_back(text_resource_contents(uri, "item " + vars.at("id")));
                                  co_return r;
                              });
    srv.add_prompt(prompt{.name = "greet"}, [](auto const&, request_context&) {
        prompt_result r;
        r.add("user", text_content("hello"));
        return r;
    });
}

} // namespace duet::test
