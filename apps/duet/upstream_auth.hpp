// File: apps/duet/upstream_auth.hpp
//
// How `duet gateway` authenticates to its HTTP upstreams, per upstream. The gateway is a client of its own:
// a downstream client's token is never passed upstream (the MCP authorization spec forbids passthrough).
//
//   --upstream-header [UPSTREAM:]NAME=env:VAR | file:PATH   a static header, its value never on the command
//   line
//   --upstream-client-id [UPSTREAM=]ID                       the client credentials grant, with
//   --upstream-client-secret-file [UPSTREAM=]FILE            a secret (client_secret_basic), or
//   --upstream-private-key-file [UPSTREAM=]FILE              a PEM key (private_key_jwt,
//   --upstream-signing-alg)
//   --upstream-login / --upstream-login-for UPSTREAM         the tokens `duet login URL` stored (refreshed,
//   kept)
#pragma once

#include <duet/client/target.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <CLI/CLI.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace duet::apps {

/// A per-upstream flag's value: "NAME=VALUE" for the upstream NAME, a bare VALUE for every one (the named one
/// wins). An '=' after a '/' belongs to a path, not to a name.
struct per_upstream_value {
    std::string name; ///< empty: every upstream
    std::string value;
};
[[nodiscard]] per_upstream_value split_per_upstream(std::string const& given);

struct upstream_auth_flags {
    std::vector<std::string> headers;
    std::vector<std::string> client_id;
    std::vector<std::string> client_secret_file;
    std::vector<std::string> private_key_file;
    std::string signing_alg = "ES256";
    bool login = false;
    std::vector<std::string> login_for;
};

void add_upstream_auth_flags(CLI::App& cmd, upstream_auth_flags& flags);

/// One upstream as the flags see it.
struct upstream_ref {
    std::string const* name; ///< empty: the one unnamed upstream
    client::server_target* target;
};

/// One HTTP upstream's OAuth as a config file gives it, its secrets read already: the client credentials
/// grant with a secret (client_secret_basic) or a PEM private key (private_key_jwt), or, with no client id,
/// the tokens `duet login URL` stored.
struct upstream_oauth {
    std::string client_id; ///< empty: the stored tokens
    std::string client_secret;
    std::string private_key_pem;
    std::string signing_alg = "ES256";
};

/// Gives `http` its OAuth provider, made on `ex`; a usage error's text (an Authorization header besides, no
/// credentials store).
[[nodiscard]] std::optional<std::string> apply_upstream_oauth(upstream_oauth const& oauth,
                                                              std::string const& name,
                                                              client::http_target& http,
                                                              boost::asio::any_io_executor ex);

/// Applies the flags to each HTTP upstream (headers read from the environment and files now, providers made
/// on `ex`). A usage error's text when a flag names no upstream, applies to a stdio one, carries a literal
/// secret, or cannot be read.
[[nodiscard]] std::optional<std::string> apply_upstream_auth(upstream_auth_flags const& flags,
                                                             std::span<upstream_ref const> upstreams,
                                                             boost::asio::any_io_executor ex);

} // namespace duet::apps
