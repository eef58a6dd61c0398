// File: tests/http/tls_support.hpp
//
// What the TLS suites (tests/http/tls_test.cpp, tests/client/tls_test.cpp, tests/client/tls_cli_test.cpp)
// share, on top of the run-time PKI (support/test_certs.hpp):
//
//  - https_server: the demo server in-process on port 0, over HTTPS when its options say so (plain HTTP
//    otherwise), plus a tool `whoami` answering the verified client-certificate subject its handler reads
//    (request_context::caller()), or "nobody". The http_server is reachable for reload_tls() and
//    tls_handshakes().
//  - tls_probe: a raw OpenSSL client over a blocking loopback socket, for what a test must control itself
//    (protocol versions, ALPN, client certificates, session resumption, the certificate the server shows)
//    and for MCP requests written and read as bytes. Every read and write is bounded.
//
//     temp_dir tmp;
//     test_pki pki(tmp.path());
//     https_server s(https_options(pki.issue({.name = "server", .ips = {"127.0.0.1"}})));
//     tls_probe p(s.port(), {.ca_file = pki.ca_file()});
//     ASSERT_TRUE(p.ok()) << p.error();
//     auto a = p.exchange(mcp_post(s.port(), call_request(1, "whoami")));
//     EXPECT_EQ(s.http().tls_handshakes().completed, 1u);
#pragma once

#include <duet/server/content.hpp>
#include <duet/server/server.hpp>
#include <duet/transport/http_server.hpp>

#include "demo_server.hpp"
#include "http/mcp_http.hpp"
#include "stdio/messages.hpp"
#include "support/openssl_handles.hpp"
#include "support/test_certs.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace duet::test::tls_side {

/// Generous bounds: only a hang ever waits this long.
inline constexpr auto tls_wait = std::chrono::seconds(30);

/// Options for an HTTPS server presenting `server` (a chain file and its key); with `client_ca`, mutual TLS.
inline transport::http_options https_options(cert_files const& server, std::string client_ca = {}) {
    transport::http_options o;
    o.tls = tls::server_config{.cert_file = server.cert, .key_file = server.key, .client_ca_file = client_ca};
    return o;
}

/// The demo server plus `whoami`, on `options` (port forced to 0, host 127.0.0.1), from a background thread.
class https_server {
public:
    explicit https_server(transport::http_options options)
        : srv_(apps::make_demo_server(protocol::era_support::both)) {
        srv_->add_tool(server::tool{.name = "whoami",
                                    .description = "The verified client-certificate subject, or nobody",
                                    .run_plain = server::plain_run::inline_on_io},
                       [](boost::json::object const&, server::request_context& ctx) {
                           auto const* who = ctx.caller();
                           return server::tool_result::text(who ? who->tls_subject : "nobody");
                       });
        options.host = "127.0.0.1";
        options.port = 0;
        http_ = std::make_unique<transport::http_server>(*srv_, std::move(options));
        if (auto ec = http_->listen()) {
            ADD_FAILURE() << "listen: " << ec.message();
            return;
        }
        thread_ = std::thread([this] { http_->run(); });
    }
    ~https_server() { stop(); }
    https_server(https_server const&) = delete;
    https_server& operator=(https_server const&) = delete;

    [[nodiscard]] transport::http_server& http() noexcept { return *http_; }
    [[nodiscard]] server::server& srv() noexcept { return *srv_; }
    [[nodiscard]] std::uint16_t port() const noexcept { return http_->port(); }
    [[nodiscard]] std::string url() const { return http_->url(); }
    /// The URL with another host name for the same port (e.g. "localhost").
    [[nodiscard]] std::string url_as(std::string const& host) const {
        return "https://" + host + ":" + std::to_string(port()) + "/mcp";
    }

    /// Drains the server and joins its thread; idempotent.
    void stop() {
        if (!thread_.joinable())
            return;
        http_->stop();
        thread_.join();
    }

private:
    std::unique_ptr<server::server> srv_;
    std::unique_ptr<transport::http_server> http_;
    std::thread thread_;
};

