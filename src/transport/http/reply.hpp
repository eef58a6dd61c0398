// A response whose body is known in full (JSON, an error, or none), and its write: the head written by hand
// (response_head.hpp) goes out with the body in one gathered write, tried at once without waiting.
#pragma once

#include <duet/jsonrpc/message.hpp>
#include <duet/protocol/errors.hpp>

#include "bounded_socket.hpp"
#include "request.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/beast/http/status.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace duet::transport::http {

struct reply {
    boost::beast::http::status status = boost::beast::http::status::ok;
    std::string body;
    std::string_view content_type = "application/json"; ///< only ever a literal
    std::vector<std::pair<std::string, std::string>> headers;
};

/// A JSON-RPC error response's text.
[[nodiscard]] std::string error_body(std::optional<jsonrpc::request_id> id, protocol::error_object e);

/// A refusal: `status` with a -32600 error response (no id) saying `message`.
[[nodiscard]] reply invalid_request_reply(boost::beast::http::status status, std::string message);

/// A protocol rejection, answered to `id`.
[[nodiscard]] reply rejection_reply(protocol::rejection r,
                                    std::optional<jsonrpc::request_id> id = std::nullopt);

/// An answer from a server connection: its message with its status, or 202 when none is owed (cancelled).
[[nodiscard]] reply answer_reply(std::optional<jsonrpc::message> const& message, unsigned http_status);

// Coroutine arguments are lvalues on purpose: GCC 12 can destroy a temporary passed to a coroutine before the
// coroutine is done with it, so callers name what they pass.
class reply_writer {
public:
    /// Each write that does not go through at once must within `write_timeout`.
    explicit reply_writer(std::chrono::milliseconds write_timeout) : write_timeout_(write_timeout) {}

    boost::asio::awaitable<void> write(bounded_socket& stream, request const& req, reply& r,
                                       bool keep_alive) const;

    /// write() as a coroutine of its own that says the connection goes on. Routing is plain functions
    /// returning the coroutine that serves the request, so an answer ready at once costs one small frame.
    boost::asio::awaitable<bool> send(bounded_socket& stream, request const& req, reply r,
                                      bool keep_alive) const;

private:
    std::chrono::milliseconds write_timeout_;
};

} // namespace duet::transport::http
