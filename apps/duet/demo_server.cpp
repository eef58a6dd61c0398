#include "demo_server.hpp"

#include <duet/server/content.hpp>
#include <duet/version.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/describe/class.hpp>

#include <algorithm>
#include <chrono>
#include <thread>

namespace duet::apps {

namespace json = boost::json;
using namespace duet::server;

namespace {

struct add_args {
    double a;
    double b;
};
BOOST_DESCRIBE_STRUCT(add_args, (), (a, b))

struct sum {
    double result;
};
BOOST_DESCRIBE_STRUCT(sum, (), (result))

std::vector<std::string> starting_with(std::vector<std::string> const& all, std::string const& prefix) {
    std::vector<std::string> out;
    std::copy_if(all.begin(), all.end(), std::back_inserter(out),
                 [&](std::string const& s) { return s.starts_with(prefix); });
    return out;
}

// The question ask_name and the introduce prompt put to the user.
input_request name_question() {
    return {"name", "elicitation/create",
            json::object{{"message", "What is your name?"},
                         {"requestedSchema",
                          {{"type", "object"},
                           {"properties", {{"name", {{"type", "string"}}}}},
                           {"required", json::array{"name"}}}}}};
}

// The question long_job asks halfway when told to confirm.
input_request go_on_question(std::int64_t done, std::int64_t of) {
    return {"go_on", "elicitation/create",
            json::object{{"message", "long_job has worked " + std::to_string(done) + " of " +
                                         std::to_string(of) + " s. Go on?"},
                         {"requestedSchema", {{"type", "object"}, {"properties", json::object{}}}}}};
}

// The name in an accepted answer to name_question(); empty when the user declined or sent none.
std::string accepted_name(json::value const& answer) {
    auto const* o = answer.if_object();
    auto const* action = o ? o->if_contains("action") : nullptr;
    if (!action || !action->is_string() || action->get_string() != "accept")
        return {};
    auto const* content = o->if_contains("content");
    auto const* name = content && content->is_object() ? content->get_object().if_contains("name") : nullptr;
    return name && name->is_string() ? std::string(name->get_string()) : std::string{};
}

} // namespace

std::unique_ptr<server::server> make_demo_server(protocol::era_support eras, server_options const& shared) {
    server_options options;
    options.info = {.name = "duet-demo",
                    .version = std::string(duet::version),
                    .title = "Duet demo server",
                    .description = "One of each MCP feature, served to legacy and modern clients alike",
                    .website_url = {},
                    .icons = {}};
    options.instructions = "Try the echo tool first; add shows typed tools; countdown reports progress.";
    options.eras = eras;
    options.request_state_keys = shared.request_state_keys;
    options.event_bus = shared.event_bus;
    options.event_topic = shared.event_topic;
    options.task_store = shared.task_store;
    options.metrics = shared.metrics;
    auto srv = std::make_unique<server::server>(std::move(options));

    srv->add_tool(tool{.name = "echo",
                       .title = "Echo",
                       .description = "Returns its text argument unchanged",
                       .input_schema = {{"type", "object"},
                                        {"properties",
                                         {{"text", {{"type", "string"}, {"description", "What to echo"}}}}},
                                        {"required", json::array{"text"}}},
                       .annotations = {{"readOnlyHint", true}},
                       // Copies a string and never blocks: cheaper to run than to hand to another thread.
                       .run_plain = plain_run::inline_on_io},
                  [](json::object const& args, request_context&) {
                      return tool_result::text(args.at("text").as_string());
                  });

    srv->add_tool(
        tool{.name = "whoami",
             .title = "Who am I",
             .description = "Who the server takes the caller for: the bearer token's subject, client "
                            "and scopes when it checks tokens, else anonymous",
             .annotations = {{"readOnlyHint", true}},
             .run_plain = plain_run::inline_on_io},
        [](json::object const&, request_context& ctx) {
            auto const* caller = ctx.caller();
            if (!caller || !caller->token)
                return tool_result::text("anonymous");
            auto const& t = *caller->token;
            std::string scopes;
            for (auto const& s : t.scopes)
                scopes += (scopes.empty() ? "" : " ") + s;
            return tool_result::text("subject " + t.subject + " client " + t.client_id + " scopes " + scopes);
        });

    srv->add_typed_tool<add_args>(tool{.name = "add",
                                       .title = "Add two numbers",
                                       .description = "Adds a and b; typed arguments and structured output",
                                       .input_schema = {{"properties",
                                                         {{"a", {{"description", "First addend"}}},
                                                          {"b", {{"description", "Second addend"}}}}}},
                                       .run_plain = plain_run::inline_on_io},
                                  [](add_args const& in, request_context&) { return sum{in.a + in.b}; });

    srv->add_tool(
        tool{.name = "countdown",
             .title = "Countdown",
             .description = "Counts down from n (at most 20), reporting progress every 50 ms",
             .input_schema = {{"type", "object"},
                              {"properties", {{"n", {{"type", "integer"}, {"minimum", 1}, {"maximum", 20}}}}},
                              {"required", json::array{"n"}}}},
        [](json::object const& args, request_context& ctx) -> boost::asio::awaitable<tool_result> {
            auto const n = std::clamp<std::int64_t>(args.at("n").to_number<std::int64_t>(), 1, 20);
            boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
            for (std::int64_t i = 1; i <= n; ++i) {
                if (ctx.cancelled())
                    co_return tool_result::error("cancelled");
                timer.expires_after(std::chrono::milliseconds(50));
                co_await timer.async_wait(boost::asio::use_awaitable);
                ctx.report_progress(double(i), double(n), std::to_string(n - i) + " to go");
                ctx.log(protocol::log_level::info, json::string("tick " + std::to_string(i)), "countdown");
            }
            co_return tool_result::text("liftoff after " + std::to_string(n) + " steps");
        });

    // A call that outlives a second becomes a task for a client that can follow one (the modern tasks
    // extension, or a 2025-11-25 client that asks): the client polls for its result, even after a reconnect.
    srv->add_tool(
        tool{.name = "long_job",
             .title = "Long job",
             .description = "Works for `seconds` (default 5, at most 600), reporting each second; with "
                            "confirm=true it asks the user halfway whether to go on. Runs as a task.",
             .input_schema = {{"type", "object"},
                              {"properties",
                               {{"seconds", {{"type", "integer"}, {"minimum", 1}, {"maximum", 600}}},
                                {"confirm", {{"type", "boolean"}}}}}},
             .tasks = protocol::task_support::optional,
             .task_after = std::chrono::seconds(1)},
        [](json::object const& args, request_context& ctx) -> boost::asio::awaitable<tool_result> {
            std::int64_t seconds = 5;
            if (auto const* s = args.if_contains("seconds"); s && s->is_number())
                seconds = std::clamp<std::int64_t>(s->to_number<std::int64_t>(), 1, 600);
            auto const* c = args.if_contains("confirm");
            bool const confirm = c && c->is_bool() && c->get_bool();
            boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
            for (std::int64_t i = 0; i < seconds; ++i) {
                if (ctx.cancelled())
                    co_return tool_result::error("cancelled");
                if (confirm && i == seconds / 2) {
                    auto question = go_on_question(i, seconds);
                    auto answer = co_await ctx.async_input(std::move(question));
                    auto const* o = answer ? answer->if_object() : nullptr;
                    auto const* action = o ? o->if_contains("action") : nullptr;
                    if (!action || !action->is_string() || action->get_string() != "accept")
                        co_return tool_result::text("stopped by the user after " + std::to_string(i) + " s");
                }
                ctx.report_progress(double(i), double(seconds), std::to_string(seconds - i) + " s to go");
                timer.expires_after(std::chrono::seconds(1));
                co_await timer.async_wait(boost::asio::use_awaitable);
            }
            co_return tool_result::text("done after " + std::to_string(seconds) + " s");
        });

    srv->add_tool(tool{.name = "ask_name",
                       .title = "Ask the user's name",
                       .description = "Asks the user for their name through elicitation, then greets them",
                       .input_schema = {{"type", "object"}}},
                  [](json::object const&, request_context& ctx) -> boost::asio::awaitable<tool_result> {
                      if (!ctx.declares(protocol::client_capability::elicitation_form))
                          co_return tool_result::error("This tool needs a client that supports elicitation");
                      // Legacy sessions get a real elicitation/create request; modern clients an
                      // input_required round.
                      auto question = name_question();
                      auto answer = co_await ctx.async_input(std::move(question));
                      if (!answer)
                          co_return tool_result::error("No answer: " + answer.error().to_string());
                      auto const* o = answer->if_object();
                      auto const* action = o ? o->if_contains("action") : nullptr;
                      if (!action || !action->is_string() || action->get_string() != "accept")
                          co_return tool_result::text("The user declined to answer");
                      auto const name = accepted_name(*answer);
                      if (name.empty())
                          co_return tool_result::error("The answer carried no name");
                      co_return tool_result::text("Hello, " + name + "!");
                  });

    srv->add_resource(resource{.uri = "duet://demo/readme",
                               .name = "readme",
                               .title = "About this server",
                               .description = "What the demo server offers",
                               .mime_type = "text/markdown",
                               .run_plain = plain_run::inline_on_io},
                      [](std::string const& uri, request_context&) {
                          read_result r;
                          r.contents.push_back(
                              text_resource_contents(uri,
                                                     "# Duet demo\nTools: echo, whoami, add, countdown, "
                                                     "ask_name, touch_readme.\nPrompts: review, introduce.\n",
                                                     "text/markdown"));
                          return r;
                      });

    // An announcement on demand: with --store, it reaches the readme's subscribers on every process.
    srv->add_tool(tool{.name = "touch_readme",
                       .title = "Touch the readme",
                       .description =
                           "Tells every subscriber of duet://demo/readme that it changed, on every "
                           "process serving this endpoint",
                       .annotations = {{"idempotentHint", true}},
                       .run_plain = plain_run::inline_on_io},
                  [s = srv.get()](json::object const&, request_context&) {
                      s->notify_resource_updated("duet://demo/readme");
                      return tool_result::text("Announced: duet://demo/readme changed");
                  });

    static std::vector<std::string> const names{"ada", "alan", "barbara", "grace", "linus"};
    srv->add_resource_template(resource_template{
        .uri_template = "duet://demo/greeting/{name}",
        .name = "greeting",
        .title = "A greeting",
        .description = "A greeting for the given name",
        .mime_type = "text/plain",
        .read = [](std::string const& uri, uri_variables const& vars,
                   request_context&) -> boost::asio::awaitable<read_result> {
            read_result r;
            r.contents.push_back(text_resource_contents(uri, "Hello, " + vars.at("name") + "!"));
            co_return r;
        },
        .complete =
            [](std::string const& argument, std::string const& value, auto const&) {
                return argument == "name" ? starting_with(names, value) : std::vector<std::string>{};
            }});

    static std::vector<std::string> const languages{"c", "c++", "go", "python", "rust", "typescript"};
    srv->add_prompt(prompt{
        .name = "review",
        .title = "Code review",
        .description = "Asks for a review of a snippet in a given language",
        .arguments = {{.name = "language",
                       .title = "Language",
                       .description = "The snippet's language",
                       .required = true},
                      {.name = "code", .title = "Code", .description = "The snippet", .required = false}},
        .get = [](prompt_arguments const& args, request_context&) -> boost::asio::awaitable<prompt_result> {
            prompt_result r;
            r.description = "Review of a " + args.at("language") + " snippet";
            auto code = args.contains("code") ? args.at("code") : std::string("(no code given)");
            r.add("user", text_content("Please review this " + args.at("language") + " code:\n" + code));
            co_return r;
        },
        .complete =
            [](std::string const& argument, std::string const& value, auto const&) {
                return argument == "language" ? starting_with(languages, value) : std::vector<std::string>{};
            }});

    // A prompt asks the same way a tool does, when the client can answer.
    srv->add_prompt(
        prompt{.name = "introduce",
               .title = "Introduce the user",
               .description = "Asks the user's name through elicitation, then asks for an introduction"},
        [](prompt_arguments const&, request_context& ctx) -> boost::asio::awaitable<prompt_result> {
            std::string name;
            if (ctx.declares(protocol::client_capability::elicitation_form)) {
                auto question = name_question();
                auto answer = co_await ctx.async_input(std::move(question));
                if (answer)
                    name = accepted_name(*answer);
            }
            if (name.empty())
                name = "a new user";
            prompt_result r;
            r.description = "An introduction of " + name;
            r.add("user", text_content("Please write a short, friendly introduction of " + name + "."));
            co_return r;
        });
    return srv;
}

} // namespace duet::apps
