// File: apps/common/listener_flags.hpp
//
// The limits and checks an HTTP listener takes on every Duet program that serves (duet serve, duet gateway):
// which Host names it answers beyond loopback, how many connections and sessions it holds, and the bearer
// token it requires, read from a file or the environment (never from argv, where `ps` shows it).
//
//     duet::apps::listener_flags flags;
//     duet::apps::add_listener_flags(*serve, flags, http);
//     ... after parsing:
//     if(auto why = duet::apps::apply_listener_flags(flags, http)) { print(*why); return 2; }
#pragma once

#include <duet/transport/http_server.hpp>

#include "secret_file.hpp"

#include <boost/asio/ip/address.hpp>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

namespace duet::apps {

/// Where `duet serve` looks for its bearer token when no --bearer-token-file is given.
inline constexpr char const* bearer_token_variable = "DUET_BEARER_TOKEN";

struct listener_flags {
    std::string bearer_token_file;
    std::string bearer_token; ///< on argv: kept working, with a warning
};

inline void add_listener_flags(CLI::App& app, listener_flags& flags, transport::http_options& http) {
    app.add_option(
        "--allow-host", http.allowed_hosts,
        "A Host name (or host:port) clients use, besides loopback ones; needed to be reached beyond "
        "loopback ('*': any)");
    app.add_option("--max-connections", http.max_connections,
                   "Open connections at once (default: the descriptor limit less 64)");
    app.add_option("--max-sessions", http.max_sessions, "Legacy sessions at once (default 10000)")
        ->check(CLI::PositiveNumber);
    app.add_option(
           "--session-rate", http.sessions_per_second_per_peer,
           "Legacy sessions one address may open per second after a burst of 1024 (default 1; 0: no bound)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--bearer-token-file", flags.bearer_token_file,
                   std::string("Require Authorization: Bearer with the token in this file (else the ") +
                       bearer_token_variable + " environment variable, when set)")
        ->check(CLI::ExistingFile);
    app.add_option("--bearer-token", flags.bearer_token,
                   "The same with the token itself (deprecated: argv is visible to every user of the "
                   "machine; use --bearer-token-file)");
}

/// Reads the bearer token (file, else environment); a usage error in words.
[[nodiscard]] inline std::optional<std::string> apply_listener_flags(listener_flags const& flags,
                                                                     transport::http_options& http) {
    std::string token;
    if (!flags.bearer_token.empty() && !flags.bearer_token_file.empty())
        return std::string("--bearer-token and --bearer-token-file exclude each other");
    if (!flags.bearer_token.empty()) {
        std::fputs("duet: warning: --bearer-token puts the token where `ps` shows it to every user of this "
                   "machine; use --bearer-token-file or DUET_BEARER_TOKEN\n",
                   stderr);
        token = flags.bearer_token;
    } else if (!flags.bearer_token_file.empty()) {
        if (auto bad = read_secret_file("--bearer-token-file", flags.bearer_token_file, token))
            return bad;
    } else if (char const* env = std::getenv(bearer_token_variable); env && *env) {
        token = env;
    }
    // Read once; children (a gateway's stdio upstreams) do not inherit it.
    ::unsetenv(bearer_token_variable);
    if (!token.empty())
        http.bearer_token = std::move(token);
    boost::system::error_code ec;
    auto const address = boost::asio::ip::make_address(http.host, ec);
    if (!ec && !address.is_loopback() && http.allowed_hosts.empty())
        std::fprintf(
            stderr,
            "duet: bound to %s beyond loopback without --allow-host: only requests whose Host is that "
            "address (or a loopback name) are answered\n",
            http.host.c_str());
    return std::nullopt;
}

} // namespace duet::apps
