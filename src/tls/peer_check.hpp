// What a client checks of the server it reached over TLS, and how a failure is told: SNI and the host-name
// check set on a connection before its handshake, the first verification failure kept in words
// ("certificate verify failed: certificate has expired", "host name mismatch: cert is for a.example").
//
//     auto check = tls::check_peer(*io.tls(), url.host, insecure);
//     auto [ec] = co_await io.tls()->async_handshake(client, token);
//     if(ec) fail(tls::describe_handshake_failure(ec, *check));
#pragma once

#include "tls/either_stream.hpp"

#include <boost/system/error_code.hpp>

#include <openssl/types.h>

#include <memory>
#include <string>
#include <string_view>

namespace duet::tls {

/// The first reason verification refused the server's certificate (empty: it did not).
struct peer_verdict {
    std::string failure;
};

/// Prepares `stream` for a client handshake with `host` (a DNS name or an IP literal without brackets): SNI
/// for names, the name or address the certificate must carry, and the record of why it was refused. With
/// `insecure` nothing is verified and a warning goes to stderr.
[[nodiscard]] std::shared_ptr<peer_verdict> check_peer(tls_stream& stream, std::string const& host,
                                                       bool insecure);

/// Why a handshake failed, in words: the verification's reason when it refused, else "TLS handshake failed:
/// " and describe_tls_error().
[[nodiscard]] std::string describe_handshake_failure(boost::system::error_code ec,
                                                     peer_verdict const& verdict);
/// OpenSSL's reason for `ec`, without the library's name ("wrong version number", "tlsv1 alert unknown ca").
[[nodiscard]] std::string describe_tls_error(boost::system::error_code ec);

/// The names a certificate is for: its DNS and IP subjectAltNames, else its common name.
[[nodiscard]] std::string certificate_names(X509* certificate);

/// The subject of the certificate the peer presented and verification accepted (RFC 2253 text), or empty.
[[nodiscard]] std::string verified_peer_subject(tls_stream& stream);

} // namespace duet::tls
