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

#include "support/deadline_watch.hpp"
#include "tls/either_stream.hpp"

#include <boost/asio/ip/tcp.hpp>

#include <chrono>
#include <memory>
#include <utility>

namespace duet::transport::http {

class bounded_socket {
public:
    using executor_type = boost::asio::ip::tcp::socket::executor_type;
    using clock = support::watched_deadline::clock;

    /// `shortest` is the shortest limit bound() will be given.
    bounded_socket(boost::asio::ip::tcp::socket socket, clock::duration shortest)
        : socket_(std::move(socket)), io_(socket_), guard_(std::make_shared<guard>(&socket_)),
          watch_(socket_.get_executor(), shortest) {}

    bounded_socket(bounded_socket const&) = delete;
    bounded_socket& operator=(bounded_socket const&) = delete;

    [[nodiscard]] boost::asio::ip::tcp::socket& socket() noexcept { return socket_; }
    [[nodiscard]] executor_type get_executor() noexcept { return socket_.get_executor(); }

    /// The connection speaks TLS with `context` from now on (its handshake comes next).
    void start_tls(boost::asio::ssl::context& context) { io_.start_tls(context); }
    [[nodiscard]] bool is_tls() const noexcept { return io_.is_tls(); }
    [[nodiscard]] tls::tls_stream* tls() noexcept { return io_.tls(); }
    /// Who the connection's TLS handshake established (mutual TLS); null otherwise.
    [[nodiscard]] std::shared_ptr<protocol::caller_identity const> const& caller() const noexcept {
        return caller_;
    }
    void set_caller(std::shared_ptr<protocol::caller_identity const> c) noexcept { caller_ = std::move(c); }

    /// What begins from now on must be through within `limit` of now, else the socket is closed.
    void bound(clock::duration limit) { watch_.start(guard_, limit); }
    /// No limit until the next bound().
    void unbound() noexcept { support::deadline_watch<guard>::stop(*guard_); }
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
    // What the watch holds weakly and expires: closing the socket fails the operation pending on it, as
    // Beast's expiry did.
    struct guard {
        explicit guard(boost::asio::ip::tcp::socket* s) : socket(s) {}
        boost::asio::ip::tcp::socket* socket;
        support::watched_deadline deadline;
        void expire() {
            boost::system::error_code ignored;
            socket->close(ignored);
        }
    };

    boost::asio::ip::tcp::socket socket_;
    tls::either_stream io_;
    std::shared_ptr<protocol::caller_identity const> caller_;
    std::shared_ptr<guard> guard_;
    support::deadline_watch<guard> watch_;
};

} // namespace duet::transport::http
