// The HTTP client's connections: kept-alive ones taken and given back, the TLS handshake and the session
// offered for resumption, connecting, and one request written and its answer's head read (again on a new
// connection when a kept one turns out closed). Apart from the transport's face: the part that connects
// sockets and speaks to OpenSSL.
#include "http_transport.hpp"
#include "support/descriptors.hpp"
#include "support/send_now.hpp"
#include "tls/peer_check.hpp"

#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <openssl/ssl.h>

#include <array>

namespace duet::client::detail::streamable_http {

// An idle kept-alive connection, or a fresh exchange to connect.
std::shared_ptr<exchange> http_transport::take_exchange() {
    while (!idle_.empty()) {
        auto x = std::move(idle_.back());
        idle_.pop_back();
        if (x->stream.socket().is_open())
            return x;
    }
    return std::make_shared<exchange>(ex_);
}

// After a response read to its end: the connection serves the next POST unless either side ends it.
void http_transport::keep(std::shared_ptr<exchange> const& x, response_parser const& parser) {
    remember_tls_session(*x);
    if (closed_ || x->abandoned || !parser.is_done() || !parser.keep_alive() || x->buffer.size() != 0 ||
        idle_.size() >= max_idle_connections)
        return;
    idle_.push_back(x);
}

// The session to resume on the next connection. TLS 1.3 sends its tickets after the handshake, so this is
// also read again once an answer arrived. Kept as a copy: OpenSSL marks a connection's own session not
// resumable when the connection is freed without a close_notify sent, as one the server closed is.
void http_transport::remember_tls_session(exchange& x) {
    if (!x.io.is_tls())
        return;
    SSL_SESSION* s = SSL_get0_session(x.io.tls()->native_handle());
    if (!s || s == tls_session_source_.get() || !SSL_SESSION_is_resumable(s))
        return;
    SSL_SESSION* copy = SSL_SESSION_dup(s);
    if (!copy || SSL_SESSION_up_ref(s) != 1) {
        SSL_SESSION_free(copy);
        return;
    }
    tls_session_.reset(copy, &SSL_SESSION_free);
    tls_session_source_.reset(s, &SSL_SESSION_free); // held, so that its address names no other
}

// The TLS handshake on a new connection: SNI, the host-name check, the last session offered for reuse.
awaitable<boost::system::error_code> http_transport::async_handshake(std::shared_ptr<exchange> x) {
    x->io.start_tls(*tls_context_);
    auto* stream = x->io.tls();
    auto const verdict = tls::check_peer(*stream, url_.host, target_.tls.insecure && !target_.tls.context);
    if (tls_session_)
        SSL_set_session(stream->native_handle(), tls_session_.get());
    head_deadlines_.start(x);
    auto const done = co_await stream->async_handshake(asio::ssl::stream_base::client, tuple_awaitable);
    head_deadlines_.stop(*x);
    auto ec = std::get<0>(done);
    if (ec) {
        x->failure = x->deadline.expired ? "the TLS handshake timed out"
                                         : tls::describe_handshake_failure(ec, *verdict);
        if (x->deadline.expired)
            ec = beast::error::timeout;
        co_return ec;
    }
    remember_tls_session(*x);
    co_return boost::system::error_code{};
}

awaitable<boost::system::error_code> http_transport::async_connect(std::shared_ptr<exchange> x) {
    x->io.reset();
    x->failure.clear();
    if (!endpoints_) {
        tcp::resolver resolver(ex_);
        auto const resolved =
            co_await resolver.async_resolve(url_.host, std::to_string(url_.port), tuple_awaitable);
        if (std::get<0>(resolved))
            co_return std::get<0>(resolved);
        endpoints_ = std::get<1>(resolved); // loopback names do not move while the client lives
    }
    x->stream.expires_after(connect_timeout);
    auto const connected = co_await x->stream.async_connect(*endpoints_, tuple_awaitable);
    // From here the exchange's own deadline bounds it (async_open()): Beast's expiry would arm and cancel
    // a timer around every read and write.
    x->stream.expires_never();
    if (std::get<0>(connected))
        co_return std::get<0>(connected);
    boost::system::error_code ignored; // small requests and answers go out at once, not after a delayed ACK
    x->stream.socket().set_option(tcp::no_delay(true), ignored);
    // Asio opens sockets without close-on-exec, and Beast opens this one inside the connect: marked as
    // soon as it is ours. A child forked meanwhile closes it anyway (stdio_transport).
    support::set_close_on_exec(x->stream.socket().native_handle());
    if (url_.tls)
        if (auto ec = co_await async_handshake(x))
            co_return ec;
    x->connected = true;
    co_return boost::system::error_code{};
}

// Connects (or reuses a kept-alive connection), writes `req` and reads the response head into `parser`.
// A reused connection the server closed while it was idle fails before any byte of the answer arrives:
// the request goes again once, on a new connection.
awaitable<boost::system::error_code>
http_transport::async_open(std::shared_ptr<exchange> x, outgoing const& req, response_parser& parser) {
    auto const bytes = std::array{asio::buffer(req.head), asio::buffer(req.body)};
    parser.body_limit(boost::none); // response_parser bounds whole answers; streams, the SSE reader
    parser.max_whole_body(max_message_bytes_);
    parser.header_limit(64 * 1024);
    bool const reused = x->connected;
    if (!reused)
        if (auto ec = co_await async_connect(x))
            co_return ec;
    boost::system::error_code ec;
    for (bool retried = false;; retried = true) {
        head_deadlines_.start(x);
        ec = {};
        // Plain connections try the socket first; TLS goes through OpenSSL.
        auto const rest =
            x->io.is_tls() ? bytes : support::send_now(x->stream.socket().native_handle(), bytes);
        if (asio::buffer_size(rest) != 0) {
            auto const written = co_await asio::async_write(x->io, rest, tuple_awaitable);
            ec = std::get<0>(written);
        }
        if (!ec) {
            auto const head = co_await bhttp::async_read_header(x->io, x->buffer, parser, tuple_awaitable);
            ec = std::get<0>(head);
        }
        head_deadlines_.stop(*x);
        if (ec && x->deadline.expired)
            ec = beast::error::timeout; // what Beast's own expiry reported
        else if (ec && !reused && x->io.is_tls() && !parser.got_some() &&
                 ec.category() == asio::error::get_ssl_category())
            // TLS 1.3 servers judge the client's certificate after the client's side of the handshake
            // is done: their refusal is an alert on the first read, still a handshake failure.
            x->failure = "TLS handshake failed: " + tls::describe_tls_error(ec);
        if (!ec || retried || !reused || x->abandoned || closed_ || parser.got_some())
            break;
        boost::system::error_code ignored;
        x->stream.socket().close(ignored);
        x->buffer.clear();
        x->connected = false;
        if (auto again = co_await async_connect(x))
            co_return again;
    }
    co_return ec;
}

} // namespace duet::client::detail::streamable_http