/// The serial number of `cert` as hexadecimal text.
inline std::string serial_of(X509* cert) {
    openssl::bignum bn(ASN1_INTEGER_to_BN(X509_get_serialNumber(cert), nullptr));
    if (!bn)
        throw openssl::error("ASN1_INTEGER_to_BN");
    char* hex = BN_bn2hex(bn.get());
    std::string out(hex);
    OPENSSL_free(hex);
    return out;
}

/// The serial of the first certificate in the PEM file `path` (the leaf of a chain file).
inline std::string serial_of_file(std::string const& path) {
    return serial_of(openssl::read_certs(path).front().get());
}

/// A modern MCP request to the demo server (`_meta` claims 2026-07-28).
inline boost::json::object call_request(std::int64_t id, std::string_view tool,
                                        boost::json::object arguments = {}) {
    return modern_request(id, "tools/call", call_params(tool, std::move(arguments)));
}

/// The bytes of a keep-alive POST of `message` to /mcp on 127.0.0.1:`port`, with the headers its era needs.
inline std::string mcp_post(std::uint16_t port, boost::json::value const& message) {
    auto const spec = http::post_spec(boost::json::serialize(message), http::modern_headers(message));
    std::string out = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\n";
    for (auto const& h : spec.headers)
        out += h.name + ": " + h.value + "\r\n";
    out += "Content-Length: " + std::to_string(spec.body.size()) + "\r\n\r\n" + spec.body;
    return out;
}

/// A response read from a tls_probe: the status (0 when none came), the head and the body.
struct probe_answer {
    unsigned status = 0;
    std::string head;
    std::string body;
    std::string failure; ///< why nothing (or not all) was read

    /// The text of the first content item of a tools/call result in a JSON body; empty when there is none.
    [[nodiscard]] std::string tool_text() const {
        boost::system::error_code ec;
        auto const v = boost::json::parse(body, ec);
        if (ec || !v.is_object())
            return {};
        auto const* result = v.as_object().if_contains("result");
        if (!result || !result->is_object())
            return {};
        auto const* content = result->as_object().if_contains("content");
        if (!content || !content->is_array() || content->as_array().empty())
            return {};
        auto const* text = content->as_array().front().as_object().if_contains("text");
        return text && text->is_string() ? std::string(text->as_string()) : std::string();
    }
};

/// A TCP connection to 127.0.0.1:`port` with bounded blocking reads and writes; -1 when it fails (and a
/// test failure).
inline int connect_loopback(std::uint16_t port) {
    int const fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        ADD_FAILURE() << "socket: " << std::strerror(errno);
        return -1;
    }
    timeval limit{};
    limit.tv_sec = std::chrono::duration_cast<std::chrono::seconds>(tls_wait).count();
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr const*>(&to), sizeof to) != 0) {
        ADD_FAILURE() << "connect to 127.0.0.1:" << port << ": " << std::strerror(errno);
        ::close(fd);
        return -1;
    }
    return fd;
}

/// Whether the peer closes `fd` (end of stream, or a reset) within `limit`, reading and dropping anything
/// it sends first.
inline bool peer_closes(int fd, std::chrono::milliseconds limit) {
    auto const deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
        auto const left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            return false;
        pollfd p{fd, POLLIN, 0};
        int const n = ::poll(&p, 1, static_cast<int>(left.count()));
        if (n < 0 && errno != EINTR)
            return false;
        if (n <= 0)
            continue;
        char buf[4096];
        auto const got = ::recv(fd, buf, sizeof buf, 0);
        if (got == 0 || (got < 0 && errno == ECONNRESET))
            return true;
        if (got < 0 && errno != EINTR && errno != EAGAIN)
            return false;
    }
}

/// OpenSSL's reason for the last error on this thread's queue (the queue emptied), else `fallback`.
inline std::string openssl_reason(std::string fallback) {
    unsigned long last = 0;
    while (auto e = ERR_get_error())
        last = e;
    if (last == 0)
        return fallback;
    char const* reason = ERR_reason_error_string(last);
    return reason ? reason : "OpenSSL error " + std::to_string(last);
}

