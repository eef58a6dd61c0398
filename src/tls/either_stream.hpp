// A TCP connection that carries TLS or not, as decided when it was made: reads and writes go through OpenSSL
// when it does and straight to the socket when not. A plain connection holds no TLS state and pays one branch
// per operation, so a plain-HTTP server or client is as fast as before TLS existed.
//
//     either_stream io(socket);
//     if(https) io.start_tls(context);                  // a fresh TLS state for this TCP connection
//     co_await io.tls()->async_handshake(...);
//     co_await beast::http::async_read(io, buffer, parser, token);   // any Asio/Beast algorithm
//
// @par Thread safety
// As the socket's: one strand.
#pragma once

#include <boost/asio/async_result.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>

#include <memory>
#include <utility>

namespace duet::tls {

using tls_stream = boost::asio::ssl::stream<boost::asio::ip::tcp::socket&>;

class either_stream {
public:
    using executor_type = boost::asio::ip::tcp::socket::executor_type;

    explicit either_stream(boost::asio::ip::tcp::socket& socket) noexcept : socket_(&socket) {}

    /// From now on the connection speaks TLS with `context` (a new TLS state: one per TCP connection).
    void start_tls(boost::asio::ssl::context& context) {
        tls_ = std::make_unique<tls_stream>(*socket_, context);
    }
    /// Back to plain, for a new TCP connection on the same socket.
    void reset() noexcept { tls_.reset(); }

    [[nodiscard]] bool is_tls() const noexcept { return tls_ != nullptr; }
    [[nodiscard]] tls_stream* tls() noexcept { return tls_.get(); }
    [[nodiscard]] boost::asio::ip::tcp::socket& socket() noexcept { return *socket_; }
    [[nodiscard]] executor_type get_executor() noexcept { return socket_->get_executor(); }

    template<class MutableBufferSequence, class ReadToken>
    auto async_read_some(MutableBufferSequence const& buffers, ReadToken&& token) {
        return boost::asio::async_initiate<ReadToken, void(boost::system::error_code, std::size_t)>(
            [this](auto handler, MutableBufferSequence const& b) {
                if (tls_)
                    tls_->async_read_some(b, std::move(handler));
                else
                    socket_->async_read_some(b, std::move(handler));
            },
            token, buffers);
    }

    template<class ConstBufferSequence, class WriteToken>
    auto async_write_some(ConstBufferSequence const& buffers, WriteToken&& token) {
        return boost::asio::async_initiate<WriteToken, void(boost::system::error_code, std::size_t)>(
            [this](auto handler, ConstBufferSequence const& b) {
                if (tls_)
                    tls_->async_write_some(b, std::move(handler));
                else
                    socket_->async_write_some(b, std::move(handler));
            },
            token, buffers);
    }

private:
    boost::asio::ip::tcp::socket* socket_;
    std::unique_ptr<tls_stream> tls_;
};

} // namespace duet::tls
