// Notices a client that closes its connection while its response is being prepared or streamed. HTTP/1.1
// reads nothing during a response (the next request comes after it), so without this a dead peer is seen only
// at the next write: never while a handler behind a JSON response runs, and only at the next keep-alive
// comment for an idle stream, which meanwhile holds its listen slot. Closing the response stream is what
// cancels a modern request (DIGEST §9).
//
//     peer_watch watch(stream.socket(), stream.is_tls(), [queue] { queue->interrupt(); });
//     ... if(watch.gone()) ...              // the destructor stops watching
//
// A client that pipelines its next request is present: the watch ends without calling anything. Over TLS a
// byte may instead be the client's close_notify, which a peek cannot read: there the watch goes on asking
// the kernel whether the peer also ended its side (POLLRDHUP), a few times a second, until it did or the
// watch ends.
//
// @par Thread safety
// Construct, query and destroy it on the socket's strand; `on_gone` runs there too.
#pragma once

#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <poll.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>

namespace duet::transport::http {

class peer_watch {
public:
    template<typename OnGone>
    peer_watch(boost::asio::ip::tcp::socket& socket, bool tls, OnGone on_gone)
        : socket_(socket), state_(std::make_shared<state_with<OnGone>>(std::move(on_gone))) {
        state_->tls = tls;
        wait(socket_, state_);
    }

    ~peer_watch() {
        // The wait completes later with operation_aborted and finds itself inactive: it never touches the
        // socket again, which may be gone by then.
        state_->active = false;
        boost::system::error_code ignored;
        socket_.cancel(ignored);
        if (state_->recheck)
            state_->recheck->cancel();
    }

    peer_watch(peer_watch const&) = delete;
    peer_watch& operator=(peer_watch const&) = delete;

    [[nodiscard]] bool gone() const noexcept { return state_->gone; }

private:
    // The flags, the callback and the byte a peek reads into, in one block: a watch is set up for every
    // request answered later (each call a gateway forwards), so it costs one allocation and a completion
    // handler, not a coroutine.
    struct state {
        virtual ~state() = default;
        virtual void call_on_gone() = 0;
        bool active = true;
        bool gone = false;
        bool tls = false;
        char peeked = 0;
        std::optional<boost::asio::steady_timer> recheck; ///< TLS only, once a byte was seen
    };
    template<typename OnGone>
    struct state_with final : state {
        explicit state_with(OnGone f) : on_gone(std::move(f)) {}
        void call_on_gone() override { on_gone(); }
        OnGone on_gone;
    };

    // A one-byte peek, which Asio performs without blocking and simply retries on a readiness that was
    // spurious; what it sees stays for the connection's next read. (A wait costs one system call per request
    // as well: Asio re-registers the socket with epoll for each one.)
    static void wait(boost::asio::ip::tcp::socket& socket, std::shared_ptr<state> st) {
        auto* byte = &st->peeked;
        socket.async_receive(boost::asio::buffer(byte, 1), boost::asio::socket_base::message_peek,
                             [&socket, st = std::move(st)](boost::system::error_code ec, std::size_t n) {
                                 if (!st->active || ec == boost::asio::error::operation_aborted)
                                     return;
                                 if (!ec && n > 0) {
                                     if (st->tls)
                                         watch_for_hangup(socket, std::move(st));
                                     return; // the next request, pipelined: the peer is there
                                 }
                                 // End of stream, or a reset or other error.
                                 st->gone = true;
                                 st->call_on_gone();
                             });
    }

    static constexpr std::chrono::milliseconds hangup_poll{250};

    // Over TLS, after a byte that may be a close_notify: has the peer shut its side down?
    static void watch_for_hangup(boost::asio::ip::tcp::socket& socket, std::shared_ptr<state> st) {
        pollfd p{socket.native_handle(), POLLRDHUP, 0};
        if (::poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) {
            st->gone = true;
            st->call_on_gone();
            return;
        }
        if (!st->recheck)
            st->recheck.emplace(socket.get_executor());
        st->recheck->expires_after(hangup_poll);
        auto& timer = *st->recheck;
        timer.async_wait([&socket, st = std::move(st)](boost::system::error_code ec) mutable {
            if (st->active && !ec)
                watch_for_hangup(socket, std::move(st));
        });
    }

    boost::asio::ip::tcp::socket& socket_;
    std::shared_ptr<state> state_;
};

} // namespace duet::transport::http
