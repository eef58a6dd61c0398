// Where a plain (non-coroutine) handler runs (duet/server/definitions.hpp, plain_run): on the blocking pool
// by default, so a slow one never stalls the connection; on the thread that serves the request when the
// definition opts in with plain_run::inline_on_io. The harness runs the connection's io_context on the test's
// own thread, so "inline" means the test's thread id and "pool" any other.
#include <duet/server/server.hpp>

#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "unit/server/harness.hpp"
#include "unit/server/test_server.hpp"

#include <boost/describe/class.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>

namespace plain_run_test {
struct typed_args {
    int n = 0;
};
BOOST_DESCRIBE_STRUCT(typed_args, (), (n))
} // namespace plain_run_test

namespace {

namespace json = boost::json;
using namespace duet::test;
using duet::server::plain_run;
using duet::server::prompt;
using duet::server::prompt_arguments;
using duet::server::prompt_result;
using duet::server::read_result;
using duet::server::request_context;
using duet::server::resource;
using duet::server::resource_template;
using duet::server::server;
using duet::server::tool;
using duet::server::tool_result;
using duet::server::uri_variables;

// Registers one tool, one resource, one template and one prompt whose plain handlers record their thread.
struct recording_server {
    explicit recording_server(plain_run where) : srv(test_options()) {
        srv.add_tool(tool{.name = "where", .run_plain = where},
                     [this](json::object const&, request_context&) {
                         tool_thread = std::this_thread::get_id();
                         return tool_result::text("here");
                     });
        srv.add_resource(resource{.uri = "test://where", .name = "where", .run_plain = where},
                         [this](std::string const& uri, request_context&) {
                             resource_thread = std::this_thread::get_id();
                             read_result r;
                             r.contents.push_back(duet::server::text_resource_contents(uri, "here"));
                             return r;
                         });
        srv.add_resource_template(resource_template{.uri_template = "test://where/{x}",
                                                    .name = "where-template",
                                                    .run_plain = where},
                                  [this](std::string const& uri, uri_variables const&, request_context&) {
                                      template_thread = std::this_thread::get_id();
                                      read_result r;
                                      r.contents.push_back(duet::server::text_resource_contents(uri, "here"));
                                      return r;
                                  });
        srv.add_prompt(prompt{.name = "where", .run_plain = where},
                       [this](prompt_arguments const&, request_context&) {
                           prompt_thread = std::this_thread::get_id();
                           prompt_result r;
                           r.add("user", duet::server::text_content("here"));
                           return r;
                       });
    }

    // Calls each once on a modern request and once in a legacy session.
    void call_all(harness& h) {
        h.send(initialize_request(100, "2025-11-25"));
        h.response(100);
        int id = 1;
        for (bool modern : {true, false}) {
            auto request = [&](std::string method, json::object params) {
                auto const n = id++;
                h.send(modern ? modern_request(n, method, std::move(params))
                              : legacy_request(n, method, std::move(params)));
                return h.response(n);
            };
            EXPECT_EQ(first_text(result_of(request("tools/call", call_params("where")))), "here");
            EXPECT_TRUE(result_of(request("resources/read", {{"uri", "test://where"}})).contains("contents"));
            EXPECT_TRUE(
                result_of(request("resources/read", {{"uri", "test://where/1"}})).contains("contents"));
            EXPECT_TRUE(result_of(request("prompts/get", {{"name", "where"}})).contains("messages"));
        }
    }

    server srv;
    std::thread::id tool_thread;
    std::thread::id resource_thread;
    std::thread::id template_thread;
    std::thread::id prompt_thread;
};

TEST(PlainHandler, RunsOnTheBlockingPoolByDefault) {
    recording_server rec(plain_run::on_blocking_pool);
    harness h(rec.srv);
    rec.call_all(h);
    auto const here = std::this_thread::get_id();
    EXPECT_NE(rec.tool_thread, std::thread::id());
    EXPECT_NE(rec.tool_thread, here);
    EXPECT_NE(rec.resource_thread, here);
    EXPECT_NE(rec.template_thread, here);
    EXPECT_NE(rec.prompt_thread, here);
}

TEST(PlainHandler, MarkedInlineRunsOnTheThreadServingTheRequest) {
    recording_server rec(plain_run::inline_on_io);
    harness h(rec.srv);
    rec.call_all(h);
    auto const here = std::this_thread::get_id();
    EXPECT_EQ(rec.tool_thread, here);
    EXPECT_EQ(rec.resource_thread, here);
    EXPECT_EQ(rec.template_thread, here);
    EXPECT_EQ(rec.prompt_thread, here);
}

// An inline handler fails like any other: a sanitized -32603, and the connection goes on.
TEST(PlainHandler, InlineHandlerThatThrowsIsInternalErrorAndServingGoesOn) {
    server srv(test_options());
    srv.add_tool(tool{.name = "throws", .run_plain = plain_run::inline_on_io},
                 [](json::object const&, request_context&) -> tool_result {
                     throw std::runtime_error("db password is hunter2");
                 });
    srv.add_tool(tool{.name = "echo", .run_plain = plain_run::inline_on_io},
                 [](json::object const& args, request_context&) {
                     return tool_result::text(args.at("text").as_string());
                 });
    harness h(srv);
    h.send(modern_request(1, "tools/call", call_params("throws")));
    auto const r = h.response(1);
    expect_error(r, -32603);
    EXPECT_EQ(json::serialize(r).find("hunter2"), std::string::npos) << r;
    h.send(modern_request(2, "tools/call", call_params("echo", {{"text", "alive"}})));
    EXPECT_EQ(first_text(result_of(h.response(2))), "alive");
}

// Typed tools honour the setting too (their plain callables go through the same registration).
TEST(PlainHandler, TypedToolMarkedInlineRunsOnTheThreadServingTheRequest) {
    server srv(test_options());
    std::thread::id seen;
    srv.add_typed_tool<plain_run_test::typed_args>(
        tool{.name = "typed", .run_plain = plain_run::inline_on_io},
        [&seen](plain_run_test::typed_args const&, request_context&) {
            seen = std::this_thread::get_id();
            return std::string("typed");
        });
    harness h(srv);
    h.send(modern_request(1, "tools/call", call_params("typed", {{"n", 1}})));
    EXPECT_EQ(first_text(result_of(h.response(1))), "typed");
    EXPECT_EQ(seen, std::this_thread::get_id());
}

} // namespace
