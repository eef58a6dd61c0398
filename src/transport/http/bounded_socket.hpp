// A server connection's socket with the bounds the server puts on its I/O (http_options::idle_timeout on
// the read of a request, read_timeout on each write of a response): an operation begun under bound(limit)
// that is not through within `limit` has its socket closed, and fails. Between unbound() and the next
// bound() nothing is limited (a handler that takes its time, an SSE stream between events).
//
//     bounded_socket stream(std::move(socket), shortest_limit);
//     stream.bound(read_timeout);
//     co_await asio::async_write(stream, buffers, token);   // a Beast or Asio algorithm on the stream
//     stream.unbound();
//
// Beast's tcp_stream armed and cancelled a timer around every read_some and write; here bound() reads the
// clock and one timer per connection, armed lazily, looks at the deadline when it fires (deadline_watch.hpp).
//
// A connection of a TLS listener carries TLS (start_tls() before the handshake); reads and writes then go
// through OpenSSL (tls/either_stream.hpp), and a plain connection pays one branch per operation.
//
// @par Thread safety
// Use it on the socket's executor only (its strand when several threads run the server).
#pragma once

#include <duet/protocol/caller.hpp>

#include "remembered_token.hpp"
#include "support/deadline_watch.hpp"
#include "tls/either_stream.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <utility>

namespace duet::transport::http {

class bounded_socket {
public:
    using executor_type = boost::asio::ip::tcp::socket::executor_type;
    using clock = support::watched_deadline::clock;

    /// `shortest` is the shortest limit bound() will be given.
    bounded_socket(boost::asio::ip::tcp::socket socket, clock::duration shortest)
        : socket_(std::move(socket)), io_(socket_), shortest_(shortest),
          guard_(std::make_shared<guard>(&socket_)), watch_(socket_.get_executor(), shortest) {
        guard_->owner = this;
    }

    bounded_socket(bounded_socket const&) = delete;
    bounded_socket& operator=(bounded_socket const&) = delete;

    [[nodiscard]] boost::asio::ip::tcp::socket& socket() noexcept { return socket_; }
    [[nodiscard]] executor_type get_executor() noexcept { return socket_.get_executor(); }

    /// The connection speaks TLS with `context` from now on (its handshake comes next).
    void start_tls(boost::asio::ssl::context& context) { io_.start_tls(context); }
    [[nodiscard]] bool is_tls() const noexcept { return io_.is_tls(); }
    [[nodiscard]] tls::tls_stream* tls() noexcept { return io_.tls(); }
    /// Who sent the request being served: the client certificate the connection's TLS handshake verified
    /// (mutual TLS) and the bearer token verified for the request; null when neither.
    [[nodiscard]] std::shared_ptr<protocol::caller_identity const> const& caller() const noexcept {
        return caller_;
    }
    /// Who the connection's TLS handshake established.
    void set_caller(std::shared_ptr<protocol::caller_identity const> c) noexcept {
        connection_caller_ = c;
        caller_ = std::move(c);
    }
    /// The TCP peer's IP address as text, an IPv4-mapped IPv6 one as IPv4; asked of the socket once per
    /// connection. Empty when the socket cannot say (the peer is gone).
    [[nodiscard]] std::string const& peer_address() {
        if (peer_address_.empty()) {
            boost::system::error_code ec;
            auto address = socket_.remote_endpoint(ec).address();
            if (!ec && address.is_v6() && address.to_v6().is_v4_mapped())
                address = boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, address.to_v6());
            if (!ec)
                peer_address_ = address.to_string();
        }
        return peer_address_;
    }
    /// The bearer token this connection's last request carried, and its verdict (remembered_token.hpp).
    [[nodiscard]] remembered_token& last_token() noexcept { return last_token_; }

    /// The bearer token verified for the request served next (null: none). A kept-alive client presenting
    /// the same token again reuses the identity made for the last request.
    void set_request_token(std::shared_ptr<protocol::verified_token const> token) {
        if (!token) {
            caller_ = connection_caller_;
            return;
        }
        if (caller_ && caller_->token == token)
            return;
        caller_ = std::make_shared<protocol::caller_identity const>(protocol::caller_identity{
            connection_caller_ ? connection_caller_->tls_subject : std::string(), std::move(token)});
    }

