#include <duet/server/content.hpp>

#include "fixtures.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>

namespace duet::conformance {

namespace json = boost::json;
using namespace duet::server;
using boost::asio::awaitable;

namespace {

json::object one_string_argument(std::string_view name, std::string_view description) {
    return {{"type", "object"},
            {"properties", {{name, {{"type", "string"}, {"description", description}}}}},
            {"required", json::array{name}}};
}

// Named, not written at each call: no temporary goes to a coroutine (README, GCC 12).
constexpr std::chrono::milliseconds between_steps{50};
constexpr std::chrono::milliseconds before_resumption{200};

awaitable<void> pause(std::chrono::milliseconds d) {
    boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
    timer.expires_after(d);
    co_await timer.async_wait(boost::asio::use_awaitable);
}

std::string string_argument(json::object const& args, std::string_view name) {
    auto const* v = args.if_contains(name);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

/// Asks one question and renders the outcome as the tool's text; a failure is an isError result.
awaitable<tool_result> ask_and_report(request_context& ctx, input_request question, std::string prefix) {
    auto answer = co_await ctx.async_input(std::move(question));
    if (!answer)
        co_return tool_result::error("The client gave no answer: " + answer.error().to_string());
    co_return tool_result::text(prefix + describe_answer(*answer));
}

json::object elicitation(std::string_view message, json::object requested_schema) {
    return {{"message", message}, {"requestedSchema", std::move(requested_schema)}};
}

json::object sep1034_schema() {
    return {
        {"type", "object"},
        {"properties",
         {{"name", {{"type", "string"}, {"description", "User name"}, {"default", "John Doe"}}},
          {"age", {{"type", "integer"}, {"description", "User age"}, {"default", 30}}},
          {"score", {{"type", "number"}, {"description", "User score"}, {"default", 95.5}}},
          {"status",
           {{"type", "string"},
            {"description", "User status"},
            {"enum", json::array{"active", "inactive", "pending"}},
            {"default", "active"}}},
          {"verified", {{"type", "boolean"}, {"description", "Verification status"}, {"default", true}}}}},
        {"required", json::array{}}};
}

json::object titled(std::string_view value, std::string_view title) {
    return {{"const", value}, {"title", title}};
}

json::object sep1330_schema() {
    json::array const options{"option1", "option2", "option3"};
    json::array const titled_options{titled("value1", "First Option"), titled("value2", "Second Option"),
                                     titled("value3", "Third Option")};
    return {
        {"type", "object"},
        {"properties",
         {{"untitledSingle", {{"type", "string"}, {"description", "Pick one"}, {"enum", options}}},
          {"titledSingle", {{"type", "string"}, {"description", "Pick one"}, {"oneOf", titled_options}}},
          {"legacyEnum",
           {{"type", "string"},
            {"description", "Pick one (legacy enumNames)"},
            {"enum", options},
            {"enumNames", json::array{"Option One", "Option Two", "Option Three"}}}},
          {"untitledMulti",
           {{"type", "array"},
            {"description", "Pick several"},
            {"items", {{"type", "string"}, {"enum", options}}}}},
          {"titledMulti",
           {{"type", "array"}, {"description", "Pick several"}, {"items", {{"anyOf", titled_options}}}}}}},
        {"required", json::array{}}};
}

} // namespace

void add_interaction_tools(server::server& srv) {
    srv.add_tool(tool{.name = "test_tool_with_logging",
                      .description = "Logs three messages while it runs",
                      .input_schema = no_arguments()},
                 [](json::object const&, request_context& ctx) -> awaitable<tool_result> {
                     for (char const* step :
                          {"Tool execution started", "Tool processing data", "Tool execution completed"}) {
                         ctx.log(protocol::log_level::info, json::string(step), "conformance");
                         co_await pause(between_steps);
                     }
                     co_return tool_result::text("Tool with logging executed successfully");
                 });

    srv.add_tool(tool{.name = "test_tool_with_progress",
                      .description = "Reports progress 0, 50 and 100 of 100",
                      .input_schema = no_arguments()},
                 [](json::object const&, request_context& ctx) -> awaitable<tool_result> {
                     for (double step : {0.0, 50.0, 100.0}) {
                         ctx.report_progress(step, 100.0);
                         co_await pause(between_steps);
                     }
                     co_return tool_result::text("Tool with progress executed successfully");
                 });

    srv.add_tool(tool{.name = "test_sampling",
                      .description = "Asks the client's model to answer a prompt",
                      .input_schema = one_string_argument("prompt", "What to ask the model")},
                 [](json::object const& args, request_context& ctx) -> awaitable<tool_result> {
                     json::object params{
                         {"messages",
                          json::array{json::object{
                              {"role", "user"}, {"content", text_content(string_argument(args, "prompt"))}}}},
                         {"maxTokens", 100}};
                     input_request question{"sample_request", "sampling/createMessage", std::move(params)};
                     std::string const prefix = "LLM response: ";
                     co_return co_await ask_and_report(ctx, std::move(question), prefix);
                 });

    srv.add_tool(tool{.name = "test_elicitation",
                      .description = "Asks the user for a username and an email address",
                      .input_schema = one_string_argument("message", "What to tell the user")},
                 [](json::object const& args, request_context& ctx) -> awaitable<tool_result> {
                     json::object schema{
                         {"type", "object"},
                         {"properties",
                          {{"username", {{"type", "string"}, {"description", "User's response"}}},
                           {"email", {{"type", "string"}, {"description", "User's email address"}}}}},
                         {"required", json::array{"username", "email"}}};
                     input_request question{"user_info", "elicitation/create",
                                            elicitation(string_argument(args, "message"), std::move(schema))};
                     std::string const prefix = "User response: ";
                     co_return co_await ask_and_report(ctx, std::move(question), prefix);
                 });

    srv.add_tool(
        tool{.name = "test_elicitation_sep1034_defaults",
             .description = "Elicits a form whose fields all carry defaults (SEP-1034)",
             .input_schema = no_arguments()},
        [](json::object const&, request_context& ctx) -> awaitable<tool_result> {
            input_request question{
                "defaults", "elicitation/create",
                elicitation("Please review and update the form fields with defaults", sep1034_schema())};
            std::string const prefix = "Elicitation completed: ";
            co_return co_await ask_and_report(ctx, std::move(question), prefix);
        });

    srv.add_tool(tool{.name = "test_elicitation_sep1330_enums",
                      .description = "Elicits every enum form of SEP-1330",
                      .input_schema = no_arguments()},
                 [](json::object const&, request_context& ctx) -> awaitable<tool_result> {
                     input_request question{
                         "enums", "elicitation/create",
                         elicitation("Please select options from the enum fields", sep1330_schema())};
                     std::string const prefix = "Elicitation completed: ";
                     co_return co_await ask_and_report(ctx, std::move(question), prefix);
                 });

    // SEP-1699 polling: the POST stream ends mid-call and the result arrives on the client's resumption.
    srv.add_tool(
        tool{.name = "test_reconnection",
             .description = "Closes its SSE stream mid-call; the result arrives after the client resumes",
             .input_schema = no_arguments()},
        [](json::object const&, request_context& ctx) -> awaitable<tool_result> {
            co_await pause(between_steps);
            ctx.close_sse_stream();
            co_await pause(before_resumption);
            co_return tool_result::text("Reconnection test completed successfully");
        });

    // 2026 diagnostics (server-stateless scenario).
    srv.add_tool(
        tool{.name = "test_missing_capability",
             .description = "Needs the sampling capability; without it the request fails with -32021",
             .input_schema = no_arguments()},
        [](json::object const&, request_context& ctx) {
            ctx.require(protocol::client_capability::sampling);
            return tool_result::text("The client declared sampling");
        });

    srv.add_tool(tool{.name = "test_streaming_elicitation",
                      .description = "Streams progress, then asks for a name the era's way",
                      .input_schema = no_arguments()},
                 [](json::object const&, request_context& ctx) -> awaitable<tool_result> {
                     ctx.report_progress(1, 2, "asking");
                     input_request question{
                         "user_name", "elicitation/create",
                         elicitation("What is your name?", {{"type", "object"},
                                                            {"properties", {{"name", {{"type", "string"}}}}},
                                                            {"required", json::array{"name"}}})};
                     std::string const prefix = "Answer: ";
                     co_return co_await ask_and_report(ctx, std::move(question), prefix);
                 });

    srv.add_tool(tool{.name = "test_logging_tool",
                      .description = "Logs one message (sent only when the request asks for logs)",
                      .input_schema = no_arguments()},
                 [](json::object const&, request_context& ctx) {
                     ctx.log(protocol::log_level::info, json::string("test_logging_tool ran"), "conformance");
                     return tool_result::text("Logged");
                 });

    // Re-registering an unchanged definition is a change announcement with a stable list.
    srv.add_tool(tool{.name = "test_trigger_tool_change",
                      .description = "Announces notifications/tools/list_changed",
                      .input_schema = no_arguments()},
                 [&srv](json::object const&, request_context&) {
                     srv.add_tool(simple_text_tool());
                     return tool_result::text("tools/list_changed sent");
                 });

    srv.add_tool(tool{.name = "test_trigger_prompt_change",
                      .description = "Announces notifications/prompts/list_changed",
                      .input_schema = no_arguments()},
                 [&srv](json::object const&, request_context&) {
                     srv.add_prompt(simple_prompt());
                     return tool_result::text("prompts/list_changed sent");
                 });
}

} // namespace duet::conformance
