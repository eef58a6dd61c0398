// File: apps/common/auth_flags.hpp
//
// The flags that make a Duet program that serves (duet serve, duet gateway, duet-conformance-server) an
// OAuth 2.1 resource server: whose tokens it takes (--auth-issuer), for which resource (--auth-audience), how
// it checks them (--auth-jwks, or --auth-introspection with the server's own client credentials), and the
// scopes every request needs (--auth-scopes). Secrets come from files, never from argv.
//
//     duet::apps::auth_flags auth;
//     duet::apps::add_auth_flags(*serve, auth);
//     ... after parsing, with the io_context the server will run:
//     if(auto why = duet::apps::apply_auth_flags(auth, http, io.get_executor())) { print(*why); return 2; }
#pragma once

#include <duet/auth/scopes.hpp>
#include <duet/auth/verifiers.hpp>
#include <duet/transport/http_server.hpp>

#include "secret_file.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace duet::apps {

struct auth_flags {
    std::string issuer;
    std::string audience;
    std::string jwks;
    std::string introspection;
    std::string client_id;
    std::string client_secret_file;
    /// The secret itself, read already (a config file's clientSecret); client_secret_file wins over it.
    std::string client_secret;
    std::string scopes;
    std::string ca_file;
    std::string resource_name;
};

inline void add_auth_flags(CLI::App& app, auth_flags& flags) {
    app.add_option("--auth-issuer", flags.issuer,
                   "Require OAuth access tokens from this authorization server (its issuer URL)");
    app.add_option("--auth-audience", flags.audience,
                   "This server's resource identifier: the public URL of its endpoint, which tokens must "
                   "name as their audience");
    app.add_option("--auth-jwks", flags.jwks, "Verify JWT access tokens against the JWK Set at this URL");
    app.add_option("--auth-introspection", flags.introspection,
                   "Check tokens at this introspection endpoint (RFC 7662) instead; needs --auth-client-id");
    app.add_option("--auth-client-id", flags.client_id,
                   "This server's client id at the introspection endpoint");
    app.add_option("--auth-client-secret-file", flags.client_secret_file,
                   "A file holding this server's client secret at the introspection endpoint")
        ->check(CLI::ExistingFile);
    app.add_option("--auth-scopes", flags.scopes, "Scopes every request's token needs, space-separated");
    app.add_option("--auth-ca-file", flags.ca_file,
                   "A PEM bundle trusted (besides the system's) for the JWK Set and introspection URLs")
        ->check(CLI::ExistingFile);
    app.add_option("--auth-resource-name", flags.resource_name,
                   "A name for people in the protected resource metadata");
}

/// Sets http.authorization from the flags, its verifier fetching on `ex` (the executor of the io_context the
/// server runs); a usage error in words. Nothing is set when no --auth-* flag is given.
[[nodiscard]] inline std::optional<std::string>
apply_auth_flags(auth_flags const& flags, transport::http_options& http, boost::asio::any_io_executor ex) {
    bool const any = !flags.issuer.empty() || !flags.audience.empty() || !flags.jwks.empty() ||
                     !flags.introspection.empty() || !flags.client_id.empty() ||
                     !flags.client_secret_file.empty() || !flags.client_secret.empty() ||
                     !flags.scopes.empty() || !flags.ca_file.empty() || !flags.resource_name.empty();
    if (!any)
        return std::nullopt;
    if (flags.issuer.empty() || flags.audience.empty())
        return std::string("--auth-* flags need both --auth-issuer and --auth-audience");
    if (flags.jwks.empty() == flags.introspection.empty())
        return std::string("give one of --auth-jwks (JWT access tokens) and --auth-introspection (opaque "
                           "tokens)");
    if (!flags.introspection.empty() && flags.client_id.empty())
        return std::string("--auth-introspection needs --auth-client-id");
    if (flags.introspection.empty() &&
        (!flags.client_id.empty() || !flags.client_secret_file.empty() || !flags.client_secret.empty()))
        return std::string("--auth-client-id and --auth-client-secret-file go with --auth-introspection");
    if (http.bearer_token)
        return std::string("a static bearer token (--bearer-token-file, DUET_BEARER_TOKEN) and --auth-issuer "
                           "exclude each other");

    auth::token_rules rules;
    rules.issuer = flags.issuer;
    rules.audience = flags.audience;
    std::shared_ptr<auth::token_verifier> verifier;
    if (!flags.jwks.empty()) {
        auth::jwks_options options;
        options.tls.ca_file = flags.ca_file;
        auto made = auth::make_jwt_verifier(ex, flags.jwks, std::move(rules), std::move(options));
        if (!made)
            return "--auth-jwks: " + made.error().message;
        verifier = std::move(*made);
    } else {
        auth::introspection_options options;
        options.tls.ca_file = flags.ca_file;
        options.client_id = flags.client_id;
        options.client_secret = flags.client_secret;
        if (!flags.client_secret_file.empty())
            if (auto bad = read_secret_file("--auth-client-secret-file", flags.client_secret_file,
                                            options.client_secret))
                return bad;
        auto made = auth::make_introspection_token_verifier(ex, flags.introspection, std::move(rules),
                                                            std::move(options));
        if (!made)
            return "--auth-introspection: " + made.error().message;
        verifier = std::move(*made);
    }
    http.authorization = transport::protected_resource{.verifier = std::move(verifier),
                                                       .resource = flags.audience,
                                                       .authorization_servers = {flags.issuer},
                                                       .required_scopes = auth::split_scopes(flags.scopes),
                                                       .scopes_supported = {},
                                                       .resource_name = flags.resource_name,
                                                       .resource_documentation = {}};
    return std::nullopt;
}

} // namespace duet::apps
