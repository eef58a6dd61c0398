// File: apps/common/tls_flags.hpp
//
// The flags an HTTPS listener takes on every Duet program that serves (duet serve, duet gateway,
// duet-conformance-server): --tls-cert, --tls-key, --tls-client-ca.
//
//     duet::apps::tls_server_flags tls;
//     duet::apps::add_tls_server_flags(*serve, tls);
//     ... after parsing:
//     if(auto why = duet::apps::apply_tls_server_flags(tls, http)) { print(*why); return 2; }
#pragma once

#include <duet/transport/http_server.hpp>

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace duet::apps {

struct tls_server_flags {
    std::string cert;
    std::string key;
    std::string client_ca;
};

inline void add_tls_server_flags(CLI::App& app, tls_server_flags& flags) {
    app.add_option("--tls-cert", flags.cert,
                   "Serve HTTPS with this PEM certificate (then any intermediates); needs --tls-key. SIGHUP "
                   "reloads it and the key");
    app.add_option("--tls-key", flags.key, "The PEM private key of --tls-cert");
    app.add_option("--tls-client-ca", flags.client_ca,
                   "Require a client certificate this PEM bundle of CAs signed (mutual TLS)");
}

/// Sets http.tls from the flags; a usage error in words when they do not go together.
[[nodiscard]] inline std::optional<std::string> apply_tls_server_flags(tls_server_flags const& flags,
                                                                       transport::http_options& http) {
    if (flags.cert.empty() && flags.key.empty()) {
        if (!flags.client_ca.empty())
            return "--tls-client-ca needs --tls-cert and --tls-key (mutual TLS is TLS)";
        return std::nullopt;
    }
    if (flags.cert.empty() || flags.key.empty())
        return "--tls-cert and --tls-key go together";
    http.tls =
        tls::server_config{.cert_file = flags.cert, .key_file = flags.key, .client_ca_file = flags.client_ca};
    return std::nullopt;
}

} // namespace duet::apps
