#include <duet/jsonrpc/json_text.hpp>
#include <duet/server/content.hpp>

#include "fixtures.hpp"

namespace duet::conformance {

namespace json = boost::json;
using namespace duet::server;
using boost::asio::awaitable;

namespace {

json::object form(std::string_view message, std::string_view field, std::string_view type) {
    return {{"message", message},
            {"requestedSchema",
             {{"type", "object"},
              {"properties", {{field, {{"type", type}}}}},
              {"required", json::array{field}}}}};
}

input_request ask_field(std::string key, std::string_view message, std::string_view field,
                        std::string_view type = "string") {
    return {std::move(key), "elicitation/create", form(message, field, type)};
}

input_request ask_model(std::string key, std::string_view question) {
    return {std::move(key), "sampling/createMessage",
            json::object{{"messages",
                          json::array{json::object{{"role", "user"}, {"content", text_content(question)}}}},
                         {"maxTokens", 100}}};
}

input_request ask_roots(std::string key) {
    return {std::move(key), "roots/list", json::object{}};
}

/// The accepted form field as text, or empty when the user declined or the field is missing.
std::string accepted_field(json::value const& answer, std::string_view field) {
    auto const* o = answer.if_object();
    auto const* action = o ? o->if_contains("action") : nullptr;
    if (!action || !action->is_string() || action->get_string() != "accept")
        return {};
    auto const* content = o->if_contains("content");
    auto const* v = content && content->is_object() ? content->get_object().if_contains(field) : nullptr;
    if (!v)
        return {};
    return v->is_string() ? std::string(v->get_string()) : jsonrpc::to_json_text(*v);
}

std::string model_text(json::value const& answer) {
    auto const* o = answer.if_object();
    auto const* content = o ? o->if_contains("content") : nullptr;
    auto const* block = content && content->is_array() && !content->get_array().empty()
                            ? &content->get_array().front()
                            : content;
    auto const* text = block && block->is_object() ? block->get_object().if_contains("text") : nullptr;
    return text && text->is_string() ? std::string(text->get_string()) : describe_answer(answer);
}

std::string roots_text(json::value const& answer) {
    auto const* o = answer.if_object();
    auto const* roots = o ? o->if_contains("roots") : nullptr;
    std::string out;
    if (roots && roots->is_array())
        for (auto const& r : roots->get_array())
            if (auto const* uri = r.is_object() ? r.get_object().if_contains("uri") : nullptr;
                uri && uri->is_string())
                out += (out.empty() ? "" : ", ") + std::string(uri->get_string());
    return out.empty() ? "(none)" : out;
}

tool_result failed(peer_result const& r) {
    return tool_result::error("No answer: " + r.error().to_string());
}

} // namespace

void add_input_required_fixtures(server::server& srv) {
    srv.add_tool(tool{.name = "test_input_required_result_elicitation",
                      .description = "Asks the user's name, then greets them",
                      .input_schema = no_arguments()},
                 [](json::object const&, request_context& ctx) -> awaitable<tool_result> {
                     auto question = ask_field("user_name", "What is your name?", "name");
                     auto answer = co_await ctx.async_input(std::move(question));
                     if (!answer)
                         co_return failed(answer);
                     co_return tool_result::text("Hello, " + accepted_field(*answer, "name") + "!");
                 });

    srv.add_tool(tool{.name = "test_input_required_result_sampling",
                      .description = "Asks the client's model a question",
                      .input_schema = no_arguments()},
                 [](json::object const&, request_context& ctx) -> awaitable<tool_result> {
                     auto question = ask_model("capital_question", "What is the capital of France?");
                     auto answer = co_await ctx.async_input(std::move(question));
                     if (!answer)
                         co_return failed(answer);
                     co_return tool_result::text("The model answered: " + model_text(*answer));
                 });

    srv.add_tool(tool{.name = "test_input_required_result_list_roots",
                      .description = "Asks the client for its roots",
                      .input_schema = no_arguments()},
                 [](json::object const&, request_context& ctx) -> awaitable<tool_result> {
                     auto question = ask_roots("client_roots");
                     auto answer = co_await ctx.async_input(std::move(question));
                     if (!answer)
                         co_return failed(answer);
                     co_return tool_result::text("Roots: " + roots_text(*answer));
                 });

    // The handler's own state travels in requestState: what it wrote before asking is there on the retry.
    srv.add_tool(tool{.name = "test_input_required_result_request_state",
                      .description = "Asks for confirmation, keeping its own state across the round",
                      .input_schema = no_arguments()},
                 [](json::object const&, request_context& ctx) -> awaitable<tool_result> {
                     auto& state = ctx.state();
                     bool const resumed = state.contains("asked");
                     state["asked"] = true;
                     auto question = ask_field("confirm", "Please confirm", "ok", "boolean");
                     auto answer = co_await ctx.async_input(std::move(question));
                     if (!answer)
                         co_return failed(answer);
                     if (ctx.era() == protocol::era::modern && !resumed)
                         co_return tool_result::error("state-missing: the retry carried no handler state");
                     co_return tool_result::text("state-ok: confirmed=" + accepted_field(*answer, "ok"));
                 });

    srv.add_tool(tool{.name = "test_input_required_result_multiple_inputs",
                      .description = "Asks for a name, a greeting from the model and the roots in one round",
                      .input_schema = no_arguments()},
                 [](json::object const&, request_context& ctx) -> awaitable<tool_result> {
                     std::vector<input_request> questions;
                     questions.push_back(ask_field("user_name", "What is your name?", "name"));
                     questions.push_back(ask_model("greeting", "Write a one-line greeting"));
                     questions.push_back(ask_roots("client_roots"));
                     auto answers = co_await ctx.async_inputs(std::move(questions));
                     for (auto const& a : answers)
                         if (!a)
                             co_return failed(a);
                     co_return tool_result::text("name=" + accepted_field(*answers[0], "name") +
                                                 "; greeting=" + model_text(*answers[1]) +
                                                 "; roots=" + roots_text(*answers[2]));
                 });

    srv.add_tool(tool{.name = "test_input_required_result_multi_round",
                      .description = "Asks for a name, then for a colour, one round each",
                      .input_schema = no_arguments()},
                 [](json::object const&, request_context& ctx) -> awaitable<tool_result> {
                     auto first = ask_field("user_name", "What is your name?", "name");
                     auto name = co_await ctx.async_input(std::move(first));
                     if (!name)
                         co_return failed(name);
                     auto second = ask_field("favorite_color", "What is your favourite colour?", "color");
                     auto color = co_await ctx.async_input(std::move(second));
                     if (!color)
                         co_return failed(color);
                     co_return tool_result::text(accepted_field(*name, "name") + " likes " +
                                                 accepted_field(*color, "color"));
                 });

    srv.add_tool(tool{.name = "test_input_required_result_tampered_state",
                      .description = "Asks for confirmation; a tampered requestState is refused",
                      .input_schema = no_arguments()},
                 [](json::object const&, request_context& ctx) -> awaitable<tool_result> {
                     ctx.state()["issued"] = true;
                     auto question = ask_field("confirm", "Please confirm", "ok", "boolean");
                     auto answer = co_await ctx.async_input(std::move(question));
                     if (!answer)
                         co_return failed(answer);
                     co_return tool_result::text("Confirmed: " + accepted_field(*answer, "ok"));
                 });

    // Questions the request's capabilities rule out are never asked; what is left is asked.
    srv.add_tool(tool{.name = "test_input_required_result_capabilities",
                      .description = "Asks only what the client declared it can answer",
                      .input_schema = no_arguments()},
                 [](json::object const&, request_context& ctx) -> awaitable<tool_result> {
                     std::vector<input_request> questions;
                     questions.push_back(ask_field("user_name", "What is your name?", "name"));
                     questions.push_back(ask_model("capital_question", "What is the capital of France?"));
                     auto answers = co_await ctx.async_inputs(std::move(questions));
                     std::string text;
                     text += answers[0] ? "name=" + accepted_field(*answers[0], "name") : "no elicitation";
                     text += answers[1] ? "; model=" + model_text(*answers[1]) : "; no sampling";
                     co_return tool_result::text(text);
                 });

    // prompts/get asks the same way as the tools: a round of its own, then the prompt's messages.
    srv.add_prompt(prompt{.name = "test_input_required_result_prompt",
                          .description = "Asks for context through elicitation, then returns the prompt"},
                   [](prompt_arguments const&, request_context& ctx) -> awaitable<prompt_result> {
                       auto question =
                           ask_field("user_context", "What context should the prompt use?", "context");
                       auto answer = co_await ctx.async_input(std::move(question));
                       prompt_result r;
                       r.add("user", text_content(answer ? "Context: " + accepted_field(*answer, "context")
                                                         : "No context: " + answer.error().to_string()));
                       co_return r;
                   });
}

} // namespace duet::conformance
