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

#include <boost/asio/error.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <sys/socket.h>

#include <cerrno>
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
    // The flags and the callback in one block: a watch is set up for every request answered later (each call
    // a gateway forwards), so it costs one allocation and a completion handler, not a coroutine.
    struct state {
        virtual ~state() = default;
        virtual void call_on_gone() = 0;
        bool active = true;
        bool gone = false;
    };
    template<typename OnGone>
    struct state_with final : state {
        explicit state_with(OnGone f) : on_gone(std::move(f)) {}
        void call_on_gone() override { on_gone(); }
        OnGone on_gone;
    };

    static void wait(boost::asio::ip::tcp::socket& socket, std::shared_ptr<state> st) {
        socket.async_wait(boost::asio::ip::tcp::socket::wait_read,
                          [&socket, st = std::move(st)](boost::system::error_code ec) mutable {
                              if (!st->active || ec == boost::asio::error::operation_aborted)
                                  return;
                              if (!ec) {
                                  // Readiness may be stale or spurious: peek without blocking, or the whole
                                  // strand would wait.
                                  char byte = 0;
                                  auto const n =
                                      ::recv(socket.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
                                  if (n > 0)
                                      return; // the next request, pipelined: the peer is there
                                  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
                                      wait(socket, std::move(st)); // nothing after all: keep watching
                                      return;
                                  }
                              }
                              // End of stream (0), or a reset or other error.
                              st->gone = true;
                              st->call_on_gone();
                          });
    }

    boost::asio::ip::tcp::socket& socket_;
    std::shared_ptr<state> state_;
};

} // namespace duet::transport::http
