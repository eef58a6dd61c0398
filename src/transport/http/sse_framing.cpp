#include "sse_framing.hpp"

#include "event_ids.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/chunk_encode.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/write.hpp>

namespace duet::transport::http {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;

namespace {
constexpr auto use_nothrow = asio::as_tuple(asio::use_awaitable);
}

asio::awaitable<bool> sse_writer::begin(bounded_socket& stream, request const& req, bool keep_alive) const {
    bhttp::response<bhttp::empty_body> head{bhttp::status::ok, req.version()};
    head.set(bhttp::field::content_type, "text/event-stream");
    head.set(bhttp::field::cache_control, "no-cache");
    head.set("X-Accel-Buffering", "no");
    head.keep_alive(keep_alive);
    head.chunked(true);
    bhttp::response_serializer<bhttp::empty_body> sr{head};
    if (counters_)
        counters_->responded(200);
    stream.bound(write_timeout_);
    // No structured bindings across co_await: GCC 12 mislays them in the coroutine frame.
    auto written = co_await bhttp::async_write_header(stream, sr, use_nothrow);
    stream.unbound();
    co_return !std::get<0>(written);
}

asio::awaitable<bool> sse_writer::end(bounded_socket& stream) const {
    stream.bound(write_timeout_);
    auto written = co_await asio::async_write(stream, bhttp::make_chunk_last(), use_nothrow);
    stream.unbound();
    co_return !std::get<0>(written);
}

asio::awaitable<bool> sse_writer::chunk(bounded_socket& stream, std::string& data) const {
    if (counters_)
        counters_->response_bytes.fetch_add(data.size(), std::memory_order_relaxed);
    stream.bound(write_timeout_);
    auto written = co_await asio::async_write(stream, bhttp::make_chunk(asio::buffer(data)), use_nothrow);
    stream.unbound();
    co_return !std::get<0>(written);
}

asio::awaitable<bool> sse_writer::event(bounded_socket& stream, std::string_view id,
                                        std::string_view data) const {
    std::string text;
    text.reserve(data.size() + id.size() + 16);
    if (!id.empty())
        text.append("id: ").append(id).append("\n");
    text.append("data: ").append(data).append("\n\n");
    co_return co_await chunk(stream, text);
}

asio::awaitable<bool> sse_writer::keepalive(bounded_socket& stream) const {
    std::string text = ": keepalive\n\n";
    co_return co_await chunk(stream, text);
}

asio::awaitable<bool> sse_writer::opening(bounded_socket& stream, store::event_log const& es,
                                          std::uint64_t after, bool polling) const {
    std::string text = "retry: " + std::to_string(retry_.count()) + "\n";
    if (polling)
        text = "id: " + format_event_id(es.number(), after) + "\n" + text + "data: \n";
    text += "\n";
    co_return co_await chunk(stream, text);
}

} // namespace duet::transport::http
