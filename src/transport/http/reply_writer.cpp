#include "reply_writer.hpp"

#include "response_head.hpp"
#include "support/send_now.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/write.hpp>

#include <array>

namespace duet::transport::http {

namespace asio = boost::asio;

namespace {
constexpr std::size_t small_tls_answer = 16 * 1024; ///< a TLS record's payload at most
} // namespace

asio::awaitable<void> reply_writer::write(bounded_socket& stream, request const& req, reply& r,
                                          bool keep_alive) const {
    std::string head;
    head.reserve(128);
    append_response_head(head, {.version = req.version(),
                                .status = static_cast<unsigned>(r.status),
                                .content_type = r.content_type,
                                .fields = r.headers,
                                .body_size = r.body.size(),
                                .keep_alive = keep_alive});
    if (r.omit_body)
        r.body.clear();
    if (counters_) {
        counters_->responded(static_cast<unsigned>(r.status));
        counters_->response_bytes.fetch_add(r.body.size(), std::memory_order_relaxed);
    }
    if (stream.is_tls()) {
        // One TLS record (and one send) for a small answer rather than one for its head and one for its body.
        if (r.body.size() <= small_tls_answer) {
            head += r.body;
            r.body.clear();
        }
        std::array<asio::const_buffer, 2> const buffers{asio::buffer(head), asio::buffer(r.body)};
        stream.bound(write_timeout_);
        co_await asio::async_write(stream, buffers, asio::as_tuple(asio::deferred));
        stream.unbound();
        co_return;
    }
    std::array<asio::const_buffer, 2> const buffers{asio::buffer(head), asio::buffer(r.body)};
    auto const rest = support::send_now(stream.socket().native_handle(), buffers);
    if (asio::buffer_size(rest) == 0)
        co_return;
    stream.bound(write_timeout_);
    // Deferred: the write starts from this frame instead of a coroutine of its own (bench/findings.md, HTTP
    // per-request cost, session 9).
    co_await asio::async_write(stream, rest, asio::as_tuple(asio::deferred));
    stream.unbound();
}

asio::awaitable<bool> reply_writer::send(bounded_socket& stream, request const& req, reply r,
                                         bool keep_alive) const {
    co_await write(stream, req, r, keep_alive);
    co_return true;
}

} // namespace duet::transport::http
