// What the drain must reach: every open TCP connection (to close those idle between requests) and every
// modern request in flight on a connection of its own or a socket's (to finish it, and to close a listen's
// stream after its result).
//
// @par Thread safety
// Every member may be called from any thread. A socket_entry's `idle` and `alive` are read and written on its
// connection's strand only.
#pragma once

#include <duet/server/connection.hpp>

#include "bounded_socket.hpp"
#include "stream_queue.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <list>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace duet::transport::http {

class drain_registry {
public:
    /// One accepted TCP connection, as the drain sees it.
    struct socket_entry {
        bounded_socket* stream = nullptr;
        boost::asio::any_io_executor strand;
        bool idle = false; ///< waiting for a next request of which nothing has arrived
        bool alive = true;
    };
    using socket_handle = std::list<std::shared_ptr<socket_entry>>::iterator;

    socket_handle enter(std::shared_ptr<socket_entry> entry);
    void leave(socket_handle it);
    [[nodiscard]] std::vector<std::shared_ptr<socket_entry>> open_sockets();

    /// A modern request's connection, and the queue of its stream when it is a listen. A socket's modern
    /// connection serves many requests: it is tracked once.
    void track(std::shared_ptr<server::connection> const& c, std::shared_ptr<stream_queue> const& listen);

    using live_connection = std::pair<std::shared_ptr<server::connection>, std::shared_ptr<stream_queue>>;
    /// The tracked connections still alive, each with its listen's queue (null: not a listen).
    [[nodiscard]] std::vector<live_connection> live_connections();

private:
    std::mutex live_mutex_;
    std::vector<std::pair<std::weak_ptr<server::connection>, std::weak_ptr<stream_queue>>> live_;
    std::mutex sockets_mutex_;
    std::list<std::shared_ptr<socket_entry>> sockets_;
};

} // namespace duet::transport::http
