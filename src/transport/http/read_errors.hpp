// What a request that could not be read is answered, and how its connection ends. A malformed head is 400, a
// head too large 431, a target too long 414, a body too large 413, each naming the problem; a client that
// went away or timed out gets nothing. After such an early answer the connection closes as nginx's lingering
// close does: the sending side is shut, and what the client still sends is read and dropped (bounded in bytes
// and time), so a client busy writing a large body reads the answer instead of a reset (Node's fetch and
// Python's http.client report EPIPE otherwise).
//
//     if(auto answer = answer_to_read_error(ec, parser, options)) {
//         co_await replies.write(stream, dummy, *answer, false);
//         co_await linger(stream);
//     }
#pragma once

#include <duet/transport/http_server.hpp>

#include "bounded_socket.hpp"
#include "reply.hpp"
#include "request.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>

#include <optional>

namespace duet::transport::http {

/// The answer to a read that failed with `ec`; none when the client is gone or too slow (nothing to say).
[[nodiscard]] std::optional<reply>
answer_to_read_error(boost::system::error_code ec, request_parser const& parser, http_options const& options);

/// Shuts the sending side (plain TCP; TLS keeps it for its close_notify) and reads and drops what the client
/// still sends: at most `max_bytes`, each read within `idle`, all within `total`.
[[nodiscard]] boost::asio::awaitable<void> linger(bounded_socket& stream, std::size_t max_bytes);

} // namespace duet::transport::http
