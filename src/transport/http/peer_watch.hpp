// Notices a client that closes its connection while its response is being prepared or streamed. HTTP/1.1
// reads nothing during a response (the next request comes after it), so without this a dead peer is seen only
// at the next write: never while a handler behind a JSON response runs, and only at the next keep-alive
// comment for an idle stream, which meanwhile holds its listen slot. Closing the response stream is what
// cancels a modern request (DIGEST §9).
//
//     peer_watch watch(stream.socket(), [queue] { queue->interrupt(); });
//     ... if(watch.gone()) ...              // the destructor stops watching
//
// A client that pipelines its next request is present: the watch ends without calling anything.
//
// @par Thread safety
// Construct, query and destroy it on the socket's strand; `on_gone` runs there too.
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <sys/socket.h>

#include <cerrno>
#include <functional>
#include <memory>

namespace duet::transport::http {

class peer_watch {
public:
    peer_watch(boost::asio::ip::tcp::socket& socket, std::function<void()> on_gone)
        : socket_(socket), state_(std::make_shared<state>()) {
        state_->on_gone = std::move(on_gone);
        boost::asio::co_spawn(socket.get_executor(), watch(socket, state_), boost::asio::detached);
    }

    ~peer_watch() {
        // The wait completes later with operation_aborted and finds itself inactive: it never touches the
        // socket again, which may be gone by then.
        state_->active = false;
        boost::system::error_code ignored;
        socket_.cancel(ignored);
    }

    peer_watch(peer_watch const&) = delete;
    peer_watch& operator=(peer_watch const&) = delete;

    [[nodiscard]] bool gone() const noexcept { return state_->gone; }

private:
    struct state {
        bool active = true;
        bool gone = false;
        std::function<void()> on_gone;
    };

    static boost::asio::awaitable<void> watch(boost::asio::ip::tcp::socket& socket,
                                              std::shared_ptr<state> st) {
        using tcp = boost::asio::ip::tcp;
        for (;;) {
            auto waited = co_await socket.async_wait(tcp::socket::wait_read,
                                                     boost::asio::as_tuple(boost::asio::use_awaitable));
            if (!st->active || std::get<0>(waited) == boost::asio::error::operation_aborted)
                co_return;
            if (!std::get<0>(waited)) {
                // Readiness may be stale or spurious: peek without blocking, or the whole strand would wait.
                char byte = 0;
                auto const n = ::recv(socket.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
                if (n > 0)
                    co_return; // the next request, pipelined: the peer is there
                if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
                    continue; // nothing after all: keep watching
            }
            break; // end of stream (0), or a reset or other error
        }
        st->gone = true;
        if (st->on_gone)
            st->on_gone();
    }

    boost::asio::ip::tcp::socket& socket_;
    std::shared_ptr<state> state_;
};

} // namespace duet::transport::http
