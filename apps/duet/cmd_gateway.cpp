// duet gateway: connects to the upstream once to learn it, then serves it on Streamable HTTP to clients of
// both eras. Upstream connections and the HTTP server share one io_context and its threads.
#include "cmd_gateway.hpp"

#include <duet/client/connect_mode.hpp>
#include <duet/client/target.hpp>
#include <duet/gateway/upstream_backend.hpp>
#include <duet/transport/http_server.hpp>

#include "common/auth_flags.hpp"
#include "common/listener_flags.hpp"
#include "common/store_flags.hpp"
#include "common/tls_flags.hpp"
#include "upstream_auth.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
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

struct gateway_cli {
    std::vector<std::string> upstreams;
    std::string era = "auto";
    bool lenient_args = false;
    std::size_t pool_size = 4;
    bool share_sessions = false;
    bool busy_batching = true;
    transport::http_options http;
    tls_server_flags listener_tls;
    listener_flags listener;
    auth_flags front_door; ///< the tokens callers of the gateway need
    /// What https upstreams trust and present, each "[NAME=]VALUE": unnamed for every upstream, named for
    /// one.
    std::vector<std::string> cacert, client_cert, client_key;
    bool insecure = false;                 ///< every https upstream
    std::vector<std::string> insecure_for; ///< names
    /// What stdio upstreams' children get besides the default environment: NAME or NAME=VALUE.
    std::vector<std::string> upstream_env;
    std::size_t max_upstream_message = 16 * 1024 * 1024;
    double upstream_timeout_seconds = 60;
    std::size_t max_parked_calls = 256;
    std::size_t max_upstream_children = 64;
    std::string over_children = "share";
    upstream_auth_flags upstream_auth;
    store_flags store; ///< several gateway processes behind one load balancer
};

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

// "stdio:COMMAND ARGS..." split on blanks; single or double quotes keep blanks inside one argument.
std::optional<std::vector<std::string>> split_command(std::string_view text) {
    std::vector<std::string> words;
    std::string word;
    bool in_word = false;
    char quote = 0;
    for (char ch : text) {
        if (quote) {
            if (ch == quote)
                quote = 0;
            else
                word += ch;
        } else if (ch == '\'' || ch == '"') {
            quote = ch;
            in_word = true;
        } else if (ch == ' ' || ch == '\t') {
            if (in_word)
                words.push_back(std::move(word));
            word.clear();
            in_word = false;
        } else {
            word += ch;
            in_word = true;
        }
    }
    if (quote)
        return std::nullopt;
    if (in_word)
        words.push_back(std::move(word));
    return words;
}

std::optional<client::server_target> parse_upstream(std::string const& text, std::string& why) {
    constexpr std::string_view stdio_prefix = "stdio:";
    if (text.starts_with(stdio_prefix)) {
        auto words = split_command(std::string_view(text).substr(stdio_prefix.size()));
        if (!words) {
            why = "an unterminated quote in the upstream command";
            return std::nullopt;
        }
        if (words->empty()) {
            why = "no command after \"stdio:\"";
            return std::nullopt;
        }
        client::stdio_target t;
        t.command = words->front();
        t.args.assign(words->begin() + 1, words->end());
        return t;
    }
    auto url = client::parse_http_url(text);
    if (!url) {
        why = url.error().message + " (give an http(s):// URL or stdio:COMMAND ARGS...)";
        return std::nullopt;
    }
    return client::http_target{text, {}};
}

// One --upstream: `NAME=SPEC` (served at /mcp/NAME) or a bare SPEC.
struct named_upstream {
    std::string name; ///< empty: unnamed
    client::server_target target;
};

bool valid_name(std::string_view name) {
    return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    });
}

