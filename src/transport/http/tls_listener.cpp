#include "tls_listener.hpp"

#include "tls/context.hpp"
#include "tls/peer_check.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/write.hpp>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <cstdio>
#include <stdexcept>

namespace duet::transport::http {

namespace asio = boost::asio;

namespace {

std::string peer_of(bounded_socket& stream) {
    boost::system::error_code ec;
    auto const ep = stream.socket().remote_endpoint(ec);
    if (ec)
        return "a client";
    return ep.address().to_string() + ":" + std::to_string(ep.port());
}

// What OpenSSL says of a plain HTTP request on a TLS port (SSL_R_HTTP_REQUEST); answered as nginx does,
// so that a client that forgot the s of https reads why.
bool plain_http_sent(boost::system::error_code ec) {
    return ec.category() == asio::error::get_ssl_category() &&
           ERR_GET_REASON(static_cast<unsigned long>(ec.value())) == SSL_R_HTTP_REQUEST;
}

constexpr std::string_view plain_http_answer = "HTTP/1.1 400 Bad Request\r\n"
                                               "Content-Type: text/plain\r\n"
                                               "Content-Length: 48\r\n"
                                               "Connection: close\r\n\r\n"
                                               "This server speaks HTTPS only: use an https URL\n";

} // namespace

tls_listener::tls_listener(tls::server_config config) : config_(std::move(config)) {
    auto made = tls::make_server_context(config_);
    if (!made.context)
        throw std::invalid_argument("TLS: " + made.error);
    context_ = std::move(made.context);
}

std::shared_ptr<asio::ssl::context> tls_listener::current() const {
    std::lock_guard lock(mutex_);
    return context_;
}

std::optional<std::string> tls_listener::reload() {
    auto made = tls::make_server_context(config_);
    if (!made.context)
        return made.error;
    std::lock_guard lock(mutex_);
    context_ = std::move(made.context);
    return std::nullopt;
}

tls_counts tls_listener::counts() const noexcept {
    return {completed_.load(), resumed_.load(), failed_.load()};
}

void tls_listener::log_failure(std::string const& text) {
    auto const now =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
    auto last = last_log_.load();
    if (last == now || !last_log_.compare_exchange_strong(last, now)) {
        ++unlogged_;
        return;
    }
    auto const others = unlogged_.exchange(0);
    if (others == 0)
        std::fprintf(stderr, "duet http: %s\n", text.c_str());
    else
        std::fprintf(stderr, "duet http: %s (and %llu other failed handshakes)\n", text.c_str(),
                     static_cast<unsigned long long>(others));
}

asio::awaitable<bool> tls_listener::handshake(bounded_socket& stream) {
    stream.start_tls(*current());
    auto* tls = stream.tls();
    stream.bound(config_.handshake_timeout);
    auto const done =
        co_await tls->async_handshake(asio::ssl::stream_base::server, asio::as_tuple(asio::deferred));
    stream.unbound();
    auto const ec = std::get<0>(done);
    if (ec) {
        ++failed_;
        std::string why;
        if (stream.timed_out())
            why = "not done within " + std::to_string(config_.handshake_timeout.count()) + " ms";
        else if (plain_http_sent(ec)) {
            why = "plain HTTP sent to the HTTPS port";
            boost::system::error_code ignored;
            asio::write(stream.socket(), asio::buffer(plain_http_answer), ignored);
        } else
            why = tls::describe_tls_error(ec);
        log_failure("TLS handshake with " + peer_of(stream) + " failed: " + why);
        co_return false;
    }
    ++completed_;
    if (SSL_session_reused(tls->native_handle()))
        ++resumed_;
    if (!config_.client_ca_file.empty())
        if (auto subject = tls::verified_peer_subject(*tls); !subject.empty())
            stream.set_caller(std::make_shared<protocol::caller_identity const>(
                protocol::caller_identity{.tls_subject = std::move(subject)}));
    co_return true;
}

asio::awaitable<void> tls_listener::close(bounded_socket& stream) {
    // As if the peer's close_notify had come: OpenSSL then sends ours and is done, instead of waiting for an
    // answer that HTTP clients seldom send.
    SSL_set_shutdown(stream.tls()->native_handle(), SSL_RECEIVED_SHUTDOWN);
    stream.bound(stream.shortest());
    co_await stream.tls()->async_shutdown(asio::as_tuple(asio::deferred));
    stream.unbound();
}

} // namespace duet::transport::http
