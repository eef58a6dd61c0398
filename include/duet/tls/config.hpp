/// @file duet/tls/config.hpp
///
/// What TLS a server listens with and what a client trusts: PEM files named by path, read when the server or
/// client is made (and again by http_server::reload_tls). OpenSSL through Asio's ssl::context; nothing else.
///
///     duet::transport::http_options opts;
///     opts.tls = duet::tls::server_config{.cert_file = "chain.pem", .key_file = "key.pem"};
///
///     duet::client::http_target t{"https://mcp.example/mcp"};
///     t.tls.ca_file = "private-ca.pem";           // trusted besides the system store
#pragma once

#include <chrono>
#include <memory>
#include <string>

namespace boost::asio::ssl {
class context;
}

namespace duet::tls {

/// A TLS listener: TLS 1.2 and 1.3 only, ALPN http/1.1, ECDHE with AES-GCM or ChaCha20-Poly1305, no
/// compression, no renegotiation.
struct server_config {
    std::string cert_file; ///< PEM: the server's certificate, then any intermediates
    std::string key_file;  ///< PEM: its private key (unencrypted)
    /// When set, every client must present a certificate this PEM bundle of CAs signed (mutual TLS); its
    /// subject reaches handlers (request_context::caller()).
    std::string client_ca_file;
    /// A handshake not done within this closes the connection.
    std::chrono::milliseconds handshake_timeout = std::chrono::seconds(10);
};

/// What a client trusts and shows for `https://` URLs. Peers are verified by default against the system
/// trust store, with SNI and a host-name check (DNS names and IP addresses of the certificate).
struct client_config {
    std::string ca_file;          ///< PEM bundle trusted besides the system store
    std::string client_cert_file; ///< PEM: a certificate to present (mutual TLS), with client_key_file
    std::string client_key_file;
    /// No verification at all: any certificate, any name. Each connection warns on stderr.
    bool insecure = false;
    /// One's own context, used as it is (the fields above are then not read). Shared between the client's
    /// connections; its verify mode and paths are the caller's, the host-name check is still added.
    std::shared_ptr<boost::asio::ssl::context> context;
};

} // namespace duet::tls
