// A response whose body is known in full (JSON, an error, or none), as the server's parts decide it. Pure:
// reply_writer.hpp writes it.
#pragma once

#include <duet/jsonrpc/message.hpp>
#include <duet/protocol/errors.hpp>

#include <boost/beast/http/status.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace duet::transport::http {

struct reply {
    boost::beast::http::status status = boost::beast::http::status::ok;
    std::string body;
    std::string_view content_type = "application/json"; ///< a literal, or text that outlives the write
    std::vector<std::pair<std::string, std::string>> headers;
    /// The answer to a HEAD: the head describes `body` (its type and length) as a GET's would, and the body
    /// is not sent.
    bool omit_body = false;
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

} // namespace duet::transport::http
