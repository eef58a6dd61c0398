#include "response_head.hpp"

#include <boost/beast/http.hpp>

#include <charconv>

namespace duet::transport::http {

namespace bhttp = boost::beast::http;

namespace {

void append_number(std::string& out, std::size_t n) {
    char digits[24];
    auto const end = std::to_chars(digits, digits + sizeof digits, n).ptr;
    out.append(digits, end);
}

void append_field(std::string& out, std::string_view name, std::string_view value) {
    out.append(name).append(": ").append(value).append("\r\n");
}

} // namespace

void append_response_head(std::string& out, response_head const& head) {
    out.append("HTTP/");
    append_number(out, head.version / 10);
    out.push_back('.');
    append_number(out, head.version % 10);
    out.push_back(' ');
    append_number(out, head.status);
    out.push_back(' ');
    auto const reason = bhttp::obsolete_reason(static_cast<bhttp::status>(head.status));
    out.append(reason.data(), reason.size()).append("\r\n");
    if (head.body_size != 0)
        append_field(out, "Content-Type", head.content_type);
    for (auto const& [name, value] : head.fields)
        append_field(out, name, value);
    // keep_alive(): HTTP/1.1 persists unless told to close; HTTP/1.0 closes unless told to keep alive.
    if (head.version >= 11 && !head.keep_alive)
        append_field(out, "Connection", "close");
    else if (head.version < 11 && head.keep_alive)
        append_field(out, "Connection", "keep-alive");
    // prepare_payload() on a string body: a length always, even 0 (Beast 1.81 writes it for 204 and 304 too).
    out.append("Content-Length: ");
    append_number(out, head.body_size);
    out.append("\r\n");
    out.append("\r\n");
}

} // namespace duet::transport::http
