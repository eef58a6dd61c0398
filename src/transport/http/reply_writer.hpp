// The write of a reply: the head written by hand (response_head.hpp) goes out with the body in one gathered
// write, tried at once without waiting.
#pragma once

#include <duet/metrics/registry.hpp>

#include "bounded_socket.hpp"
#include "reply.hpp"
#include "request.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>

namespace duet::transport::http {

// Coroutine arguments are lvalues on purpose: GCC 12 can destroy a temporary passed to a coroutine before the
// coroutine is done with it, so callers name what they pass.
class reply_writer {
public:
    /// Each write that does not go through at once must within `write_timeout`.
    /// `counters`: where responses and their body bytes are counted (null: nowhere).
    reply_writer(std::chrono::milliseconds write_timeout, metrics::http_counters* counters)
        : write_timeout_(write_timeout), counters_(counters) {}

    boost::asio::awaitable<void> write(bounded_socket& stream, request const& req, reply& r,
                                       bool keep_alive) const;

    /// write() as a coroutine of its own that says the connection goes on. Routing is plain functions
    /// returning the coroutine that serves the request, so an answer ready at once costs one small frame.
    boost::asio::awaitable<bool> send(bounded_socket& stream, request const& req, reply r,
                                      bool keep_alive) const;

private:
    std::chrono::milliseconds write_timeout_;
    metrics::http_counters* counters_;
};

} // namespace duet::transport::http