// The upstreams given, named and checked: one may be unnamed (served at /mcp), several must all be named,
// each name once. A usage error's text in `why`.
std::optional<std::vector<named_upstream>> parse_upstreams(std::vector<std::string> const& texts,
                                                           std::string& why) {
    std::vector<named_upstream> out;
    for (auto const& text : texts) {
        named_upstream u;
        std::string spec = text;
        // NAME=SPEC when an '=' comes before any ':' (a URL or stdio: spec has its ':' first).
        auto const eq = text.find('=');
        if (eq != std::string::npos && eq < text.find(':')) {
            u.name = text.substr(0, eq);
            spec = text.substr(eq + 1);
            if (!valid_name(u.name)) {
                why = "\"" + u.name + "\" is not an upstream name (letters, digits, '-', '_' and '.' only)";
                return std::nullopt;
            }
        }
        auto target = parse_upstream(spec, why);
        if (!target) {
            if (!u.name.empty())
                why = u.name + ": " + why;
            return std::nullopt;
        }
        u.target = std::move(*target);
        for (auto const& seen : out)
            if (!u.name.empty() && seen.name == u.name) {
                why = "two upstreams named \"" + u.name + "\"";
                return std::nullopt;
            }
        out.push_back(std::move(u));
    }
    if (out.size() > 1)
        for (auto const& u : out)
            if (u.name.empty()) {
                why = "several upstreams must each be named: --upstream NAME=SPEC (served at /mcp/NAME)";
                return std::nullopt;
            }
    return out;
}

// The upstream TLS flags, into each https upstream's target. A name no upstream has is a usage error, and so
// is a TLS flag when no upstream speaks https.
bool apply_upstream_tls(gateway_cli const& cli, std::vector<named_upstream>& upstreams, std::string& why) {
    auto known = [&](std::string const& name) {
        return std::any_of(upstreams.begin(), upstreams.end(), [&](auto const& u) { return u.name == name; });
    };
    struct flag {
        char const* spelling;
        std::vector<std::string> const* given;
        std::string tls::client_config::*field;
    };
    flag const flags[] = {{"--cacert", &cli.cacert, &tls::client_config::ca_file},
                          {"--client-cert", &cli.client_cert, &tls::client_config::client_cert_file},
                          {"--client-key", &cli.client_key, &tls::client_config::client_key_file}};
    bool any_tls_flag = cli.insecure || !cli.insecure_for.empty();
    for (auto const& f : flags)
        for (auto const& g : *f.given) {
            any_tls_flag = true;
            auto const v = split_per_upstream(g);
            if (!v.name.empty() && !known(v.name)) {
                why = std::string(f.spelling) + " " + g + ": no upstream is named \"" + v.name + "\"";
                return false;
            }
        }
    for (auto const& name : cli.insecure_for)
        if (!known(name)) {
            why = "--insecure-for " + name + ": no upstream is named \"" + name + "\"";
            return false;
        }
    bool any_https = false;
    for (auto& u : upstreams) {
        auto* h = std::get_if<client::http_target>(&u.target);
        if (!h || !h->url.starts_with("https://"))
            continue;
        any_https = true;
        for (auto const& f : flags) {
            std::optional<std::string> all, own;
            for (auto const& g : *f.given) {
                auto v = split_per_upstream(g);
                if (v.name.empty())
                    all = std::move(v.value);
                else if (v.name == u.name)
                    own = std::move(v.value);
            }
            if (auto value = own ? own : all)
                h->tls.*f.field = *value;
        }
        h->tls.insecure = cli.insecure || std::find(cli.insecure_for.begin(), cli.insecure_for.end(),
                                                    u.name) != cli.insecure_for.end();
    }
    if (any_tls_flag && !any_https) {
        why = "TLS options given, but no upstream is an https:// URL";
        return false;
    }
    return true;
}

// The environment of every stdio upstream's children: the default allow-list and --upstream-env, never the
// gateway's whole environment. --upstream-env with no stdio upstream is a usage error.
bool apply_upstream_env(gateway_cli const& cli, std::vector<named_upstream>& upstreams, std::string& why) {
    auto env = client::child_environment(cli.upstream_env);
    if (!env) {
        why = "--upstream-env " + env.error().message;
        return false;
    }
    bool any_stdio = false;
    for (auto& u : upstreams)
        if (auto* stdio = std::get_if<client::stdio_target>(&u.target)) {
            stdio->env = *env;
            any_stdio = true;
        }
    if (!cli.upstream_env.empty() && !any_stdio) {
        why = "--upstream-env given, but no upstream is a stdio: command";
        return false;
    }
    return true;
}

