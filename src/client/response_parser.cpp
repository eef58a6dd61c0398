#include "response_parser.hpp"

#include <duet/protocol/header_codec.hpp>

#include <boost/beast/http/error.hpp>
#include <boost/beast/http/status.hpp>

#include <algorithm>

namespace duet::client::detail {

namespace bhttp = boost::beast::http;

namespace {
// A declared length is reserved up to this much at once: the length is the server's word, not yet bytes that
// arrived.
constexpr std::uint64_t reserve_at_most = 64 * 1024;
} // namespace

std::string_view response_parser::reason() const noexcept {
    if (!reason_.empty())
        return reason_;
    auto const standard = bhttp::obsolete_reason(bhttp::int_to_status(status_));
    return {standard.data(), standard.size()};
}

std::optional<std::string_view> response_parser::session_id() const noexcept {
    if (!session_id_)
        return std::nullopt;
    return std::string_view(*session_id_);
}

void response_parser::on_request_impl(bhttp::verb, string_view, string_view, int, error_code& ec) {
    ec = bhttp::error::bad_method; // unreachable: a response parser never reads a request line
}

void response_parser::on_response_impl(int status, string_view reason, int version, error_code& ec) {
    status_ = static_cast<unsigned>(status);
    version_ = static_cast<unsigned>(version);
    reason_.assign(reason.data(), reason.size());
    ec = {};
}

void response_parser::on_field_impl(bhttp::field name, string_view name_string, string_view value,
                                    error_code& ec) {
    // The first of each, as Beast's fields find them.
    if (name == bhttp::field::content_type) {
        // The first one, even when empty: a later one does not make an answer an event stream.
        if (!has_content_type_)
            content_type_.assign(value.data(), value.size());
        has_content_type_ = true;
    } else if (name == bhttp::field::www_authenticate) {
        www_authenticate_.emplace_back(value.data(), value.size());
    } else if (!session_id_ &&
               protocol::iequals({name_string.data(), name_string.size()}, "Mcp-Session-Id")) {
        session_id_.emplace(value.data(), value.size());
    }
    ec = {};
}

void response_parser::on_header_impl(error_code& ec) {
    ec = {};
}

void response_parser::on_body_init_impl(boost::optional<std::uint64_t> const& content_length,
                                        error_code& ec) {
    if (content_length) {
        if (!event_stream() && *content_length > max_whole_body_) {
            ec = bhttp::error::body_limit;
            return;
        }
        if (*content_length > body_.max_size()) {
            ec = bhttp::error::buffer_overflow;
            return;
        }
        body_.reserve(static_cast<std::size_t>(std::min(*content_length, reserve_at_most)));
    }
    ec = {};
}

std::size_t response_parser::on_body_impl(string_view body, error_code& ec) {
    if (!event_stream() && body.size() > max_whole_body_ - std::min(body_.size(), max_whole_body_)) {
        ec = bhttp::error::body_limit;
        return 0;
    }
    body_.append(body.data(), body.size());
    ec = {};
    return body.size();
}

void response_parser::on_chunk_header_impl(std::uint64_t, string_view, error_code& ec) {
    ec = {};
}

std::size_t response_parser::on_chunk_body_impl(std::uint64_t, string_view body, error_code& ec) {
    return on_body_impl(body, ec);
}

void response_parser::on_finish_impl(error_code& ec) {
    ec = {};
}

} // namespace duet::client::detail
