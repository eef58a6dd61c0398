/// @file duet/jsonrpc/codec.hpp
///
/// Bytes to messages and back, by the exact JSON-RPC 2.0 rules. Pure: no I/O, no global state, never throws
/// on peer input.
///
/// Parsing a frame:
///
///     auto f = parse_frame(line);                // one line of stdio, or one HTTP body
///     if(auto* one = std::get_if<parsed>(&f.content)) {
///         if(one->ok()) handle(one->value()); else reply(error_for(*one));
///     } else if(auto* many = std::get_if<batch>(&f.content)) { ... }
///
/// The error a peer gets for a bad element is ready in `parse_failure::reply` (-32700 with `id: null` for bad
/// JSON; -32600 with the request's id when one could be read, else `null`, as JSON-RPC 2.0 answers even an
/// invalid object without an id). A malformed *response* has no `reply`: answering it could start a loop.
///
/// Serializing is byte-stable: serialize(parse(serialize(m))) == serialize(m), except that a floating-point
/// number may move in its last bit (Boost.JSON 1.81 reads decimals fast, not correctly rounded). Members
/// always go out in the order jsonrpc, id, method, params, result, error. Values are written as
/// duet/jsonrpc/json_text.hpp writes them: a double as JavaScript writes it, so one with an integral value
/// (5.0, -0.0) goes out as `5`, `0` and reads back as an integer.
#pragma once

#include <duet/jsonrpc/error.hpp>
#include <duet/jsonrpc/message.hpp>

#include <boost/json/object.hpp>
#include <boost/json/storage_ptr.hpp>
#include <boost/system/result.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace duet::jsonrpc {

/// Bounds applied before and while parsing, so a hostile peer cannot make us allocate or recurse without
/// limit.
struct parse_limits {
    std::size_t max_bytes = 4 * 1024 * 1024;
    std::size_t max_depth = 64;
    std::size_t max_batch = 1024;
};

/// A frame element that is not a valid message.
struct parse_failure {
    parse_errc reason;
    /// The error response owed to the peer; empty when the element was a response, which is never answered.
    std::optional<error_response> reply;
};

/// One element of a frame: a message, or why it is not one.
using parsed = boost::system::result<message, parse_failure>;

/// A JSON array of messages (JSON-RPC batch). Only a 2025-03-26 session may use them; the caller decides.
struct batch {
    std::vector<parsed> elements;
};

/// One frame: a single element or a batch. A frame that is not JSON, too large, too deep or an empty array
/// is a single failed element.
struct frame {
    std::variant<parsed, batch> content;
    [[nodiscard]] bool is_batch() const noexcept { return content.index() == 1; }
};

/// `storage` is where the parsed JSON lives (params, results): the default heap unless the caller keeps a
/// memory resource for its frames (the server does; see duet/server/frame_storage.hpp).
[[nodiscard]] frame parse_frame(std::string_view bytes, parse_limits const& limits = {},
                                boost::json::storage_ptr storage = {});

/// Classifies one already-parsed JSON value (one frame element).
[[nodiscard]] parsed parse_message(boost::json::value const& v);

/// The wire form of one message, without a trailing newline.
[[nodiscard]] std::string serialize(message const& m);
/// The wire form of one message as a JSON object (for embedding, e.g. in a batch).
[[nodiscard]] boost::json::object to_json(message const& m);
/// The wire form of a batch reply.
[[nodiscard]] std::string serialize(std::vector<message> const& batch_reply);

} // namespace duet::jsonrpc

namespace duet::jsonrpc {
/// Lets `parsed::value()` throw on a failure (only code at the edges should call it; the core uses `*r`).
[[noreturn]] void throw_exception_from_error(parse_failure const& f, boost::source_location const& loc);
} // namespace duet::jsonrpc
