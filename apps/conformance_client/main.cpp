// duet-conformance-client: the client the official MCP conformance suite drives (SUITE.md §3, §6).
//
//   MCP_CONFORMANCE_SCENARIO=tools_call MCP_CONFORMANCE_PROTOCOL_VERSION=2026-07-28
//   duet-conformance-client http://localhost:PORT/mcp
//
// The suite appends the mock server's URL as the last argument and names the scenario in
// MCP_CONFORMANCE_SCENARIO; MCP_CONFORMANCE_PROTOCOL_VERSION picks the lifecycle (a handshake version:
// legacy; 2026-07-28: modern) and MCP_CONFORMANCE_CONTEXT carries scenario data (JSON). Built on the public
// client library only: every behaviour checked here is the library's own. Exit 0 when the scenario's client
// side ran to the end, 1 otherwise (the suite's checks decide conformance).
#include <duet/auth/oauth.hpp>
#include <duet/auth/user_steps.hpp>
#include <duet/client/client.hpp>
#include <duet/client/elicitation_form.hpp>
#include <duet/version.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace duet;
using asio::awaitable;

using input_result = boost::system::result<json::object, jsonrpc::error_object>;

std::string env(char const* name) {
    char const* v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

void log_line(std::string const& text) {
    std::fprintf(stderr, "duet-conformance-client: %s\n", text.c_str());
}

// Accepts an elicitation, filling every field that has a default (SEP-1034) and `confirmed`-style booleans.
input_result accept_with_defaults(json::object const& params) {
    json::object content;
    for (auto const& f : client::requested_fields(params)) {
        if (f.default_value)
            content[f.name] = *f.default_value;
        else if (f.type == "boolean")
            content[f.name] = true;
    }
    return json::object{{"action", "accept"}, {"content", std::move(content)}};
}

input_result sample(json::object const&) {
    return json::object{
        {"role", "assistant"},
        {"content", {{"type", "text"}, {"text", "A sampled answer from duet-conformance-client"}}},
        {"model", "duet-conformance"},
        {"stopReason", "endTurn"}};
}

input_result roots(json::object const&) {
    return json::object{{"roots", json::array{json::object{{"uri", "file:///tmp"}, {"name", "tmp"}}}}};
}

// Arguments that satisfy a tool's required properties: strings "value", integers 1, numbers 1, booleans true.
json::object plausible_arguments(json::object const& tool) {
    json::object args;
    auto const* schema = tool.if_contains("inputSchema");
    auto const* so = schema ? schema->if_object() : nullptr;
    if (!so)
        return args;
    auto const* required = so->if_contains("required");
    auto const* props = so->if_contains("properties");
    if (!required || !required->is_array() || !props || !props->is_object())
        return args;
    for (auto const& r : required->get_array()) {
        if (!r.is_string())
            continue;
        auto const* p = props->get_object().if_contains(r.get_string());
        auto const* t = p && p->is_object() ? p->get_object().if_contains("type") : nullptr;
        std::string_view const type = t && t->is_string() ? std::string_view(t->get_string()) : "string";
        if (type == "integer" || type == "number")
            args[r.get_string()] = 1;
        else if (type == "boolean")
            args[r.get_string()] = true;
        else if (type == "object")
            args[r.get_string()] = json::object{};
        else if (type == "array")
            args[r.get_string()] = json::array{};
        else
            args[r.get_string()] = "value";
    }
    return args;
}

bool ok(client::result<json::object> const& r, std::string const& what) {
    if (r)
        return true;
    log_line(what + ": " + r.error().to_string());
    return false;
}

awaitable<bool> call_tool(std::shared_ptr<client::client> c, std::string name, json::object args) {
    std::string what = "tools/call " + name;
    auto r = co_await c->async_call_tool(std::move(name), std::move(args));
    co_return ok(r, what);
}

// Lists everything the server offers and uses each item once (standard headers on every method).
awaitable<bool> exercise_everything(std::shared_ptr<client::client> c) {
    bool good = true;
    auto tools = co_await c->async_list_tools();
    if (!tools) {
        log_line("tools/list: " + tools.error().to_string());
        co_return false;
    }
    for (auto const& t : *tools) {
        auto const& tool = t.as_object();
        std::string name(tool.at("name").as_string());
        auto args = plausible_arguments(tool);
        good = co_await call_tool(c, std::move(name), std::move(args)) && good;
    }
    auto resources = co_await c->async_list(client::list_kind::resources);
    if (resources) {
        for (auto const& r : *resources) {
            std::string uri(r.as_object().at("uri").as_string());
            auto read = co_await c->async_read_resource(std::move(uri));
            good = ok(read, "resources/read") && good;
        }
    }
    auto prompts = co_await c->async_list(client::list_kind::prompts);
    if (prompts) {
        for (auto const& p : *prompts) {
            std::string name(p.as_object().at("name").as_string());
            json::object args;
            auto got = co_await c->async_get_prompt(std::move(name), std::move(args));
            good = ok(got, "prompts/get") && good;
        }
    }
    co_return good;
}

std::string context_text(json::object const& context, char const* key) {
    auto const* v = context.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

// The authorization scenarios: the suite's authorization servers approve at once with a redirect, so the
// user's step is headless. Credentials come from MCP_CONFORMANCE_CONTEXT where the scenario has any; the
// Client ID Metadata Document URL is the one the suite expects (auth/basic-cimd).
std::shared_ptr<auth::oauth_authorization>
authorization_for(std::string const& scenario, std::string const& url, asio::any_io_executor ex) {
    auth::oauth_options o;
    o.client_name = "duet-conformance-client";
    o.client_metadata_url = "https://conformance-test.local/client-metadata.json";
    o.user = auth::headless_user_step(ex);
    boost::system::error_code ec;
    auto parsed = json::parse(env("MCP_CONFORMANCE_CONTEXT"), ec);
    json::object context = !ec && parsed.is_object() ? parsed.get_object() : json::object{};
    if (scenario.starts_with("auth/client-credentials")) {
        auth::machine_credentials m;
        m.client_id = context_text(context, "client_id");
        m.client_secret = context_text(context, "client_secret");
        m.private_key_pem = context_text(context, "private_key_pem");
        if (auto alg = context_text(context, "signing_algorithm"); !alg.empty())
            m.signing_algorithm = alg;
        o.machine = std::move(m);
    } else if (auto id = context_text(context, "client_id"); !id.empty()) {
        o.preregistered.push_back(auth::client_registration{
            context_text(context, "issuer"), id, context_text(context, "client_secret"), "", {}});
    }
    auto made = auth::oauth_authorization::make(ex, url, std::move(o));
    if (!made) {
        log_line("authorization: " + made.error().to_string());
        return nullptr;
    }
    return *made;
}

// After authorizing as the scenario asks: what the suite's reference client does (list, then call).
awaitable<bool> list_and_call(std::shared_ptr<client::client> c) {
    auto tools = co_await c->async_list_tools();
    if (!tools) {
        log_line("tools/list: " + tools.error().to_string());
        co_return false;
    }
    std::string name("test-tool");
    json::object none;
    co_return co_await call_tool(c, std::move(name), std::move(none));
}

awaitable<bool> run_scenario(std::string scenario, std::string url, client::client_options options) {
    client::http_target http{url, {}};
    if (scenario.starts_with("auth/")) {
        auto executor = co_await asio::this_coro::executor;
        http.authorization = authorization_for(scenario, url, executor);
        if (!http.authorization)
            co_return false;
    }
    client::server_target target = std::move(http);
    auto connected = co_await client::client::async_connect(std::move(target), std::move(options));
    if (!connected) {
        log_line("connect: " + connected.error().to_string());
        co_return false;
    }
    auto c = *connected;
    log_line("connected: " + std::string(to_string(c->era())) + " " +
             std::string(protocol::to_string(c->version())));
    bool good = true;
    if (scenario.starts_with("auth/")) {
        good = co_await list_and_call(c);
    } else if (scenario == "initialize" || scenario == "json-schema-ref-no-deref" ||
               scenario == "http-invalid-tool-headers" || scenario == "request-metadata") {
        auto tools = co_await c->async_list_tools();
        if (!tools) {
            log_line("tools/list: " + tools.error().to_string());
            good = false;
        } else if (scenario == "http-invalid-tool-headers" || scenario == "request-metadata") {
            // Use what survived the list: the valid tool must stay callable.
            for (auto const& t : *tools) {
                std::string name(t.as_object().at("name").as_string());
                auto args = plausible_arguments(t.as_object());
                good = co_await call_tool(c, std::move(name), std::move(args)) && good;
            }
        }
    } else if (scenario == "tools_call") {
        auto tools = co_await c->async_list_tools();
        good = bool(tools);
        json::object args{{"a", 5}, {"b", 3}};
        std::string tool_1("add_numbers");
        good = co_await call_tool(c, std::move(tool_1), std::move(args)) && good;
    } else if (scenario == "elicitation-sep1034-client-defaults") {
        auto tools = co_await c->async_list_tools();
        good = bool(tools);
        std::string tool_2("test_client_elicitation_defaults");
        json::object args_2;
        good = co_await call_tool(c, std::move(tool_2), std::move(args_2)) && good;
    } else if (scenario == "sse-retry") {
        auto tools = co_await c->async_list_tools();
        good = bool(tools);
        std::string tool_3("test_reconnection");
        json::object args_3;
        good = co_await call_tool(c, std::move(tool_3), std::move(args_3)) && good;
    } else if (scenario == "sep-2322-client-request-state") {
        auto tools = co_await c->async_list_tools();
        good = bool(tools);
        for (auto const* name : {"test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state",
                                 "test_mrtr_no_result_type"}) {
            std::string n(name);
            json::object none;
            good = co_await call_tool(c, std::move(n), std::move(none)) && good;
        }
    } else if (scenario == "http-standard-headers") {
        good = co_await exercise_everything(c);
    } else if (scenario == "http-custom-headers") {
        auto tools = co_await c->async_list_tools();
        good = bool(tools);
        boost::system::error_code ec;
        auto context = json::parse(env("MCP_CONFORMANCE_CONTEXT"), ec);
        auto const* calls =
            !ec && context.is_object() ? context.get_object().if_contains("toolCalls") : nullptr;
        if (!calls || !calls->is_array()) {
            log_line("MCP_CONFORMANCE_CONTEXT has no toolCalls");
            good = false;
        } else {
            for (auto const& call : calls->get_array()) {
                auto const& o = call.as_object();
                std::string name(o.at("name").as_string());
                json::object args = o.contains("arguments") ? o.at("arguments").as_object() : json::object{};
                good = co_await call_tool(c, std::move(name), std::move(args)) && good;
            }
        }
    } else if (scenario == "json-schema-2020-12-preservation") {
        auto tools = co_await c->async_list_tools();
        good = bool(tools);
        if (tools) {
            for (auto const& t : *tools) {
                auto const& tool = t.as_object();
                if (tool.at("name") != "json_schema_2020_12_tool")
                    continue;
                json::object args{{"schema", tool.at("inputSchema")}};
                std::string tool_4("json_schema_echo");
                good = co_await call_tool(c, std::move(tool_4), std::move(args)) && good;
            }
        }
    } else {
        log_line("scenario \"" + scenario + "\" is not supported by this client");
        good = false;
    }
    co_await c->async_close();
    co_return good;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: MCP_CONFORMANCE_SCENARIO=NAME duet-conformance-client SERVER_URL\n");
        return 2;
    }
    std::string const url = argv[argc - 1];
    std::string const scenario = env("MCP_CONFORMANCE_SCENARIO");
    if (scenario.empty()) {
        std::fprintf(stderr, "duet-conformance-client: MCP_CONFORMANCE_SCENARIO is not set\n");
        return 2;
    }
    client::client_options options;
    options.client_info = json::object{{"name", "duet-conformance-client"}, {"version", duet::version}};
    options.verdicts = nullptr;
    options.request_timeout = std::chrono::seconds(20);
    options.inputs.elicitation = accept_with_defaults;
    options.inputs.sampling = sample;
    options.inputs.roots = roots;
    options.on_warning = [](std::string const& w) {
        log_line("warning: " + w);
    };
    // The suite names the revision: a handshake version means the legacy lifecycle, a modern one the
    // stateless envelope. Without it, auto decides.
    auto const pinned = protocol::parse_version(env("MCP_CONFORMANCE_PROTOCOL_VERSION"));
    if (pinned && protocol::is_modern_version(*pinned))
        options.mode = client::connect_mode::modern;
    else if (pinned)
        options.mode = client::connect_mode::legacy;
    else
        options.mode = client::connect_mode::auto_detect;
    if (scenario == "initialize" || scenario == "sse-retry" ||
        scenario == "elicitation-sep1034-client-defaults")
        options.mode =
            client::connect_mode::legacy; // legacy-only scenarios (their mocks have no modern path)

    asio::io_context io;
    auto done = asio::co_spawn(io, run_scenario(scenario, url, std::move(options)), asio::use_future);
    io.run();
    try {
        return done.get() ? 0 : 1;
    } catch (std::exception const& e) {
        log_line(std::string("internal error: ") + e.what());
        return 1;
    }
}
