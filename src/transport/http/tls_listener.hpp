// The TLS side of an https listener: the context new connections take (swapped whole by a reload, so open
// connections keep the one they began with), the server handshake of each connection with its bound, what a
// failure is logged as, and the counts of handshakes. A plain listener has none of this.
//
//     tls_listener tls(config);                    // throws std::invalid_argument naming a bad file
//     if(!co_await tls.handshake(stream)) co_return;   // refused, timed out, or not TLS: logged, closed
//     if(auto why = tls.reload()) log(*why);       // certificate rotation
//
// @par Thread safety
// All members may be called from any thread.
#pragma once

#include <duet/tls/config.hpp>
#include <duet/transport/http_server.hpp>

#include "bounded_socket.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ssl/context.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace duet::transport::http {

class tls_listener {
public:
    explicit tls_listener(tls::server_config config);

    /// Begins TLS on a freshly accepted connection and completes the handshake within the configured bound.
    /// False when it failed (the caller closes the connection); the failure is logged, at most once a second
    /// with the number of others. On success the verified client certificate's subject is the stream's
    /// caller.
    [[nodiscard]] boost::asio::awaitable<bool> handshake(bounded_socket& stream);

    /// Sends TLS's close_notify without waiting for the peer's.
    [[nodiscard]] static boost::asio::awaitable<void> close(bounded_socket& stream);

    [[nodiscard]] std::optional<std::string> reload();
    [[nodiscard]] tls_counts counts() const noexcept;

private:
    std::shared_ptr<boost::asio::ssl::context> current() const;
    void log_failure(std::string const& text);

    tls::server_config const config_;
    mutable std::mutex mutex_;
    std::shared_ptr<boost::asio::ssl::context> context_;
    std::atomic<std::uint64_t> completed_{0}, resumed_{0}, failed_{0};
    std::atomic<std::int64_t> last_log_{0}; ///< steady-clock seconds of the last failure logged
    std::atomic<std::uint64_t> unlogged_{0};
};

} // namespace duet::transport::http
