// The HTTP client's reading of a response: Beast's parser, keeping only what the client asks of the head.
//
// Beast's parser does the HTTP/1 work (the status line, the field syntax, Content-Length, chunked and
// close-delimited bodies, the limits, keep-alive). The client then reads the status, the reason, the first
// Content-Type, the first Mcp-Session-Id, every WWW-Authenticate and the body; a `bhttp::response` would give
// every other field a node of its own in a case-insensitive tree, a few allocations for every answer an HTTP
// upstream sends the gateway. tests/unit/client/response_parser_test.cpp pins that a response reads the same
// as through Beast's own parser.
#pragma once

#include <boost/beast/http/basic_parser.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace duet::client::detail {

class response_parser final : public boost::beast::http::basic_parser<false> {
public:
    response_parser() = default;

    /// The status code, once the head is read.
    [[nodiscard]] unsigned status() const noexcept { return status_; }
    /// The reason phrase as sent, or the standard one for the status when the server sent none (as Beast's
    /// `reason()`).
    [[nodiscard]] std::string_view reason() const noexcept;
    /// 10 or 11.
    [[nodiscard]] unsigned version() const noexcept { return version_; }
    /// The first Content-Type field's value; empty when there is none.
    [[nodiscard]] std::string_view content_type() const noexcept { return content_type_; }
    /// The first Mcp-Session-Id field's value, if any.
    [[nodiscard]] std::optional<std::string_view> session_id() const noexcept;
    /// Every WWW-Authenticate field's value, in order (a 401 or 403 names what the server wants).
    [[nodiscard]] std::vector<std::string> const& www_authenticate() const noexcept {
        return www_authenticate_;
    }
    /// The largest body of a whole answer (anything but an event stream): a longer one, or a declared
    /// Content-Length over it, fails the parse with http::error::body_limit before it is read. An event
    /// stream is unbounded here: a long-lived stream is many messages, each bounded by the SSE reader.
    void max_whole_body(std::size_t bytes) noexcept { max_whole_body_ = bytes; }
    /// Whether the answer is an event stream (once the head is read).
    [[nodiscard]] bool event_stream() const noexcept {
        return content_type_.starts_with("text/event-stream");
    }
    /// The body read so far. A reader of an event stream takes what has come and clears it.
    [[nodiscard]] std::string& body() noexcept { return body_; }
    [[nodiscard]] std::string const& body() const noexcept { return body_; }

private:
    using error_code = boost::system::error_code;
    using string_view = boost::beast::string_view;

    void on_request_impl(boost::beast::http::verb method, string_view method_string, string_view target,
                         int version, error_code& ec) override;
    void on_response_impl(int status, string_view reason, int version, error_code& ec) override;
    void on_field_impl(boost::beast::http::field name, string_view name_string, string_view value,
                       error_code& ec) override;
    void on_header_impl(error_code& ec) override;
    void on_body_init_impl(boost::optional<std::uint64_t> const& content_length, error_code& ec) override;
    std::size_t on_body_impl(string_view body, error_code& ec) override;
    void on_chunk_header_impl(std::uint64_t size, string_view extensions, error_code& ec) override;
    std::size_t on_chunk_body_impl(std::uint64_t remain, string_view body, error_code& ec) override;
    void on_finish_impl(error_code& ec) override;

    unsigned status_ = 0;
    unsigned version_ = 11;
    std::string reason_;
    std::string content_type_;
    bool has_content_type_ = false;
    std::optional<std::string> session_id_;
    std::vector<std::string> www_authenticate_;
    std::string body_;
    std::size_t max_whole_body_ = static_cast<std::size_t>(-1);
};

} // namespace duet::client::detail
