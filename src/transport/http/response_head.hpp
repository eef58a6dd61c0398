// The head of a response whose body is known in full (JSON, an error, or none), written by hand: byte for
// byte what Beast's serializer writes for the same `bhttp::response<string_body>` (status line, Content-Type
// when there is a body, the extra fields in order, Connection as keep_alive() sets it, Content-Length as
// prepare_payload() sets it), without its per-field allocations and its walk over a view of the fields. It is
// most of what a plain answer costs to write; tests/http/response_head_test.cpp pins the byte identity.
// SSE heads stay with Beast (one per stream, not per message). Pure.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace duet::transport::http {

struct response_head {
    unsigned version = 11; ///< the request's: 10 or 11
    unsigned status = 200;
    std::string_view content_type;                               ///< written only when the body is not empty
    std::span<std::pair<std::string, std::string> const> fields; ///< written in order, after Content-Type
    std::size_t body_size = 0;
    bool keep_alive = true;
};

/// Appends the head, through its closing empty line, to `out`.
void append_response_head(std::string& out, response_head const& head);

} // namespace duet::transport::http
