// A request as the server reads it, and the parser that fills it.
//
// Beast's parser does the HTTP/1 work (the request line, the field syntax, Content-Length and chunked
// framing, the limits, keep-alive); what it hands over is kept here instead of in a `bhttp::request`. Beast's
// basic_fields gives every field a node of its own, linked into a case-insensitive tree for lookups the
// server never makes (it walks a request's few fields in order): about a twelfth of what a plain request
// costs `duet serve`. Here the request line's target and the fields' names and values are appended to one
// buffer and each field is a small entry of offsets into it, so a request's head is two allocations from the
// frame pool. Fields keep arrival order and duplicates (Beast lists a repeated name's values together; the
// server only looks fields up by name); tests/http/request_parser_test.cpp pins that a request reads the same
// through both.
#pragma once

#include "frame_allocator.hpp"

#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/verb.hpp>

#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace duet::transport::http {

/// One header field of a request, as Beast's fields present it: the known name (or field::unknown), the
/// name as sent, the value.
class request_field {
public:
    request_field(boost::beast::http::field name, std::string_view name_string,
                  std::string_view value) noexcept
        : name_(name), name_string_(name_string), value_(value) {}
    [[nodiscard]] boost::beast::http::field name() const noexcept { return name_; }
    [[nodiscard]] std::string_view name_string() const noexcept { return name_string_; }
    [[nodiscard]] std::string_view value() const noexcept { return value_; }

private:
    boost::beast::http::field name_;
    std::string_view name_string_;
    std::string_view value_;
};

class request {
    using frame_string = std::basic_string<char, std::char_traits<char>, frame_allocator<char>>;

public:
    using body_type = frame_string;

    request() = default;
    /// A request read no further than its version (for the answer to one that could not be read).
    explicit request(unsigned version) noexcept : version_(version) {}

    [[nodiscard]] boost::beast::http::verb method() const noexcept { return method_; }
    [[nodiscard]] std::string_view target() const noexcept { return slice(target_); }
    [[nodiscard]] unsigned version() const noexcept { return version_; }
    [[nodiscard]] bool keep_alive() const noexcept { return keep_alive_; }
    [[nodiscard]] body_type const& body() const noexcept { return body_; }

    class const_iterator {
    public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = request_field;
        using difference_type = std::ptrdiff_t;
        using pointer = void;
        using reference = request_field;

        const_iterator() = default;
        [[nodiscard]] request_field operator*() const noexcept { return owner_->field_at(index_); }
        const_iterator& operator++() noexcept {
            ++index_;
            return *this;
        }
        const_iterator operator++(int) noexcept {
            auto before = *this;
            ++index_;
            return before;
        }
        friend bool operator==(const_iterator const&, const_iterator const&) = default;

    private:
        friend class request;
        const_iterator(request const* owner, std::size_t index) noexcept : owner_(owner), index_(index) {}
        request const* owner_ = nullptr;
        std::size_t index_ = 0;
    };

    [[nodiscard]] const_iterator begin() const noexcept { return {this, 0}; }
    [[nodiscard]] const_iterator end() const noexcept { return {this, fields_.size()}; }

private:
    friend class request_parser;

    // Offsets, not views: the text buffer grows while the head is read, and a short one moves with the
    // request.
    struct span {
        std::uint32_t offset = 0;
        std::uint32_t size = 0;
    };
    struct entry {
        boost::beast::http::field name;
        span name_string;
        span value;
    };

    [[nodiscard]] std::string_view slice(span s) const noexcept { return {text_.data() + s.offset, s.size}; }
    [[nodiscard]] request_field field_at(std::size_t i) const noexcept {
        auto const& e = fields_[i];
        return {e.name, slice(e.name_string), slice(e.value)};
    }
    span append(std::string_view s) {
        span const at{static_cast<std::uint32_t>(text_.size()), static_cast<std::uint32_t>(s.size())};
        text_.append(s);
        return at;
    }

    boost::beast::http::verb method_ = boost::beast::http::verb::unknown;
    unsigned version_ = 11;
    bool keep_alive_ = false;
    span target_;
    frame_string text_; ///< the target, then each field's name and value
    std::vector<entry, frame_allocator<entry>> fields_;
    body_type body_;
};

/// Told when a request's body begins, inside the read: the server re-bounds the read by the body's size
/// (read_pacing.hpp). An interface, so the parser itself holds no I/O (the fuzz build parses without it).
class body_pacing {
public:
    /// A body follows, of this declared length (none: chunked).
    virtual void on_body(std::optional<std::uint64_t> content_length) = 0;

protected:
    ~body_pacing() = default;
};

/// Beast's request parser, filling a `request`. One per request, as with Beast's own parser. With a pacing,
/// it re-bounds the read as the body begins; a target longer than `max_target_bytes` fails the read with
/// bad_target and target_too_long().
class request_parser final : public boost::beast::http::basic_parser<true> {
public:
    request_parser();
    request_parser(body_pacing* pacing, std::size_t max_target_bytes);

    [[nodiscard]] bool target_too_long() const noexcept { return target_too_long_; }

    /// The request, once is_done(); the parser is not used again.
    [[nodiscard]] request release() noexcept { return std::move(request_); }

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

    request request_;
    body_pacing* pacing_ = nullptr;
    std::size_t max_target_bytes_ = 0; ///< 0: any
    bool target_too_long_ = false;
};

} // namespace duet::transport::http
