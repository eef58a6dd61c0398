#include "request.hpp"

#include <boost/beast/http/error.hpp>

#include <algorithm>

namespace duet::transport::http {

namespace bhttp = boost::beast::http;

namespace {
// Room for a typical request's line target and fields (an MCP client sends eight to ten, about 300 bytes of
// names and values) before either grows.
constexpr std::size_t typical_head_bytes = 384;
constexpr std::size_t typical_fields = 12;
// A declared length reserves at most this much: the rest grows with the bytes that arrive, so requests
// announcing 4 MiB and sending nothing reserve nothing like 4 MiB each.
constexpr std::size_t max_body_reserve = 64 * 1024;
} // namespace

request_parser::request_parser() {
    request_.text_.reserve(typical_head_bytes);
    request_.fields_.reserve(typical_fields);
}

request_parser::request_parser(body_pacing* pacing, std::size_t max_target_bytes) : request_parser() {
    pacing_ = pacing;
    max_target_bytes_ = max_target_bytes;
}

void request_parser::on_request_impl(bhttp::verb method, string_view, string_view target, int version,
                                     error_code& ec) {
    if (max_target_bytes_ != 0 && target.size() > max_target_bytes_) {
        target_too_long_ = true;
        ec = bhttp::error::bad_target;
        return;
    }
    request_.method_ = method; // an unknown verb stays unknown: the server answers 405 whatever it is
    request_.version_ = static_cast<unsigned>(version);
    request_.target_ = request_.append({target.data(), target.size()});
    ec = {};
}

void request_parser::on_response_impl(int, string_view, int, error_code& ec) {
    ec = bhttp::error::bad_version; // unreachable: a request parser never reads a status line
}

void request_parser::on_field_impl(bhttp::field name, string_view name_string, string_view value,
                                   error_code& ec) {
    auto const n = request_.append({name_string.data(), name_string.size()});
    auto const v = request_.append({value.data(), value.size()});
    request_.fields_.push_back({name, n, v});
    ec = {};
}

void request_parser::on_header_impl(error_code& ec) {
    request_.keep_alive_ = keep_alive();
    ec = {};
}

void request_parser::on_body_init_impl(boost::optional<std::uint64_t> const& content_length, error_code& ec) {
    // The parser has checked a declared length against body_limit before it gets here.
    if (content_length)
        request_.body_.reserve(std::min(static_cast<std::size_t>(*content_length), max_body_reserve));
    if (pacing_)
        pacing_->on_body(content_length ? std::optional(*content_length) : std::nullopt);
    ec = {};
}

std::size_t request_parser::on_body_impl(string_view body, error_code& ec) {
    request_.body_.append(body.data(), body.size());
    ec = {};
    return body.size();
}

void request_parser::on_chunk_header_impl(std::uint64_t, string_view, error_code& ec) {
    ec = {};
}

std::size_t request_parser::on_chunk_body_impl(std::uint64_t, string_view body, error_code& ec) {
    return on_body_impl(body, ec);
}

void request_parser::on_finish_impl(error_code& ec) {
    ec = {};
}

} // namespace duet::transport::http
