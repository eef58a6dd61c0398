// The shared half of the client commands: parse the target and the common options, connect, run one
// command on an io_context, turn errors into messages and exit codes.
#include "client_cli.hpp"

#include <duet/client/elicitation_form.hpp>
#include <duet/jsonrpc/json_text.hpp>
#include <duet/protocol/header_codec.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>

namespace duet::apps {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;

namespace {

enum class command_kind { discover, tools, prompts, resources, call, read, prompt, listen, task };

bool is_url(std::string const& s) {
    return s.starts_with("http://") || s.starts_with("https://");
}

// Elicitation at a terminal: one question per field of the requested schema; elsewhere a decline.
boost::system::result<json::object, jsonrpc::error_object> elicit_interactively(json::object const& params,
                                                                                bool allowed) {
    auto const* message = params.if_contains("message");
    if (!allowed || !::isatty(0)) {
        std::fprintf(stderr, "duet: the server asks: %s (declined: %s)\n",
                     message && message->is_string() ? message->get_string().c_str() : "(no message)",
                     allowed ? "stdin is not a terminal" : "--no-input");
        return json::object{{"action", "decline"}};
    }
    if (auto const* mode = params.if_contains("mode");
        mode && mode->is_string() && mode->get_string() == "url") {
        auto const* url = params.if_contains("url");
        std::fprintf(stderr, "duet: the server asks you to visit %s\n  %s\nOpened and done? [y/N] ",
                     url && url->is_string() ? url->get_string().c_str() : "(no url)",
                     message && message->is_string() ? message->get_string().c_str() : "");
        std::string line;
        std::getline(std::cin, line);
        return json::object{{"action", line == "y" || line == "Y" ? "accept" : "decline"}};
    }
    std::fprintf(stderr, "duet: the server asks: %s\n",
                 message && message->is_string() ? message->get_string().c_str() : "(no message)");
    json::object content;
    for (auto const& f : client::requested_fields(params)) {
        std::fprintf(stderr, "  %s (%s)%s%s: ", std::string(f.name).c_str(), std::string(f.type).c_str(),
                     f.default_value ? " default " : "",
                     f.default_value ? jsonrpc::to_json_text(*f.default_value).c_str() : "");
        std::string line;
        if (!std::getline(std::cin, line))
            return json::object{{"action", "cancel"}};
        if (line.empty()) {
            if (f.default_value)
                content[f.name] = *f.default_value;
            continue;
        }
        if (f.type == "string") {
            content[f.name] = line;
            continue;
        }
        boost::system::error_code ec;
        auto v = json::parse(line, ec);
        content[f.name] = ec ? json::value(line) : v;
    }
    return json::object{{"action", "accept"}, {"content", std::move(content)}};
}

awaitable<int> run_one(command_kind kind, std::shared_ptr<client::client> c, std::vector<std::string> args,
                       client_cli_options const& o, std::shared_ptr<client::cancellation> cancel,
                       std::shared_ptr<followed_task> following) {
    switch (kind) {
    case command_kind::discover:
        co_return co_await run_discover(c, std::move(args), o, cancel);
    case command_kind::tools:
        co_return co_await run_list(c, std::move(args), o, cancel, client::list_kind::tools);
    case command_kind::prompts:
        co_return co_await run_list(c, std::move(args), o, cancel, client::list_kind::prompts);
    case command_kind::resources:
        co_return co_await run_list(c, std::move(args), o, cancel, client::list_kind::resources);
    case command_kind::call:
        co_return co_await run_call(c, std::move(args), o, cancel, following);
    case command_kind::task:
        co_return co_await run_task(c, std::move(args), o, cancel, following);
    case command_kind::read:
        co_return co_await run_read(c, std::move(args), o, cancel);
    case command_kind::prompt:
        co_return co_await run_prompt(c, std::move(args), o, cancel);
    case command_kind::listen:
        co_return co_await run_listen(c, std::move(args), o, cancel);
    }
    co_return exit_code::usage;
}

struct run_state {
    int exit = exit_code::ok;
    bool done = false;
    std::shared_ptr<client::cancellation> cancel = std::make_shared<client::cancellation>();
    std::shared_ptr<followed_task> following = std::make_shared<followed_task>();
    bool cancel_on_exit = false;
    std::string server;
};

awaitable<void> connect_and_run(command_kind kind, client::server_target target,
                                client::client_options options, std::vector<std::string> args,
                                client_cli_options o, std::shared_ptr<run_state> state) {
    auto connected = co_await client::client::async_connect(std::move(target), std::move(options));
    if (!connected) {
        state->exit = state->cancel->cancelled() ? exit_code::interrupted : report(connected.error());
        state->done = true;
        co_return;
    }
    auto c = *connected;
    state->exit = co_await run_one(kind, c, std::move(args), o, state->cancel, state->following);
    co_await c->async_close();
    state->done = true;
}

// Whether an interrupted command that follows a task should cancel it on the server too: --cancel-on-exit
// says yes; at a terminal the user is asked; elsewhere the task is left running (work is never thrown away
// unasked).
bool cancel_followed_task(run_state const& state) {
    // A stdio server is this command's child: the task ends with it whatever is answered.
    if (state.cancel_on_exit || state.server.starts_with("--"))
        return true;
    if (!::isatty(0) || !::isatty(2))
        return false;
    std::fprintf(stderr, "\nduet: cancel task %s on the server too? [y/N] ", state.following->id.c_str());
    std::string line;
    std::getline(std::cin, line);
    return line == "y" || line == "Y" || line == "yes";
}

awaitable<void> on_signal(std::shared_ptr<asio::signal_set> signals, std::shared_ptr<run_state> state,
                          std::function<void()> stop) {
    auto const got = co_await signals->async_wait(asio::as_tuple(asio::use_awaitable));
    if (std::get<0>(got))
        co_return;
    if (!state->following->id.empty() && !cancel_followed_task(*state)) {
        // Stop waiting, and leave the task to finish on the server.
        std::fprintf(stderr, "duet: task %s goes on; its result: duet task result %s %s\n",
                     state->following->id.c_str(), state->following->id.c_str(), state->server.c_str());
        state->exit = exit_code::interrupted;
        state->done = true;
        stop();
        co_return;
    }
    state->cancel->cancel(); // a followed task is cancelled with the call (client::request_options::cancel)
}

int run_command(command_kind kind, client_cli_options o) {
    client::client_options options;
    auto const mode = client::parse_connect_mode(o.era);
    if (!mode) {
        std::fprintf(stderr, "duet: --era must be legacy, modern or auto (got \"%s\")\n", o.era.c_str());
        return exit_code::usage;
    }
    options.mode = *mode;
    if (!o.protocol_version.empty()) {
        options.version = protocol::parse_version(o.protocol_version);
        if (!options.version) {
            std::fprintf(stderr, "duet: unknown protocol version \"%s\" (see `duet versions`)\n",
                         o.protocol_version.c_str());
            return exit_code::usage;
        }
    }
    options.request_timeout = std::chrono::milliseconds(static_cast<long long>(o.timeout_seconds * 1000));
    bool const allow_input = !o.no_input;
    options.inputs.elicitation = [allow_input](json::object const& p) {
        return elicit_interactively(p, allow_input);
    };
    options.on_log = [](client::log_event const& e) {
        auto const text =
            e.data.is_string() ? std::string(e.data.get_string()) : jsonrpc::to_json_text(e.data);
        std::fprintf(stderr, "[%s]%s%s %s\n", e.level.c_str(), e.logger.empty() ? "" : " ", e.logger.c_str(),
                     text.c_str());
    };
    options.log_level = "info";

    asio::io_context io;
    client::server_target target;
    std::vector<std::string> args = o.words;
    if (!o.command.empty()) {
        o.server = "--";
        for (auto const& w : o.command)
            o.server += " " + w;
        client::stdio_target t{o.command.front(), {o.command.begin() + 1, o.command.end()}};
        target = std::move(t);
    } else if (auto const url = std::find_if(args.begin(), args.end(), is_url); url != args.end()) {
        // The first http(s) word names the server; the others are the command's own.
        client::http_target t{*url, {}};
        for (auto const& h : o.headers) {
            auto const colon = h.find(':');
            if (colon == std::string::npos || colon == 0) {
                std::fprintf(stderr, "duet: --header wants \"Name: value\" (got \"%s\")\n", h.c_str());
                return exit_code::usage;
            }
            auto value = h.substr(colon + 1);
            while (!value.empty() && value.front() == ' ')
                value.erase(0, 1);
            t.headers.emplace_back(h.substr(0, colon), value);
        }
        t.tls = o.tls;
        // OAuth unless the caller brought its own credentials.
        bool const own_authorization = std::any_of(t.headers.begin(), t.headers.end(), [](auto const& h) {
            return protocol::iequals(h.first, "Authorization");
        });
        if (!own_authorization) {
            auto provider =
                make_cli_authorization(io.get_executor(), *url, o.auth, o.tls, user_presence::terminal_only);
            if (!provider)
                return report(provider.error());
            t.authorization = *provider;
        }
        o.server = *url;
        target = std::move(t);
        args.erase(url);
    } else {
        std::fprintf(stderr,
                     "duet: which server? Give its URL (http[s]://HOST:PORT/PATH) or its command after --, "
                     "e.g. `duet tools -- duet serve --stdio`\n");
        return exit_code::usage;
    }

    auto state = std::make_shared<run_state>();
    state->cancel_on_exit = o.cancel_on_exit;
    state->server = o.server;
    auto signals = std::make_shared<asio::signal_set>(io, SIGINT, SIGTERM);
    std::function<void()> stop = [&io] {
        io.stop();
    };
    asio::co_spawn(io, on_signal(signals, state, std::move(stop)), asio::detached);
    asio::co_spawn(
        io,
        connect_and_run(kind, std::move(target), std::move(options), std::move(args), std::move(o), state),
        [&io, signals](std::exception_ptr e) {
            boost::system::error_code ignored;
            signals->cancel(ignored);
            if (e) {
                try {
                    std::rethrow_exception(e);
                } catch (std::exception const& x) {
                    std::fprintf(stderr, "duet: internal error: %s\n", x.what());
                }
            }
            io.stop();
        });
    io.run();
    if (!state->done)
        return exit_code::unreachable;
    return state->exit;
}

} // namespace

int report(client::error const& e) {
    using client::errc;
    std::string hint;
    switch (e.code) {
    case errc::usage:
        break;
    case errc::spawn_failed:
        hint = " (is the command on PATH?)";
        break;
    case errc::connect_failed:
        hint = " (is the server running at that address?)";
        break;
    case errc::tls_failed:
        if (e.message.find("certificate verify failed") != std::string::npos)
            hint = " (a private CA? trust it with --cacert FILE)";
        else if (e.message.find("certificate required") != std::string::npos)
            hint = " (the server wants a client certificate: --client-cert FILE --client-key FILE)";
        break;
    case errc::auth_required:
        if (e.message.find("no user to give it") != std::string::npos)
            hint = " (run `duet login URL` at a terminal first)";
        else if (e.message.starts_with("the server requires authorization"))
            hint = " (run `duet login URL`, or pass --header \"Authorization: Bearer TOKEN\")";
        break;
    case errc::timeout:
        hint = " (raise --timeout if the server is just slow)";
        break;
    case errc::version_rejected:
        hint = " (try --era legacy, modern or auto)";
        break;
    default:
        break;
    }
    if (e.code == errc::rpc_error && e.rpc) {
        std::fprintf(stderr, "duet: the server answered with error %d: %s\n", e.rpc->code,
                     e.rpc->message.c_str());
        if (!e.rpc->data.is_null())
            std::fprintf(stderr, "      data: %s\n", jsonrpc::to_json_text(e.rpc->data).c_str());
    } else {
        std::fprintf(stderr, "duet: %s%s\n", e.message.c_str(), hint.c_str());
    }
    switch (e.code) {
    case errc::usage:
        return exit_code::usage;
    case errc::rpc_error:
        return exit_code::server_error;
    case errc::protocol_violation:
    case errc::version_rejected:
    case errc::too_large:
        return exit_code::protocol_error;
    case errc::auth_required:
        return exit_code::auth;
    case errc::cancelled:
        return exit_code::interrupted;
    default:
        return exit_code::unreachable;
    }
}

std::string parse_key_values(std::vector<std::string> const& words, json::object& out) {
    for (auto const& w : words) {
        auto const eq = w.find('=');
        if (eq == std::string::npos || eq == 0)
            return "arguments are key=value (got \"" + w + "\")";
        auto const key = w.substr(0, eq);
        auto const text = w.substr(eq + 1);
        bool const json_like =
            !text.empty() && (text.front() == '{' || text.front() == '[' || text.front() == '"' ||
                              text == "true" || text == "false" || text == "null" || text.front() == '-' ||
                              (text.front() >= '0' && text.front() <= '9'));
        if (json_like) {
            boost::system::error_code ec;
            auto v = json::parse(text, ec);
            if (!ec) {
                out[key] = std::move(v);
                continue;
            }
            if (text.front() == '{' || text.front() == '[' || text.front() == '"')
                return "the value of " + key + " is not valid JSON: " + text;
        }
        out[key] = text;
    }
    return {};
}

std::string render_content(json::array const& content) {
    std::string out;
    for (auto const& block : content) {
        auto const* b = block.if_object();
        if (!b)
            continue;
        auto const* type = b->if_contains("type");
        std::string_view const t = type && type->is_string() ? std::string_view(type->get_string()) : "";
        if (t == "text" && b->contains("text") && b->at("text").is_string()) {
            out += b->at("text").get_string();
        } else if (t == "image" || t == "audio") {
            auto const* mime = b->if_contains("mimeType");
            auto const* data = b->if_contains("data");
            out += "[" + std::string(t) + " " +
                   (mime && mime->is_string() ? std::string(mime->get_string()) : "?") + ", " +
                   std::to_string(data && data->is_string() ? data->get_string().size() * 3 / 4 : 0) +
                   " bytes]";
        } else if (t == "resource_link") {
            auto const* uri = b->if_contains("uri");
            out += "[link " + (uri && uri->is_string() ? std::string(uri->get_string()) : "?") + "]";
        } else if (t == "resource") {
            auto const* r = b->if_contains("resource");
            auto const* ro = r ? r->if_object() : nullptr;
            if (ro && ro->contains("text") && ro->at("text").is_string())
                out += ro->at("text").get_string();
            else
                out += "[resource " +
                       (ro && ro->contains("uri") ? jsonrpc::to_json_text(ro->at("uri")) : std::string("?")) +
                       "]";
        } else {
            out += jsonrpc::to_json_text(block);
        }
        if (!out.empty() && out.back() != '\n')
            out += '\n';
    }
    return out;
}

void add_tls_client_options(CLI::App& sub, tls::client_config& tls) {
    sub.add_option("--cacert", tls.ca_file, "https: a PEM bundle of CAs to trust besides the system's")
        ->check(CLI::ExistingFile);
    sub.add_option("--client-cert", tls.client_cert_file, "https: a PEM certificate to present (mutual TLS)")
        ->check(CLI::ExistingFile);
    sub.add_option("--client-key", tls.client_key_file, "https: the key of --client-cert (PEM)")
        ->check(CLI::ExistingFile);
    sub.add_flag("--insecure", tls.insecure, "https: verify nothing (a warning every time)");
}

std::function<int()> add_client_commands(CLI::App& app, std::vector<std::string> const& command) {
    auto o = std::make_shared<client_cli_options>();
    o->command = command;
    auto chosen = std::make_shared<std::optional<command_kind>>();

    auto common = [o](CLI::App* sub) {
        sub->add_option("--era", o->era,
                        "legacy | modern | auto (default auto: probe server/discover, fall back "
                        "to initialize)");
        sub->add_option("--protocol-version", o->protocol_version,
                        "Pin a protocol version (see `duet versions`)");
        sub->add_flag("--json", o->json, "Print JSON instead of text");
        sub->add_flag("-q,--quiet", o->quiet, "No progress lines on stderr");
        sub->add_flag("--no-input", o->no_input, "Decline every question the server asks (elicitation)");
        sub->add_option("--timeout", o->timeout_seconds, "Seconds to wait for each answer (default 60)");
        sub->add_option("-H,--header", o->headers, "An HTTP header for every request, \"Name: value\"");
        add_tls_client_options(*sub, o->tls);
        add_auth_options(*sub, o->auth);
        sub->add_option("args", o->words,
                        "[URL] then the command's arguments; or the server command after --");
        sub->footer(
            "Server: a URL (http[s]://HOST:PORT/PATH) as the first argument, or a command after `--`.\n"
            "Exit codes: 0 ok, 1 tool error, 2 usage, 3 server unreachable/gone/timeout, 4 JSON-RPC error, "
            "5 protocol violation, 6 authorization, 130 interrupted.");
    };
    struct row {
        char const* name;
        char const* help;
        command_kind kind;
    };
    static constexpr row rows[] = {
        {"discover", "Connect and show the era, version, server info and capabilities",
         command_kind::discover},
        {"tools", "List the server's tools", command_kind::tools},
        {"prompts", "List the server's prompts", command_kind::prompts},
        {"resources", "List the server's resources", command_kind::resources},
        {"call", "Call a tool: duet call [URL] TOOL key=value... (a task is followed to its result)",
         command_kind::call},
        {"task", "Look at a task: duet task get|result|cancel TASK_ID [URL]", command_kind::task},
        {"read", "Read a resource: duet read [URL] URI", command_kind::read},
        {"prompt", "Get a prompt: duet prompt [URL] NAME key=value...", command_kind::prompt},
        {"listen",
         "Print change notifications until interrupted: duet listen [URL] [tools] [prompts] "
         "[resources] [URI...]",
         command_kind::listen},
    };
    for (auto const& r : rows) {
        auto* sub = app.add_subcommand(r.name, r.help);
        common(sub);
        if (r.kind == command_kind::call) {
            sub->add_flag("--detach", o->detach,
                          "If the call becomes a task, print its id and exit (`duet task result ID URL` "
                          "fetches it later); a 2025-11-25 server is asked for a task");
            sub->add_flag("--cancel-on-exit", o->cancel_on_exit,
                          "Ctrl-C while following a task cancels it without asking (else: asked at a "
                          "terminal, left running elsewhere)");
        }
        auto const kind = r.kind;
        sub->callback([chosen, kind] { *chosen = kind; });
    }
    return [o, chosen]() -> int {
        if (!*chosen)
            return -1;
        return run_command(**chosen, *o);
    };
}

} // namespace duet::apps