// One upstream served: its backend and the server in front of it.
struct served_upstream {
    named_upstream upstream;
    std::shared_ptr<gateway::upstream_backend> backend;
    std::unique_ptr<server::server> srv;
    std::string path;
};

// Runs `io` on this thread until `done` is ready. For the work before the HTTP server runs `io` and after it
// stopped it: nothing else runs `io` then.
template<class T>
T run_until(asio::io_context& io, std::future<T> done) {
    io.restart();
    while (done.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
        io.run_one();
    return done.get();
}

int run_gateway(gateway_cli const& cli) {
    // First: every Redis object made below ends while its thread still runs (store_flags.hpp).
    store_runtime store_thread;
    // So that it outlives everything holding its executors (the upstreams' OAuth providers too).
    asio::io_context io;
    std::string why;
    auto upstreams = parse_upstreams(cli.upstreams, why);
    if (!upstreams) {
        std::fprintf(stderr, "duet gateway: --upstream: %s\n", why.c_str());
        return 2;
    }
    if (!apply_upstream_tls(cli, *upstreams, why) || !apply_upstream_env(cli, *upstreams, why)) {
        std::fprintf(stderr, "duet gateway: %s\n", why.c_str());
        return 2;
    }
    auto const upstream_timeout = std::chrono::milliseconds(
        static_cast<std::chrono::milliseconds::rep>(cli.upstream_timeout_seconds * 1000));
    auto http_options = cli.http;
    if (auto bad = apply_listener_flags(cli.listener, http_options)) {
        std::fprintf(stderr, "duet gateway: %s\n", bad->c_str());
        return 2;
    }
    if (auto bad = apply_tls_server_flags(cli.listener_tls, http_options)) {
        std::fprintf(stderr, "duet gateway: %s\n", bad->c_str());
        return 2;
    }
    // The gateway checks callers' tokens itself and never passes one on: its upstreams see the gateway's
    // own credentials (--upstream-*), or none.
    if (auto bad = apply_auth_flags(cli.front_door, http_options, io.get_executor())) {
        std::fprintf(stderr, "duet gateway: %s\n", bad->c_str());
        return 2;
    }
    warn_when_open(http_options);
    server::server_options shared; // --store: the front sessions (http_options); the bus only checks Redis
    if (auto refused = apply_store_flags(cli.store, store_thread, shared, http_options)) {
        std::fprintf(stderr, "duet gateway: %s\n", refused->text.c_str());
        return refused->exit_code;
    }
    auto mode = client::parse_connect_mode(cli.era);
    if (!mode) {
        std::fprintf(stderr, "duet gateway: --era must be legacy, modern or auto, not \"%s\"\n",
                     cli.era.c_str());
        return 2;
    }

    // The upstream connections run on the HTTP server's io_context (a backend needs an executor that runs one
    // handler at a time: the io_context itself when one thread serves, else a strand), so a forwarded call
    // stays on the thread that read its request. With a thread of their own every call crossed threads twice,
    // a wake-up each way on a core the upstream may share, and what one thread allocated the other freed.
    bool const one_thread = transport::io_threads_for(cli.http) == 1;
    asio::any_io_executor const upstream_ex =
        one_thread ? asio::any_io_executor(io.get_executor()) : asio::any_io_executor(asio::make_strand(io));
    std::vector<upstream_ref> refs;
    for (auto& u : *upstreams)
        refs.push_back({&u.name, &u.target});
    if (auto bad = apply_upstream_auth(cli.upstream_auth, refs, upstream_ex)) {
        std::fprintf(stderr, "duet gateway: %s\n", bad->c_str());
        return 2;
    }
    std::vector<served_upstream> served;
    auto stop_upstreams = [&] {
        for (auto& s : served) {
            s.backend->detach();
            run_until(io, asio::co_spawn(upstream_ex, s.backend->async_close(), asio::use_future));
        }
    };

    for (auto& u : *upstreams) {
        gateway::gateway_options options;
        options.upstream = u.target;
        options.name = u.name;
        options.mode = *mode;
        options.lenient_args = cli.lenient_args;
        options.pool_size = cli.pool_size;
        options.share_sessions = cli.share_sessions;
        options.batch_when_busy = cli.busy_batching && one_thread;
        options.request_timeout = upstream_timeout;
        options.max_message_bytes = cli.max_upstream_message;
        options.max_parked_calls = cli.max_parked_calls;
        options.max_session_children = cli.max_upstream_children;
        options.when_over_children =
            cli.over_children == "refuse" ? gateway::over_children::refuse : gateway::over_children::share;
        auto created = run_until(
            io, asio::co_spawn(upstream_ex, gateway::upstream_backend::async_create(std::move(options)),
                               asio::use_future));
        if (!created) {
            // An upstream that wants an authorization the gateway cannot give: a person logs in first.
            auto const* http = std::get_if<client::http_target>(&u.target);
            auto const hint = created.error().code == client::errc::auth_required && http
                                  ? " (run `duet login " + http->url +
                                        "` first, or give --upstream-client-id or "
                                        "--upstream-header)"
                                  : std::string();
            std::fprintf(stderr, "duet gateway: cannot reach the upstream %s%s: %s%s\n",
                         u.name.empty() ? "" : (u.name + " = ").c_str(), client::describe(u.target).c_str(),
                         created.error().to_string().c_str(), hint.c_str());
            stop_upstreams();
            return 3;
        }
        served_upstream s;
        s.backend = *created;
        s.path = u.name.empty() ? cli.http.path : cli.http.path + "/" + u.name;
        auto described = s.backend->describe();
        // With --store the front sessions are shared; announcements are not: every gateway process hears its
        // upstream itself, and a shared bus would deliver each change once per process.
        if (shared.event_bus && s.backend->era() == protocol::era::legacy)
            std::fprintf(
                stderr,
                "duet gateway: --store: %s speaks the legacy era, so what the gateway holds for it per "
                "client (a modern client's input round in flight, the upstream session behind a legacy "
                "client's) lives in one gateway process: a round's retry must reach the process that "
                "began it (a load balancer sticky on the client), else it fails -32602.\n",
                client::describe(u.target).c_str());
        s.srv = std::make_unique<server::server>(std::move(described));
        s.backend->attach(*s.srv);
        s.upstream = std::move(u);
        served.push_back(std::move(s));
    }

    if (auto refused = await_store(shared)) {
        std::fprintf(stderr, "duet gateway: %s\n", refused->text.c_str());
        stop_upstreams();
        return refused->exit_code;
    }
    std::vector<transport::http_route> routes;
    for (auto& s : served)
        routes.push_back({s.path, s.srv.get()});
    std::optional<transport::http_server> made;
    try {
        made.emplace(std::move(routes), http_options, io);
    } catch (std::invalid_argument const& e) {
        std::fprintf(stderr, "duet gateway: %s\n", e.what());
        stop_upstreams();
        return 2;
    }
    auto& http = *made;
    if (auto ec = http.listen()) {
        std::fprintf(stderr, "duet gateway: cannot listen on %s:%u: %s\n", cli.http.host.c_str(),
                     unsigned(cli.http.port), ec.message().c_str());
        stop_upstreams();
        return 1;
    }
    // One URL per line, in the order the upstreams were given: the first line names the first.
    for (auto const& s : served)
        std::printf("%s\n", http.url(s.path).c_str());
    std::fflush(stdout);
    for (auto const& s : served)
        std::fprintf(stderr, "duet gateway: serving %s (%s %s) at %s to clients of both eras\n",
                     client::describe(s.upstream.target).c_str(),
                     s.backend->era() == protocol::era::modern ? "modern" : "legacy",
                     std::string(protocol::to_string(s.backend->version())).c_str(), s.path.c_str());
    std::fprintf(stderr, "duet gateway: Ctrl-C drains and stops\n");
    http.run();

    stop_upstreams();
    return 0;
}

} // namespace

std::function<int()> add_gateway_command(CLI::App& app) {
    auto cli = std::make_shared<gateway_cli>();
    auto* cmd = app.add_subcommand("gateway", "Serve an MCP server of either era to clients of both eras");
    cmd->add_option("--upstream", cli->upstreams,
                    "The server in front of which to stand: an http(s):// URL or 'stdio:COMMAND ARGS...'; "
                    "repeat as NAME=URL or NAME=stdio:... to serve several, each at /mcp/NAME")
        ->required();
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
        return run_gateway(*cli);
    };
}

} // namespace duet::apps