    /// What begins from now on must be through within `limit` of now, else the socket is closed.
    void bound(clock::duration limit) {
        guard_->next_request = {};
        watch_.start(guard_, limit);
    }
    /// A kept-alive connection's wait for its next request: up to `idle` for it to begin, then once bytes of
    /// it have arrived (in `buffer`, or waiting on the socket) up to `head` more for the rest of its head,
    /// so a client trickling a head is closed after seconds even on a connection allowed long idle waits.
    /// Arrival is looked at each `head` (the watch's timer), so a head gets between `head` and twice that.
    void bound_next_request(clock::duration idle, clock::duration head,
                            boost::beast::flat_buffer const& buffer) {
        guard_->next_request = {.idle_until = clock::now() + idle, .head = head, .buffer = &buffer};
        watch_.start(guard_, std::min(idle, head));
    }
    /// No limit until the next bound().
    void unbound() noexcept { support::deadline_watch<guard>::stop(*guard_); }
    /// The shortest limit bound() may be given.
    [[nodiscard]] clock::duration shortest() const noexcept { return shortest_; }
    /// Whether the last bound() ran out (the socket was closed for it).
    [[nodiscard]] bool timed_out() const noexcept { return guard_->deadline.expired; }

    /// Ends the operations pending on the socket (with operation_aborted); the socket stays open.
    void cancel() noexcept {
        boost::system::error_code ignored;
        socket_.cancel(ignored);
    }

    template<class MutableBufferSequence, class ReadToken>
    auto async_read_some(MutableBufferSequence const& buffers, ReadToken&& token) {
        return io_.async_read_some(buffers, std::forward<ReadToken>(token));
    }

    template<class ConstBufferSequence, class WriteToken>
    auto async_write_some(ConstBufferSequence const& buffers, WriteToken&& token) {
        return io_.async_write_some(buffers, std::forward<WriteToken>(token));
    }

private:
    // A wait for the next request (bound_next_request), while it lasts.
    struct next_request_wait {
        clock::time_point idle_until;
        clock::duration head{};
        boost::beast::flat_buffer const* buffer = nullptr; ///< null: not waiting
        bool had_bytes = false;                            ///< at the previous look
    };

    // What the watch holds weakly and expires: closing the socket fails the operation pending on it, as
    // Beast's expiry did.
    struct guard {
        explicit guard(boost::asio::ip::tcp::socket* s) : socket(s) {}
        boost::asio::ip::tcp::socket* socket;
        bounded_socket* owner = nullptr;
        support::watched_deadline deadline;
        next_request_wait next_request;
        void expire() {
            if (next_request.buffer && owner->keep_waiting(next_request))
                return;
            boost::system::error_code ignored;
            socket->close(ignored);
        }
    };

    // A wait for the next request goes on while nothing of it came and the idle time lasts, or while bytes
    // came since the last look (a head that is arriving gets another `head`).
    bool keep_waiting(next_request_wait& w) {
        boost::system::error_code ignored;
        bool const has_bytes = w.buffer->size() != 0 || socket_.available(ignored) != 0;
        auto const now = clock::now();
        if (has_bytes ? w.had_bytes : now >= w.idle_until)
            return false;
        w.had_bytes = has_bytes;
        auto const next = has_bytes ? w.head : std::min(w.head, w.idle_until - now);
        guard_->deadline.expired = false;
        watch_.start(guard_, std::max(next, shortest_));
        return true;
    }

    boost::asio::ip::tcp::socket socket_;
    tls::either_stream io_;
    clock::duration shortest_;
    std::shared_ptr<protocol::caller_identity const> caller_;
    std::shared_ptr<protocol::caller_identity const> connection_caller_; ///< from the TLS handshake
    remembered_token last_token_;
    std::string peer_address_; ///< empty until asked for
    std::shared_ptr<guard> guard_;
    support::deadline_watch<guard> watch_;
};

} // namespace duet::transport::http
