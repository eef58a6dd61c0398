#include "tls/context.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace duet::tls {

namespace ssl = boost::asio::ssl;

namespace {

// ECDHE only (forward secrecy), AEAD only; TLS 1.3's own suites are OpenSSL's defaults, all modern.
constexpr char const* tls12_ciphers = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
                                      "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
                                      "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

constexpr unsigned char alpn_http11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};

// A file OpenSSL could not read is named with the system's reason, which OpenSSL's own queue words poorly.
std::string unreadable(std::string const& what, std::string const& path) {
    std::ifstream in(path);
    if (in)
        return {};
    return "cannot read " + what + " " + path + ": " + std::strerror(errno);
}

// RFC 7301: a client that offers protocols but not HTTP/1.1 cannot be served here.
int select_http11(SSL*, unsigned char const** out, unsigned char* out_len, unsigned char const* in,
                  unsigned in_len, void*) {
    unsigned char* chosen = nullptr;
    if (SSL_select_next_proto(&chosen, out_len, alpn_http11, sizeof alpn_http11, in, in_len) !=
        OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    *out = chosen;
    return SSL_TLSEXT_ERR_OK;
}

// A key OpenSSL refused: most often the key of another certificate, which OpenSSL calls "key values
// mismatch".
std::string key_error(std::string const& what, std::string const& key_file, std::string const& cert_file) {
    unsigned long last = 0;
    while (auto e = ERR_get_error())
        last = e;
    if (last == 0 || ERR_GET_REASON(last) == X509_R_KEY_VALUES_MISMATCH)
        return what + " " + key_file + " does not match the certificate " + cert_file;
    char const* reason = ERR_reason_error_string(last);
    return "cannot load " + what + " " + key_file + ": " + (reason ? reason : "unknown TLS error");
}

made_context failed(std::string error) {
    return made_context{nullptr, std::move(error)};
}

void common_settings(SSL_CTX* h) {
    SSL_CTX_set_min_proto_version(h, TLS1_2_VERSION);
    SSL_CTX_set_options(h, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
    SSL_CTX_set_cipher_list(h, tls12_ciphers);
}

} // namespace

std::string take_openssl_error(std::string fallback) {
    unsigned long last = 0;
    while (auto e = ERR_get_error())
        last = e;
    if (last == 0)
        return fallback;
    if (char const* reason = ERR_reason_error_string(last))
        return reason;
    char text[256];
    ERR_error_string_n(last, text, sizeof text);
    return text;
}

made_context make_server_context(server_config const& config) {
    if (config.cert_file.empty() || config.key_file.empty())
        return failed("TLS needs both a certificate chain and its key");
    if (auto e = unreadable("the certificate chain", config.cert_file); !e.empty())
        return failed(e);
    if (auto e = unreadable("the private key", config.key_file); !e.empty())
        return failed(e);
    ERR_clear_error();
    auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
    SSL_CTX* h = ctx->native_handle();
    common_settings(h);
    SSL_CTX_set_options(h, SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_set_alpn_select_cb(h, select_http11, nullptr);
    // Resumed sessions (tickets) are checked against this context, or OpenSSL refuses them when client
    // certificates are verified.
    static constexpr unsigned char session_context[] = "duet";
    SSL_CTX_set_session_id_context(h, session_context, sizeof session_context - 1);
    if (SSL_CTX_use_certificate_chain_file(h, config.cert_file.c_str()) != 1)
        return failed("cannot load the certificate chain " + config.cert_file + ": " + take_openssl_error());
    if (SSL_CTX_use_PrivateKey_file(h, config.key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(h) != 1)
        return failed(key_error("the private key", config.key_file, config.cert_file));
    if (!config.client_ca_file.empty()) {
        if (auto e = unreadable("the client CA bundle", config.client_ca_file); !e.empty())
            return failed(e);
        if (SSL_CTX_load_verify_locations(h, config.client_ca_file.c_str(), nullptr) != 1)
            return failed("cannot load the client CA bundle " + config.client_ca_file + ": " +
                          take_openssl_error());
        if (auto* names = SSL_load_client_CA_file(config.client_ca_file.c_str()))
            SSL_CTX_set_client_CA_list(h, names); // the context owns them now
        SSL_CTX_set_verify(h, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    }
    return made_context{std::move(ctx), {}};
}

made_context make_client_context(client_config const& config) {
    if (config.context)
        return made_context{config.context, {}};
    if (config.client_cert_file.empty() != config.client_key_file.empty())
        return failed("a client certificate needs its key, and a key its certificate");
    ERR_clear_error();
    auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
    SSL_CTX* h = ctx->native_handle();
    common_settings(h);
    SSL_CTX_set_alpn_protos(h, alpn_http11, sizeof alpn_http11);
    // Sessions are kept by the client per server (session resumption on reconnect), not in OpenSSL's cache.
    SSL_CTX_set_session_cache_mode(h, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    if (!config.insecure) {
        if (SSL_CTX_set_default_verify_paths(h) != 1)
            return failed("cannot load the system trust store: " + take_openssl_error());
        if (!config.ca_file.empty()) {
            if (auto e = unreadable("the CA bundle", config.ca_file); !e.empty())
                return failed(e);
            if (SSL_CTX_load_verify_locations(h, config.ca_file.c_str(), nullptr) != 1)
                return failed("cannot load the CA bundle " + config.ca_file + ": " + take_openssl_error());
        }
        SSL_CTX_set_verify(h, SSL_VERIFY_PEER, nullptr);
    } else {
        SSL_CTX_set_verify(h, SSL_VERIFY_NONE, nullptr);
    }
    if (!config.client_cert_file.empty()) {
        if (auto e = unreadable("the client certificate", config.client_cert_file); !e.empty())
            return failed(e);
        if (auto e = unreadable("the client key", config.client_key_file); !e.empty())
            return failed(e);
        if (SSL_CTX_use_certificate_chain_file(h, config.client_cert_file.c_str()) != 1)
            return failed("cannot load the client certificate " + config.client_cert_file + ": " +
                          take_openssl_error());
        if (SSL_CTX_use_PrivateKey_file(h, config.client_key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
            SSL_CTX_check_private_key(h) != 1)
            return failed(key_error("the client key", config.client_key_file, config.client_cert_file));
    }
    return made_context{std::move(ctx), {}};
}

} // namespace duet::tls
