// The writes of an SSE response: its head (chunked, so the connection can carry more requests after the
// stream ends), each message as one event, keep-alive comments, a session stream's opening, and the last
// chunk. Each write that does not go through must within the write timeout; each says whether it did.
#pragma once

#include <duet/metrics/registry.hpp>
#include <duet/store/event_log.hpp>

#include "bounded_socket.hpp"
#include "request.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace duet::transport::http {

// Coroutine arguments are lvalues on purpose (reply_writer.hpp).
class sse_writer {
public:
    /// `retry`: the reconnection delay a session stream's opening announces; `counters`: where the
    /// responses and event bytes are counted (null: nowhere).
    sse_writer(std::chrono::milliseconds write_timeout, std::chrono::milliseconds retry,
               metrics::http_counters* counters)
        : write_timeout_(write_timeout), retry_(retry), counters_(counters) {}

    /// The response head.
    boost::asio::awaitable<bool> begin(bounded_socket& stream, request const& req, bool keep_alive) const;
    /// The last chunk of the body.
    boost::asio::awaitable<bool> end(bounded_socket& stream) const;
    /// One message as an event; `id` empty for none (modern streams are not resumable).
    boost::asio::awaitable<bool> event(bounded_socket& stream, std::string_view id,
                                       std::string_view data) const;
    /// A comment that keeps an idle stream's connection alive.
    boost::asio::awaitable<bool> keepalive(bounded_socket& stream) const;
    /// What opens a session stream read after `after`: the reconnection delay and, when the session polls
    /// (protocol::sse_polling), a priming event: the stream's position as its id, and empty data.
    boost::asio::awaitable<bool> opening(bounded_socket& stream, store::event_log const& es,
                                         std::uint64_t after, bool polling) const;

private:
    boost::asio::awaitable<bool> chunk(bounded_socket& stream, std::string& data) const;

    std::chrono::milliseconds write_timeout_;
    std::chrono::milliseconds retry_;
    metrics::http_counters* counters_;
};

} // namespace duet::transport::http
