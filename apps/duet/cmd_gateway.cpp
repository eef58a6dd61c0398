// duet gateway: connects to the upstream once to learn it, then serves it on Streamable HTTP to clients of
// both eras. Upstream connections and the HTTP server share one io_context and its threads.
#include "cmd_gateway.hpp"

#include <duet/client/connect_mode.hpp>
#include <duet/client/target.hpp>
#include <duet/gateway/upstream_backend.hpp>
#include <duet/transport/http_server.hpp>

#include "gateway_cli.hpp"
#include "gateway_config.hpp"
#include "gateway_runtime.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace duet::apps {

namespace {

namespace asio = boost::asio;

// A gateway reachable beyond loopback with no authentication hands its upstreams' tools to anyone who finds
// the port: said on stderr, not refused (a trusted network, a proxy that authenticates in front).
void warn_when_open(transport::http_options const& http) {
    boost::system::error_code ec;
    auto const address = asio::ip::make_address(http.host, ec);
    if (ec || address.is_loopback() || http.authorization || http.bearer_token)
        return;
    std::fprintf(stderr,
                 "duet gateway: warning: listening on %s beyond loopback with no authentication: anyone who "
                 "reaches the port may call every upstream tool (--auth-issuer with --auth-jwks or "
                 "--auth-introspection, or --bearer-token-file)\n",
                 http.host.c_str());
}

// Prints a usage error's lines, each prefixed "duet gateway: ".
void print_error(std::string const& why) {
    std::size_t from = 0;
    while (from <= why.size()) {
        auto const to = std::min(why.find('\n', from), why.size());
        std::fprintf(stderr, "duet gateway: %.*s\n", static_cast<int>(to - from), why.data() + from);
        from = to + 1;
    }
}

// `--check-config FILE`: everything checked that can be without starting anything; "FILE: ok (...)" on
// stdout and 0, or the errors on stderr and 2.
int check_config(gateway_cli const& flags) {
    asio::io_context io; // never run: what is made on it only has to be made
    auto plan = plan_gateway(flags, io);
    if (!plan) {
        std::fprintf(stderr, "%s\n", plan.error().c_str());
        return 2;
    }
    std::string names;
    for (auto const& u : plan->upstreams)
        names += (names.empty() ? "" : ", ") + (u.name.empty() ? std::string("(unnamed)") : u.name);
    std::string disabled;
    for (auto const& name : plan->disabled)
        disabled += (disabled.empty() ? "" : ", ") + name;
    auto const n = plan->upstreams.size();
    std::printf("%s: ok (%zu upstream%s: %s%s)\n", flags.check_config_file.c_str(), n, n == 1 ? "" : "s",
                names.c_str(), disabled.empty() ? "" : ("; disabled: " + disabled).c_str());
    return 0;
}

int run_gateway(gateway_cli const& flags) {
    if (!flags.check_config_file.empty())
        return check_config(flags);
    // First: every Redis object made below ends while its thread still runs (store_flags.hpp).
    store_runtime store_thread;
    // So that it outlives everything holding its executors (the upstreams' OAuth providers too).
    asio::io_context io;
    auto planned = plan_gateway(flags, io);
    if (!planned) {
        print_error(planned.error());
        return 2;
    }
    warn_when_open(planned->http);
    server::server_options shared; // --store: the front sessions (http options); the bus only checks Redis
    if (auto refused = apply_store_flags(planned->cli.store, store_thread, shared, planned->http)) {
        std::fprintf(stderr, "duet gateway: %s\n", refused->text.c_str());
        return refused->exit_code;
    }
    apply_log_flags(planned->cli.logging);
    auto scrape = start_metrics(planned->cli.metrics, shared, &planned->http);
    if (!scrape) {
        std::fprintf(stderr, "duet gateway: %s\n", scrape.error().c_str());
        return 1;
    }
    gateway_runtime runtime(io, flags, std::move(*planned), std::move(shared));
    if (auto failed = runtime.start())
        return failed;
    runtime.run();
    return 0;
}

// A CLI11 check of a text by `ok`, saying `what` when it fails.
CLI::Validator text_check(std::string name, std::string what, std::function<bool(std::string const&)> ok) {
    return CLI::Validator(
        [what = std::move(what), ok = std::move(ok)](std::string& s) { return ok(s) ? std::string() : what; },
        "", std::move(name));
}

} // namespace

