// duet-conformance-server: the fixture of the official MCP conformance suite, served to both eras on one
// Streamable HTTP endpoint. The first stdout line is its URL.
//
//   duet-conformance-server [--port N] [--host H] [--legacy-only | --modern-only]
//                           [--tls-cert FILE --tls-key FILE [--tls-client-ca FILE]]
//                           [--auth-issuer URL --auth-audience URL --auth-jwks URL ...]
//                           [--store redis://HOST:PORT --store-prefix P --state-key-file FILE]  (scaled out)
#include <duet/transport/http_server.hpp>
#include <duet/version.hpp>

#include "common/auth_flags.hpp"
#include "common/state_key_flags.hpp"
#include "common/store_flags.hpp"
#include "common/tls_flags.hpp"
#include "fixtures.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <optional>
#include <stdexcept>

int main(int argc, char** argv) {
    // First: every Redis object made below ends while its thread still runs (store_flags.hpp).
    duet::apps::store_runtime store_thread;
    CLI::App app{"duet-conformance-server: the MCP conformance suite's fixture on Duet"};
    duet::transport::http_options http;
    http.port = 0;
    app.add_option("--port", http.port, "Port to bind; 0 picks a free one (default 0)");
    app.add_option("--host", http.host, "Address to bind (default 127.0.0.1)");
    bool legacy_only = false;
    bool modern_only = false;
    auto* lo = app.add_flag("--legacy-only", legacy_only, "Accept only legacy (initialize) clients");
    app.add_flag("--modern-only", modern_only, "Accept only modern (2026-07-28) clients")->excludes(lo);
    duet::apps::tls_server_flags tls;
    duet::apps::add_tls_server_flags(app, tls);
    duet::apps::auth_flags auth;
    duet::apps::add_auth_flags(app, auth);
    duet::apps::store_flags store;
    duet::apps::add_store_flags(app, store);
    duet::apps::state_key_flags state_keys;
    duet::apps::add_state_key_flags(app, state_keys);
    CLI11_PARSE(app, argc, argv);
    boost::asio::io_context io; // the token verifier fetches keys on it; the server runs it
    if (auto why = duet::apps::apply_auth_flags(auth, http, io.get_executor())) {
        std::fprintf(stderr, "duet-conformance-server: %s\n", why->c_str());
        return 2;
    }
    if (auto why = duet::apps::apply_tls_server_flags(tls, http)) {
        std::fprintf(stderr, "duet-conformance-server: %s\n", why->c_str());
        return 2;
    }

    duet::server::server_options options;
    if (auto why = duet::apps::apply_state_key_flags(state_keys, options)) {
        std::fprintf(stderr, "duet-conformance-server: %s\n", why->c_str());
        return 2;
    }
    if (auto why = duet::apps::apply_store_flags(store, store_thread, options, http)) {
        std::fprintf(stderr, "duet-conformance-server: %s\n", why->text.c_str());
        return why->exit_code;
    }
    options.info = {.name = "duet-conformance-server",
                    .version = std::string(duet::version),
                    .title = "Duet conformance fixture",
                    .description = "The tools, resources and prompts the MCP conformance suite calls",
                    .website_url = {},
                    .icons = {}};
    options.eras = legacy_only   ? duet::protocol::era_support::legacy_only
                   : modern_only ? duet::protocol::era_support::modern_only
                                 : duet::protocol::era_support::both;
    duet::server::server srv(options);
    if (auto why = duet::apps::await_store(options)) {
        std::fprintf(stderr, "duet-conformance-server: %s\n", why->text.c_str());
        return why->exit_code;
    }
    duet::conformance::add_content_tools(srv);
    duet::conformance::add_interaction_tools(srv);
    duet::conformance::add_input_required_fixtures(srv);
    duet::conformance::add_task_fixtures(srv);
    duet::conformance::add_resources(srv);
    duet::conformance::add_prompts(srv);

    std::optional<duet::transport::http_server> made;
    try {
        made.emplace(std::vector<duet::transport::http_route>{{http.path, &srv}}, http, io);
    } catch (std::invalid_argument const& e) {
        std::fprintf(stderr, "duet-conformance-server: %s\n", e.what());
        return 2;
    }
    auto& server = *made;
    if (auto ec = server.listen()) {
        std::fprintf(stderr, "duet-conformance-server: cannot listen on %s:%u: %s\n", http.host.c_str(),
                     unsigned(http.port), ec.message().c_str());
        return 1;
    }
    std::printf("%s\n", server.url().c_str());
    std::fflush(stdout);
    server.run();
    return 0;
}