struct probe_options {
    int min_version = TLS1_2_VERSION;
    int max_version = 0; ///< 0: the highest OpenSSL speaks
    /// Offered by ALPN in this order; empty: no ALPN extension at all.
    std::vector<std::string> alpn = {"http/1.1"};
    /// When set the server's certificate is verified against this CA (and its name is not looked at).
    std::string ca_file;
    /// Presented to the server when set (mutual TLS).
    std::optional<cert_files> client_cert;
    /// A session from an earlier probe, offered for resumption.
    std::shared_ptr<SSL_SESSION> resume;
    /// Security level 0, so that OpenSSL offers what its default level forbids (TLS 1.0 and 1.1).
    bool allow_legacy_protocols = false;
    /// Offers compression as far as this OpenSSL can (it is off by default).
    bool offer_compression = false;
};

/// A raw TLS client connection: TCP connect and the handshake in the constructor.
class tls_probe {
public:
    tls_probe(std::uint16_t port, probe_options const& o = {}) {
        // OpenSSL writes to the socket itself, with no MSG_NOSIGNAL: a server that closed first would raise
        // SIGPIPE in the test process instead of failing the write.
        std::signal(SIGPIPE, SIG_IGN);
        ERR_clear_error();
        ctx_.reset(SSL_CTX_new(TLS_client_method()));
        if (!ctx_) {
            error_ = openssl_reason("SSL_CTX_new failed");
            return;
        }
        SSL_CTX_set_min_proto_version(ctx_.get(), o.min_version);
        SSL_CTX_set_max_proto_version(ctx_.get(), o.max_version);
        if (o.allow_legacy_protocols)
            SSL_CTX_set_cipher_list(ctx_.get(), "DEFAULT:@SECLEVEL=0");
        if (o.offer_compression)
            SSL_CTX_clear_options(ctx_.get(), SSL_OP_NO_COMPRESSION);
        SSL_CTX_set_session_cache_mode(ctx_.get(), SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
        if (!o.alpn.empty()) {
            std::string wire;
            for (auto const& p : o.alpn)
                wire += static_cast<char>(p.size()) + p;
            SSL_CTX_set_alpn_protos(ctx_.get(), reinterpret_cast<unsigned char const*>(wire.data()),
                                    static_cast<unsigned>(wire.size()));
        }
        if (!o.ca_file.empty()) {
            SSL_CTX_load_verify_locations(ctx_.get(), o.ca_file.c_str(), nullptr);
            SSL_CTX_set_verify(ctx_.get(), SSL_VERIFY_PEER, nullptr);
        }
        if (o.client_cert) {
            if (SSL_CTX_use_certificate_chain_file(ctx_.get(), o.client_cert->cert.c_str()) != 1 ||
                SSL_CTX_use_PrivateKey_file(ctx_.get(), o.client_cert->key.c_str(), SSL_FILETYPE_PEM) != 1) {
                error_ = openssl_reason("cannot load the client certificate");
                return;
            }
        }
        fd_ = connect_loopback(port);
        if (fd_ < 0) {
            error_ = "no TCP connection";
            return;
        }
        ssl_.reset(SSL_new(ctx_.get()));
        SSL_set_fd(ssl_.get(), fd_);
        if (o.resume)
            SSL_set_session(ssl_.get(), o.resume.get());
        if (SSL_connect(ssl_.get()) == 1)
            ok_ = true;
        else
            error_ = openssl_reason("the handshake failed without an OpenSSL error");
    }
    ~tls_probe() {
        // A connection freed without its close_notify marks its session not resumable (OpenSSL takes it for
        // a broken one): sent first, so that session() can be offered again.
        if (ok_) {
            ERR_clear_error();
            SSL_shutdown(ssl_.get());
            ERR_clear_error();
        }
        ssl_.reset();
        if (fd_ >= 0)
            ::close(fd_);
    }
    tls_probe(tls_probe const&) = delete;
    tls_probe& operator=(tls_probe const&) = delete;

    /// The handshake succeeded.
    [[nodiscard]] bool ok() const noexcept { return ok_; }
    /// OpenSSL's reason the handshake (or the last read) failed, e.g. "tlsv1 alert protocol version".
    [[nodiscard]] std::string const& error() const noexcept { return error_; }
    [[nodiscard]] SSL* ssl() const noexcept { return ssl_.get(); }
    [[nodiscard]] int fd() const noexcept { return fd_; }

    /// The protocol the server selected by ALPN; empty when none.
    [[nodiscard]] std::string alpn() const {
        unsigned char const* p = nullptr;
        unsigned n = 0;
        SSL_get0_alpn_selected(ssl_.get(), &p, &n);
        return std::string(reinterpret_cast<char const*>(p), n);
    }
    /// The serial of the certificate the server presented; empty when none.
    [[nodiscard]] std::string peer_serial() const {
        openssl::x509 cert(SSL_get1_peer_certificate(ssl_.get()));
        return cert ? serial_of(cert.get()) : std::string();
    }
    /// The session to offer on a later connection (TLS 1.3 sends its tickets after the handshake: read an
    /// answer first).
    [[nodiscard]] std::shared_ptr<SSL_SESSION> session() const {
        SSL_SESSION* s = SSL_get1_session(ssl_.get());
        return s ? std::shared_ptr<SSL_SESSION>(s, &SSL_SESSION_free) : nullptr;
    }

    /// Writes `bytes` through TLS; false (error() says why) when that fails.
    bool write(std::string const& bytes) {
        ERR_clear_error();
        std::size_t written = 0;
        while (written < bytes.size()) {
            int const n =
                SSL_write(ssl_.get(), bytes.data() + written, static_cast<int>(bytes.size() - written));
            if (n <= 0) {
                error_ = openssl_reason("SSL_write failed: " + std::string(std::strerror(errno)));
                return false;
            }
            written += static_cast<std::size_t>(n);
        }
        return true;
    }

    /// Sends an HTTP request and reads its response (a Content-Length body).
    probe_answer exchange(std::string const& request) {
        probe_answer a;
        if (!write(request)) {
            a.failure = error_;
            return a;
        }
        while (rest_.find("\r\n\r\n") == std::string::npos)
            if (!read_more(a.failure))
                return a;
        auto const end = rest_.find("\r\n\r\n");
        a.head = rest_.substr(0, end + 2);
        rest_.erase(0, end + 4);
        if (a.head.starts_with("HTTP/1.1 "))
            a.status = static_cast<unsigned>(std::stoul(a.head.substr(9, 3)));
        auto const length = a.head.find("\r\nContent-Length: ");
        if (length == std::string::npos) {
            a.failure = "the response has no Content-Length: " + a.head;
            return a;
        }
        auto const size = std::stoul(a.head.substr(length + 18));
        while (rest_.size() < size)
            if (!read_more(a.failure))
                return a;
        a.body = rest_.substr(0, size);
        rest_.erase(0, size);
        return a;
    }

    /// Reads until the server ends the connection or a read fails: true when it did within the socket's
    /// bound (an answer read meanwhile is dropped); error() then holds OpenSSL's reason, if any.
    bool server_ends() {
        std::string why;
        while (read_more(why)) {
        }
        error_ = why;
        return why.find("timed out") == std::string::npos;
    }

private:
    bool read_more(std::string& failure) {
        ERR_clear_error();
        char buf[16 * 1024];
        int const n = SSL_read(ssl_.get(), buf, sizeof buf);
        if (n > 0) {
            rest_.append(buf, static_cast<std::size_t>(n));
            return true;
        }
        int const e = SSL_get_error(ssl_.get(), n);
        if (e == SSL_ERROR_ZERO_RETURN)
            failure = "closed by the server (close_notify)";
        else if (e == SSL_ERROR_SYSCALL && (errno == EAGAIN || errno == EWOULDBLOCK))
            failure = "timed out";
        else
            failure = openssl_reason("the connection ended (" + std::string(std::strerror(errno)) + ")");
        return false;
    }

    openssl::handle<SSL_CTX, SSL_CTX_free> ctx_;
    openssl::handle<SSL, SSL_free> ssl_;
    int fd_ = -1;
    bool ok_ = false;
    std::string error_;
    std::string rest_;
};

} // namespace duet::test::tls_side
