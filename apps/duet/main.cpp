// duet: the command-line entry point.
//
//   duet serve [--host H] [--port P] [--legacy-only | --modern-only]   the demo server on Streamable HTTP;
//                                                        the first stdout line is its URL
//   duet serve --stdio [...]                             the demo server on stdin/stdout
//   duet --version                                       Duet's own version (duet/version.hpp)
//   duet versions                                        the protocol versions this build speaks
//   duet discover | tools | prompts | resources | call | read | prompt | listen  [URL] ... [-- COMMAND
//   ARGS...]
//                                                        the client commands (client_cli.hpp; exit codes
//                                                        there)
#include <duet/protocol/version.hpp>
#include <duet/transport/http_server.hpp>
#include <duet/transport/stdio.hpp>
#include <duet/version.hpp>

#include "client_cli.hpp"
#include "cmd_auth.hpp"
#include "cmd_gateway.hpp"
#include "common/auth_flags.hpp"
#include "common/listener_flags.hpp"
#include "common/log_flags.hpp"
#include "common/metrics_flags.hpp"
#include "common/state_key_flags.hpp"
#include "common/store_flags.hpp"
#include "common/tls_flags.hpp"
#include "demo_server.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

int print_versions() {
    for (auto const& row : duet::protocol::version_registry)
        std::printf("%.*s\t%.*s\n", static_cast<int>(row.name.size()), row.name.data(),
                    static_cast<int>(to_string(row.era).size()), to_string(row.era).data());
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    // First: every Redis object made below ends while its thread still runs (store_flags.hpp).
    duet::apps::store_runtime store_thread;
    // Everything after the first `--` is the stdio server a client command spawns; CLI11 never sees it.
    std::vector<std::string> server_command;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--") == 0) {
            server_command.assign(argv + i + 1, argv + argc);
            argc = i;
            break;
        }
    }

    CLI::App app{"duet: a dual-era Model Context Protocol toolkit"};
    app.set_version_flag("--version", "duet " + std::string(duet::version));
    app.require_subcommand(1);
    auto run_client = duet::apps::add_client_commands(app, server_command);
    auto run_gateway = duet::apps::add_gateway_command(app);
    auto run_auth = duet::apps::add_auth_commands(app);

    auto* versions = app.add_subcommand("versions", "List the MCP protocol versions and their eras");

    auto* serve = app.add_subcommand("serve", "Run the demo server");
    bool stdio = false;
    bool legacy_only = false;
    bool modern_only = false;
    serve->add_flag("--stdio", stdio, "Serve on stdin/stdout (newline-delimited JSON-RPC)");
    duet::transport::http_options http;
    serve->add_option("--host", http.host, "Address to bind (default 127.0.0.1)");
    serve->add_option("--port", http.port, "Port to bind; 0 picks a free one (default 8750)");
    duet::apps::listener_flags listener;
    duet::apps::add_listener_flags(*serve, listener, http);
    duet::apps::auth_flags auth;
    duet::apps::add_auth_flags(*serve, auth);
    duet::apps::state_key_flags state_keys;
    duet::apps::add_state_key_flags(*serve, state_keys);
    duet::apps::store_flags store;
    duet::apps::add_store_flags(*serve, store);
    duet::apps::metrics_flags metrics;
    duet::apps::add_metrics_flags(*serve, metrics);
    duet::apps::log_flags logging;
    duet::apps::add_log_flags(*serve, logging);
    serve->add_option("--allow-origin", http.allowed_origins, "An Origin allowed besides loopback ones");
    duet::apps::tls_server_flags tls;
    duet::apps::add_tls_server_flags(*serve, tls);
    auto* lo = serve->add_flag("--legacy-only", legacy_only, "Accept only legacy (initialize) clients");
    serve->add_flag("--modern-only", modern_only, "Accept only modern (2026-07-28) clients")->excludes(lo);

    CLI11_PARSE(app, argc, argv);

    if (versions->parsed())
        return print_versions();
    if (int const code = run_gateway(); code >= 0)
        return code;
    if (int const code = run_auth(); code >= 0)
        return code;
    if (!serve->parsed()) {
        int const code = run_client();
        if (code >= 0)
            return code;
    }

    auto const eras = legacy_only   ? duet::protocol::era_support::legacy_only
                      : modern_only ? duet::protocol::era_support::modern_only
                                    : duet::protocol::era_support::both;
    // What the processes serving one endpoint share; the rest of the options are the demo's own.
    duet::server::server_options shared;
    if (auto why = duet::apps::apply_state_key_flags(state_keys, shared)) {
        std::fprintf(stderr, "duet serve: %s\n", why->c_str());
        return 2;
    }
    duet::apps::apply_log_flags(logging);
    auto scrape = duet::apps::start_metrics(metrics, shared, stdio ? nullptr : &http);
    if (!scrape) {
        std::fprintf(stderr, "duet serve: %s\n", scrape.error().c_str());
        return 1;
    }
    if (stdio) {
        if (!store.url.empty()) {
            std::fputs(
                "duet serve: --store shares state between HTTP processes; a stdio server has one client\n",
                stderr);
            return 2;
        }
        auto srv = duet::apps::make_demo_server(eras, std::move(shared));
        duet::log::write(
            {.name = "started",
             .message = "demo server on stdio (both eras unless restricted); logs go to stderr"});
        return duet::transport::serve_stdio(*srv);
    }
    if (auto why = duet::apps::apply_listener_flags(listener, http)) {
        std::fprintf(stderr, "duet serve: %s\n", why->c_str());
        return 2;
    }
    if (auto why = duet::apps::apply_tls_server_flags(tls, http)) {
        std::fprintf(stderr, "duet serve: %s\n", why->c_str());
        return 2;
    }
    if (auto why = duet::apps::apply_store_flags(store, store_thread, shared, http)) {
        std::fprintf(stderr, "duet serve: %s\n", why->text.c_str());
        return why->exit_code;
    }
    auto srv = duet::apps::make_demo_server(eras, shared);
    if (auto why = duet::apps::await_store(shared)) {
        std::fprintf(stderr, "duet serve: %s\n", why->text.c_str());
        return why->exit_code;
    }
    // Made first: the token verifier fetches keys on it, and the server runs it.
    boost::asio::io_context io;
    if (auto why = duet::apps::apply_auth_flags(auth, http, io.get_executor())) {
        std::fprintf(stderr, "duet serve: %s\n", why->c_str());
        return 2;
    }
    std::optional<duet::transport::http_server> made;
    try {
        made.emplace(std::vector<duet::transport::http_route>{{http.path, srv.get()}}, http, io);
    } catch (std::invalid_argument const& e) {
        std::fprintf(stderr, "duet serve: %s\n", e.what());
        return 2;
    }
    auto& server = *made;
    if (auto ec = server.listen()) {
        std::fprintf(stderr, "duet serve: cannot listen on %s:%u: %s\n", http.host.c_str(),
                     unsigned(http.port), ec.message().c_str());
        return 1;
    }
    std::printf("%s\n", server.url().c_str());
    std::fflush(stdout);
    duet::log::write({.name = "started",
                      .message =
                          "demo server on Streamable HTTP (both eras unless restricted); Ctrl-C drains "
                          "and stops"});
    server.run();
    return 0;
}
