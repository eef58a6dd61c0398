#include "read_errors.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/beast/http/error.hpp>

#include <array>
#include <chrono>

namespace duet::transport::http {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;

namespace {

// nginx's lingering_timeout and lingering_time.
constexpr auto linger_idle = std::chrono::seconds(5);
constexpr auto linger_total = std::chrono::seconds(30);

bool malformed(boost::system::error_code ec) {
    if (ec.category() != bhttp::make_error_code(bhttp::error::bad_method).category())
        return false;
    switch (static_cast<bhttp::error>(ec.value())) {
    case bhttp::error::end_of_stream:   // the client closed between requests
    case bhttp::error::partial_message: // or in the middle of one: nobody to answer
    case bhttp::error::need_more:
    case bhttp::error::need_buffer:
    case bhttp::error::end_of_chunk:
    case bhttp::error::stale_parser:
    case bhttp::error::short_read:
        return false;
    default:
        return true;
    }
}

} // namespace

std::optional<reply> answer_to_read_error(boost::system::error_code ec, request_parser const& parser,
                                          http_options const& options) {
    if (ec == bhttp::error::body_limit)
        return invalid_request_reply(bhttp::status::payload_too_large,
                                     "Invalid Request: the body exceeds " +
                                         std::to_string(options.max_body_bytes) + " bytes");
    if (ec == bhttp::error::header_limit || ec == bhttp::error::buffer_overflow)
        return invalid_request_reply(bhttp::status::request_header_fields_too_large,
                                     "Invalid Request: the request's head exceeds " +
                                         std::to_string(options.max_header_bytes) + " bytes");
    if (parser.target_too_long())
        return invalid_request_reply(bhttp::status::uri_too_long,
                                     "Invalid Request: the request target exceeds " +
                                         std::to_string(options.max_target_bytes) + " bytes");
    if (malformed(ec))
        return invalid_request_reply(bhttp::status::bad_request,
                                     "Bad Request: malformed HTTP (" + ec.message() + ")");
    return std::nullopt;
}

asio::awaitable<void> linger(bounded_socket& stream, std::size_t max_bytes) {
    if (!stream.is_tls()) {
        boost::system::error_code ignored;
        stream.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
    }
    auto const until = std::chrono::steady_clock::now() + linger_total;
    std::array<char, 16 * 1024> scratch;
    std::size_t dropped = 0;
    while (dropped < max_bytes && std::chrono::steady_clock::now() < until) {
        stream.bound(std::max<bounded_socket::clock::duration>(linger_idle, stream.shortest()));
        auto const got =
            co_await stream.async_read_some(asio::buffer(scratch), asio::as_tuple(asio::deferred));
        stream.unbound();
        if (std::get<0>(got))
            break;
        dropped += std::get<1>(got);
    }
}

} // namespace duet::transport::http
