#include <duet/client/detail/request_head.hpp>
#include <duet/protocol/header_codec.hpp>

#include <boost/beast/http.hpp>

#include <algorithm>
#include <charconv>
#include <sstream>

namespace duet::client::detail {

namespace bhttp = boost::beast::http;
using protocol::iequals;

namespace {

// Beast's detail::trim: optional whitespace (spaces and tabs) off both ends.
std::string_view trim(std::string_view s) noexcept {
    auto const first = s.find_first_not_of(" \t");
    if (first == std::string_view::npos)
        return {};
    return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

bool has_body_length(std::string_view method, std::size_t body_size) noexcept {
    return body_size > 0 || method == "POST" || method == "PUT" || method == "OPTIONS";
}

// A Transfer-Encoding the caller set is rewritten by prepare_payload() (its last `chunked` token filtered
// out, the field moved or dropped); no request of the client carries one unless its owner configured it, so
// that rare head is left to Beast itself rather than copying its token-list rules here.
void append_through_beast(std::string& out, std::string_view method, std::string_view target,
                          request_fields const& fields, std::size_t body_size) {
    bhttp::request<bhttp::empty_body> req;
    req.method_string(method);
    req.target(target);
    req.version(11);
    for (auto const& f : fields.items())
        req.set(f.name, f.value);
    if (has_body_length(method, body_size))
        req.content_length(body_size);
    else
        req.chunked(false);
    std::ostringstream os;
    os << req.base();
    out.append(os.str());
}

} // namespace

void request_fields::set(std::string_view name, std::string_view value) {
    fields_.erase(std::remove_if(fields_.begin(), fields_.end(),
                                 [&](header_field const& f) { return iequals(f.name, name); }),
                  fields_.end());
    fields_.push_back({name, trim(value)});
}

void append_request_head(std::string& out, std::string_view method, std::string_view target,
                         request_fields const& fields, std::size_t body_size) {
    auto const items = fields.items();
    if (std::any_of(items.begin(), items.end(),
                    [](header_field const& f) { return iequals(f.name, "Transfer-Encoding"); })) {
        append_through_beast(out, method, target, fields, body_size);
        return;
    }
    // One allocation for the whole head: appending field by field would grow the string several times.
    std::size_t size = method.size() + target.size() + 64;
    for (auto const& f : items)
        size += f.name.size() + f.value.size() + 4;
    out.reserve(out.size() + size);
    out.append(method).append(" ").append(target).append(" HTTP/1.1\r\n");
    // Content-Length is set last (so written last, whatever the caller set before) or dropped.
    for (auto const& f : items)
        if (!iequals(f.name, "Content-Length"))
            out.append(f.name).append(": ").append(f.value).append("\r\n");
    if (has_body_length(method, body_size)) {
        char digits[24];
        auto const end = std::to_chars(digits, digits + sizeof digits, body_size).ptr;
        out.append("Content-Length: ").append(digits, end).append("\r\n");
    }
    out.append("\r\n");
}

} // namespace duet::client::detail