std::function<int()> add_gateway_command(CLI::App& app) {
    auto cli = std::make_shared<gateway_cli>();
    auto* cmd = app.add_subcommand("gateway", "Serve an MCP server of either era to clients of both eras");
    auto* config = cmd->add_option(
        "--config", cli->config_file,
        "A JSON file in the mcpServers shape MCP hosts use ({\"mcpServers\": {\"NAME\": {\"command\": ..., "
        "\"args\": [...], \"env\": {...}} or {\"url\": ..., \"headers\": {...}}}}), Duet's own keys beside "
        "it under \"gateway\" (each flag's name in camelCase: \"port\", \"bearerToken\", ...). Flags win "
        "over "
        "it; --upstream NAME=SPEC adds an upstream or replaces the file's NAME. Secrets are literal, "
        "env:VAR or file:PATH; relative paths (file:, TLS files, a command with a '/') are taken from the "
        "file's directory");
    cmd->add_option(
           "--check-config", cli->check_config_file,
           "Check the config file (and the flags with it) without starting anything: \"FILE: ok (...)\" "
           "and exit 0, or the errors and exit 2")
        ->excludes(config);
    cmd->add_option("--upstream", cli->upstreams,
                    "The server in front of which to stand: an http(s):// URL or 'stdio:COMMAND ARGS...'; "
                    "repeat as NAME=URL or NAME=stdio:... to serve several, each at /mcp/NAME (needed unless "
                    "--config gives mcpServers)");
    cmd->add_option("--path", cli->http.path,
                    "Where clients reach the gateway (default /mcp); named upstreams at PATH/NAME")
        ->check(text_check("PATH", "a path starts with '/', and holds no query and no trailing '/'",
                           [](std::string const& p) {
                               return p.starts_with('/') && p.find_first_of("?#") == std::string::npos &&
                                      (p.size() == 1 || !p.ends_with('/'));
                           }));
    cmd->add_flag("--merge", cli->merge,
                  "Serve every upstream merged at --path, names prefixed NAME<separator> (--name-separator)");
    cmd->add_option(
           "--name-separator", cli->name_separator,
           "What joins an upstream's name and its tools' and prompts' names under --merge: 1 to 4 of "
           "letters, digits, '_', '-' and '.' (default __)")
        ->check(text_check("SEPARATOR", "1 to 4 of letters, digits, '_', '-' and '.'",
                           [](std::string const& s) { return valid_name_separator(s); }));
    auto const rate_check = text_check("RATE", "PER_SECOND[/BURST]: PER_SECOND above 0, BURST at least 1",
                                       [](std::string const& s) { return parse_rate(s).has_value(); });
    cmd->add_option_function<std::string>(
           "--rate-limit", [cli](std::string const& s) { cli->rate_per_caller = parse_rate(s); },
           "Calls one caller may make: PER_SECOND[/BURST] (BURST default: PER_SECOND, at least 1); over it, "
           "429 with Retry-After")
        ->check(rate_check);
    cmd->add_option_function<std::vector<std::string>>(
           "--tool-rate-limit",
           [cli](std::vector<std::string> const& given) {
               for (auto const& g : given) {
                   auto const eq = g.rfind('=');
                   cli->rate_per_tool[g.substr(0, eq)] = *parse_rate(std::string_view(g).substr(eq + 1));
               }
           },
           "Calls of the tool TOOL (as clients see it) from all callers: TOOL=PER_SECOND[/BURST]; "
           "repeatable; "
           "each wins over the config file's for its tool")
        ->check(text_check("TOOL=RATE", "TOOL=PER_SECOND[/BURST]: PER_SECOND above 0, BURST at least 1",
                           [](std::string const& s) {
                               auto const eq = s.rfind('=');
                               return eq != std::string::npos && eq > 0 &&
                                      parse_rate(std::string_view(s).substr(eq + 1)).has_value();
                           }));
    cmd->add_option("--era", cli->era, "How to reach the upstream: legacy, modern or auto (default auto)");
    cmd->add_flag("--lenient-args", cli->lenient_args,
                  "Accept tool arguments sent flat in params.payload (moved into arguments)");
    cmd->add_option("--pool-size", cli->pool_size,
                    "Upstream stdio children modern requests share, per capability set; for an HTTP "
                    "upstream, connections kept open (default 4)")
        ->check(CLI::Range(1, 1024));
    cmd->add_flag("--share-sessions", cli->share_sessions,
                  "Legacy sessions share that pool instead of each getting an upstream child of its own");
    cmd->add_flag("!--no-busy-batching", cli->busy_batching,
                  "Keep the normal scheduling class under load (default: with one serving thread, the batch "
                  "class while 8 or more requests are in flight, so an upstream on the same core is not "
                  "preempted by every answer it writes)");
    cmd->add_option("--threads", cli->http.io_threads,
                    "Threads serving connections and upstream calls (default: one per CPU this process may "
                    "run on)")
        ->check(CLI::Range(1, 256));
    add_store_flags(*cmd, cli->store);
    cmd->add_option("--host", cli->http.host, "Address to bind (default 127.0.0.1)");
    cmd->add_option("--port", cli->http.port, "Port to bind; 0 picks a free one (default 8750)");
    add_metrics_flags(*cmd, cli->metrics);
    add_log_flags(*cmd, cli->logging);
    cmd->add_option("--allow-origin", cli->http.allowed_origins, "An Origin allowed besides loopback ones");
    add_tls_server_flags(*cmd, cli->listener_tls);
    add_listener_flags(*cmd, cli->listener, cli->http);
    add_auth_flags(*cmd, cli->front_door);
    cmd->add_option("--cacert", cli->cacert,
                    "https upstreams: a PEM bundle of CAs to trust besides the system's; NAME=FILE for one "
                    "upstream");
    cmd->add_option("--client-cert", cli->client_cert,
                    "https upstreams: a PEM certificate to present (mutual TLS); NAME=FILE for one upstream");
    cmd->add_option("--client-key", cli->client_key, "The key of --client-cert; NAME=FILE for one upstream");
    cmd->add_flag("--insecure", cli->insecure, "https upstreams: verify nothing (a warning every time)");
    cmd->add_option("--insecure-for", cli->insecure_for, "As --insecure, for the upstream NAME only");
    cmd->add_option(
        "--upstream-env", cli->upstream_env,
        "stdio upstreams: NAME passes the gateway's value of NAME to their children, NAME=VALUE sets "
        "it; repeatable. Children get only these and HOME, LOGNAME, PATH, SHELL, TERM, USER, LANG");
    add_upstream_auth_flags(*cmd, cli->upstream_auth);
    cmd->add_option("--max-upstream-message", cli->max_upstream_message,
                    "The largest message an upstream may send, in bytes (16MiB, 1M...); a larger one fails "
                    "its call and its connection is replaced (default 16MiB)")
        ->transform(CLI::AsSizeValue(false))
        ->check(CLI::Range(std::size_t{1024}, std::size_t{1} << 32));
    cmd->add_option("--upstream-timeout", cli->upstream_timeout_seconds,
                    "Seconds a forwarded call waits for its answer, and for a free upstream connection; the "
                    "upstream's progress notifications start the wait again (default 60)")
        ->check(CLI::Range(0.05, 86400.0));
    cmd->add_option("--task-after", cli->task_after_seconds,
                    "Seconds after which a tools/call still running upstream becomes a task for clients "
                    "that can follow one (the gateway holds the call; the client may come back for the "
                    "result). Default: only calls the upstream itself turns into tasks")
        ->check(CLI::Range(0.0, 86400.0));
    cmd->add_option(
           "--max-parked-calls", cli->max_parked_calls,
           "Calls waiting for modern clients' retries at most; one more drops the oldest, whose retry "
           "replays it (default 256)")
        ->check(CLI::Range(1, 1 << 20));
    cmd->add_option("--max-upstream-children", cli->max_upstream_children,
                    "Legacy sessions of a legacy stdio upstream with a child process of their own, at most; "
                    "the pool's children of all capability sets together too (default 64)")
        ->check(CLI::Range(1, 1 << 16));
    cmd->add_option("--over-children", cli->over_children,
                    "Past --max-upstream-children, new legacy sessions share the pool's children (share) or "
                    "are refused with 503 (refuse); default share")
        ->check(CLI::IsMember({"share", "refuse"}));
    return [cmd, cli]() -> int {
        if (!cmd->parsed())
            return -1;
        // Which flags were given: their values win over the config file's.
        for (auto const* option : cmd->get_options())
            if (option->count() > 0)
                for (auto const& name : option->get_lnames())
                    cli->given.insert("--" + name);
        return run_gateway(*cli);
    };
}

} // namespace duet::apps
