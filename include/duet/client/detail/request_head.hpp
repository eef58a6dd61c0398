// File: duet/client/detail/request_head.hpp
//
// The head of a request the HTTP client sends, written by hand: byte for byte what Beast's serializer writes
// for the `bhttp::request<string_body>` the client built before (request line, the fields in the order
// `basic_fields::set` leaves them, Content-Length as prepare_payload() sets it), without Beast's per-field
// allocations and its walk over a view of the fields. Writing that head through Beast was about 22 k
// instructions of a forwarded call over an HTTP upstream; tests/unit/client/request_head_test.cpp pins the
// byte identity. Pure.
//
//     request_fields f;
//     f.set("Host", "127.0.0.1:8080");
//     append_request_head(out, "POST", "/mcp", f, body.size());
#pragma once

#include <boost/container/small_vector.hpp>

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace duet::client::detail {

struct header_field {
    std::string_view name;
    std::string_view value;
};

/// A request's fields as `basic_fields::set` keeps them: setting a name drops every field of that name
/// (ASCII case-insensitive) and appends the new one, its value trimmed of spaces and tabs. Views only: what
/// they name must outlive the call to append_request_head.
class request_fields {
public:
    void set(std::string_view name, std::string_view value);
    [[nodiscard]] std::span<header_field const> items() const noexcept {
        return {fields_.data(), fields_.size()};
    }

private:
    boost::container::small_vector<header_field, 12> fields_;
};

/// Appends "METHOD target HTTP/1.1", the fields, the Content-Length prepare_payload() would set for a body of
/// `body_size` bytes (always for POST, PUT and OPTIONS and any non-empty body; otherwise none, and a
/// Content-Length among the fields is dropped) and the closing empty line to `out`.
void append_request_head(std::string& out, std::string_view method, std::string_view target,
                         request_fields const& fields, std::size_t body_size);

} // namespace duet::client::detail
