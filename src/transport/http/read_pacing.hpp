// How long a request's body may take to arrive, so that a client trickling it holds a connection for seconds,
// not minutes: header_timeout plus its size at min_body_bytes_per_second. The parser reports the body as it
// learns of it, inside the read; the head's own bounds are set before the read (bounded_socket).
//
//     read_pacing pacing(stream, options);
//     request_parser parser(&pacing, options.max_target_bytes);
//     stream.bound(options.header_timeout);                  // or bound_next_request() on a kept-alive one
//     co_await async_read(stream, buffer, parser, ...);     // the parser re-bounds the stream for the body
//
// @par Thread safety
// On the socket's strand, as the read that calls it.
#pragma once

#include <duet/transport/http_server.hpp>

#include "bounded_socket.hpp"
#include "request.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>

namespace duet::transport::http {

class read_pacing final : public body_pacing {
public:
    read_pacing(bounded_socket& stream, http_options const& options) noexcept
        : stream_(stream), options_(options) {}

    /// A body follows: its declared length at the minimum rate, or for a chunked body the largest allowed.
    void on_body(std::optional<std::uint64_t> content_length) override {
        auto const bytes = content_length.value_or(options_.max_body_bytes);
        auto const rate = std::max<std::size_t>(options_.min_body_bytes_per_second, 1);
        stream_.bound(options_.header_timeout + std::chrono::milliseconds(bytes * 1000 / rate));
    }

private:
    bounded_socket& stream_;
    http_options const& options_;
};

} // namespace duet::transport::http
