// The ssl::contexts Duet listens and connects with, made from duet/tls/config.hpp. Every way a file can be
// wrong comes back as a sentence naming the file, never as an exception, so that a server can refuse a
// rotated certificate and keep serving with the one it has.
//
//     auto made = tls::make_server_context(config);
//     if(!made.context) log(made.error);   // "cannot load the key of --tls-key k.pem: ..."
#pragma once

#include <duet/tls/config.hpp>

#include <boost/asio/ssl/context.hpp>

#include <memory>
#include <string>

namespace duet::tls {

struct made_context {
    std::shared_ptr<boost::asio::ssl::context> context; ///< null when `error` says why
    std::string error;
};

/// TLS 1.2/1.3, ALPN http/1.1, the modern cipher list, no compression or renegotiation; the certificate chain
/// and key (checked to match); with client_ca_file, a client certificate that CA signed is required.
[[nodiscard]] made_context make_server_context(server_config const& config);

/// The system trust store plus ca_file, the client certificate when given, ALPN http/1.1; peers verified
/// unless `insecure`. config.context, when set, is returned as it is.
[[nodiscard]] made_context make_client_context(client_config const& config);

/// The text of the last OpenSSL error on this thread's queue (then cleared), or `fallback`.
[[nodiscard]] std::string take_openssl_error(std::string fallback = "unknown TLS error");

} // namespace duet::tls
