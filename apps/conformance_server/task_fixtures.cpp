#include <duet/protocol/errors.hpp>
#include <duet/server/content.hpp>

#include "fixtures.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>

namespace duet::conformance {

namespace json = boost::json;
using namespace duet::server;
using boost::asio::awaitable;
using protocol::task_support;

namespace {

// Named, not written at each call: no temporary goes to a coroutine (README, GCC 12).
constexpr std::chrono::milliseconds about_a_second{1000};
constexpr std::chrono::milliseconds a_moment{300};

/// Sleeps `ms` in short steps, so a cancelled task stops soon; false when it was cancelled.
awaitable<bool> async_work_for(std::chrono::milliseconds ms, request_context& ctx) {
    boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
    auto const end = std::chrono::steady_clock::now() + ms;
    while (!ctx.cancelled() && std::chrono::steady_clock::now() < end) {
        timer.expires_after(std::min<std::chrono::steady_clock::duration>(
            std::chrono::milliseconds(50), end - std::chrono::steady_clock::now()));
        co_await timer.async_wait(boost::asio::use_awaitable);
    }
    co_return !ctx.cancelled();
}

json::object schema(std::initializer_list<std::pair<std::string_view, std::string_view>> fields) {
    json::object properties;
    for (auto const& [name, type] : fields)
        properties[name] = json::object{{"type", type}};
    return {{"type", "object"}, {"properties", std::move(properties)}};
}

input_request ask(std::string key, std::string_view message, std::string_view field, std::string_view type) {
    return {std::move(key), "elicitation/create",
            json::object{{"message", message},
                         {"requestedSchema",
                          {{"type", "object"},
                           {"properties", {{field, {{"type", type}}}}},
                           {"required", json::array{field}}}}}};
}

std::string string_arg(json::object const& args, std::string_view key, std::string_view fallback) {
    auto const* v = args.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string(fallback);
}

} // namespace

void add_task_fixtures(server::server& srv) {
    srv.add_tool(tool{.name = "greet",
                      .description = "Greets by name, at once (never a task)",
                      .input_schema = schema({{"name", "string"}})},
                 [](json::object const& args, request_context&) {
                     return tool_result::text("Hello, " + string_arg(args, "name", "World") + "!");
                 });

    // A task once it has run 200 ms: `seconds: 0` answers at once (SEP-2663's immediate-result shortcut).
    srv.add_tool(tool{.name = "slow_compute",
                      .description = "Works for `seconds` seconds, then answers; a task when it takes long",
                      .input_schema = schema({{"seconds", "number"}, {"label", "string"}}),
                      .tasks = task_support::optional,
                      .task_after = std::chrono::milliseconds(200)},
                 [](json::object const& args, request_context& ctx) -> awaitable<tool_result> {
                     double seconds = 0;
                     if (auto const* s = args.if_contains("seconds"); s && s->is_number())
                         seconds = std::clamp(s->to_number<double>(), 0.0, 3600.0);
                     auto const label = string_arg(args, "label", "compute");
                     auto const ms = std::chrono::milliseconds(static_cast<long>(seconds * 1000));
                     for (long done = 0; done < ms.count() && !ctx.cancelled(); done += 500) {
                         ctx.report_progress(static_cast<double>(done), static_cast<double>(ms.count()),
                                             "computing " + label);
                         auto const step =
                             std::min(std::chrono::milliseconds(500), ms - std::chrono::milliseconds(done));
                         co_await async_work_for(step, ctx);
                     }
                     co_return tool_result::text("Computed " + label + " in " + std::to_string(seconds) +
                                                 " s");
                 });

    // `required`: a client that cannot follow a task is refused before the handler runs.
    srv.add_tool(tool{.name = "failing_job",
                      .description = "Works about a second, then reports a tool error (a completed task)",
                      .input_schema = no_arguments(),
                      .tasks = task_support::required},
                 [](json::object const&, request_context& ctx) -> awaitable<tool_result> {
                     co_await async_work_for(about_a_second, ctx);
                     co_return tool_result::error("The job failed: its input could not be processed");
                 });

    srv.add_tool(tool{.name = "protocol_error_job",
                      .description = "Fails with a JSON-RPC error (a failed task)",
                      .input_schema = no_arguments(),
                      .tasks = task_support::optional},
                 [](json::object const&, request_context& ctx) -> awaitable<tool_result> {
                     co_await async_work_for(a_moment, ctx);
                     throw protocol_error(protocol::make_error(protocol::errc::internal_error,
                                                               "protocol_error_job failed on purpose"));
                 });

    srv.add_tool(tool{.name = "confirm_delete",
                      .description = "Asks the user to confirm, then deletes (pretends to) `filename`",
                      .input_schema = schema({{"filename", "string"}}),
                      .tasks = task_support::optional},
                 [](json::object const& args, request_context& ctx) -> awaitable<tool_result> {
                     auto const file = string_arg(args, "filename", "the file");
                     auto question = ask("confirm", "Delete " + file + "?", "confirm", "boolean");
                     auto answer = co_await ctx.async_input(std::move(question));
                     if (!answer)
                         co_return tool_result::error("No answer: " + answer.error().to_string());
                     auto const& o = answer->as_object();
                     bool const yes = o.at("action").as_string() == "accept";
                     co_return tool_result::text(yes ? "Deleted " + file : "Kept " + file);
                 });

    srv.add_tool(tool{.name = "multi_input",
                      .description = "Asks two questions at once, then answers with both",
                      .input_schema = no_arguments(),
                      .tasks = task_support::optional},
                 [](json::object const&, request_context& ctx) -> awaitable<tool_result> {
                     std::vector<input_request> questions;
                     questions.push_back(ask("name", "Your name?", "name", "string"));
                     questions.push_back(ask("confirm", "Go on?", "confirm", "boolean"));
                     auto answers = co_await ctx.async_inputs(std::move(questions));
                     std::string text;
                     for (auto const& a : answers)
                         text +=
                             (text.empty() ? "" : "; ") + (a ? describe_answer(*a) : a.error().to_string());
                     co_return tool_result::text("Answers: " + text);
                 });

    // Gathers the name through the request's own rounds, then goes on as a task (SEP-2663 with SEP-2322):
    // its task_after is long, so only async_become_task() makes it one.
    srv.add_tool(tool{.name = "test_tool_with_task",
                      .description = "Asks for a name, then greets it as a task",
                      .input_schema = no_arguments(),
                      .tasks = task_support::required,
                      .task_after = std::chrono::minutes(5)},
                 [](json::object const&, request_context& ctx) -> awaitable<tool_result> {
                     auto question = ask("user_name", "Your name?", "name", "string");
                     auto answer = co_await ctx.async_input(std::move(question));
                     if (!answer)
                         co_return tool_result::error("No answer: " + answer.error().to_string());
                     auto const* content = answer->as_object().if_contains("content");
                     auto const* name =
                         content && content->is_object() ? content->as_object().if_contains("name") : nullptr;
                     std::string const who =
                         name && name->is_string() ? std::string(name->get_string()) : "stranger";
                     (void)co_await ctx.async_become_task();
                     co_await async_work_for(a_moment, ctx);
                     co_return tool_result::text("Hello, " + who + "!");
                 });
}

} // namespace duet::conformance
