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

#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <cstddef>
#include <memory>

namespace duet::transport::http {

class peer_watch {
public:
    template<typename OnGone>
    peer_watch(boost::asio::ip::tcp::socket& socket, OnGone on_gone)
        : socket_(socket), state_(std::make_shared<state_with<OnGone>>(std::move(on_gone))) {
        wait(socket_, state_);
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
    // The flags, the callback and the byte a peek reads into, in one block: a watch is set up for every
    // request answered later (each call a gateway forwards), so it costs one allocation and a completion
    // handler, not a coroutine.
    struct state {
        virtual ~state() = default;
        virtual void call_on_gone() = 0;
        bool active = true;
        bool gone = false;
        char peeked = 0;
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
                             [st = std::move(st)](boost::system::error_code ec, std::size_t n) {
                                 if (!st->active || ec == boost::asio::error::operation_aborted)
                                     return;
                                 if (!ec && n > 0)
                                     return; // the next request, pipelined: the peer is there
                                 // End of stream, or a reset or other error.
                                 st->gone = true;
                                 st->call_on_gone();
                             });
    }

    boost::asio::ip::tcp::socket& socket_;
    std::shared_ptr<state> state_;
};

} // namespace duet::transport::http
