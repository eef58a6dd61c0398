#include <duet/client/detail/sse_parser.hpp>

#include <algorithm>
#include <charconv>
#include <utility>

namespace duet::client::detail {

namespace {
/// What a line may hold besides max_bytes of a message: "data: " and the like.
constexpr std::size_t line_slack = 16;
} // namespace

std::vector<sse_event> sse_parser::feed(std::string_view bytes) {
    // The stream's decoding drops one leading byte order mark (WHATWG: UTF-8 decode), which may come split.
    if (bom_pending_) {
        constexpr std::string_view bom = "\xEF\xBB\xBF";
        while (!bytes.empty() && bom_seen_ < bom.size() && bytes.front() == bom[bom_seen_]) {
            ++bom_seen_;
            bytes.remove_prefix(1);
        }
        if (bom_seen_ < bom.size() && bytes.empty())
            return {}; // all so far may be the start of one
        bom_pending_ = false;
        if (bom_seen_ < bom.size())
            consume(bom.substr(0, bom_seen_)); // not a mark: what looked like its start is text
    }
    consume(bytes);
    return std::exchange(out_, {});
}

void sse_parser::consume(std::string_view bytes) {
    for (char c : bytes) {
        if (overflowed_)
            break;
        if (skip_lf_) {
            skip_lf_ = false;
            if (c == '\n')
                continue;
        }
        if (c == '\n' || c == '\r') {
            skip_lf_ = c == '\r';
            line(buffer_);
            buffer_.clear();
        } else if (buffer_.size() - std::min(buffer_.size(), line_slack) >= max_bytes_) {
            // A line may hold its field's name besides a message of max_bytes.
            overflowed_ = true;
        } else {
            buffer_ += c;
        }
    }
}

void sse_parser::line(std::string_view l) {
    if (l.empty()) { // dispatch
        if (any_field_) {
            current_.id = last_id_;
            out_.push_back(std::move(current_));
        }
        current_ = {};
        any_field_ = false;
        return;
    }
    if (l.front() == ':')
        return; // comment (keep-alive)
    auto const colon = l.find(':');
    auto const field = l.substr(0, colon);
    std::string_view value = colon == std::string_view::npos ? std::string_view{} : l.substr(colon + 1);
    if (value.starts_with(' '))
        value.remove_prefix(1);
    if (field == "data") {
        auto const adds = value.size() + (current_.has_data ? 1 : 0);
        if (adds > max_bytes_ - std::min(current_.data.size(), max_bytes_)) {
            overflowed_ = true;
            return;
        }
        if (current_.has_data)
            current_.data += '\n';
        current_.data += value;
        current_.has_data = true;
        any_field_ = true;
    } else if (field == "id") {
        if (value.find('\0') == std::string_view::npos)
            last_id_ = std::string(value);
        any_field_ = true;
    } else if (field == "event") {
        current_.event = std::string(value);
        any_field_ = true;
    } else if (field == "retry") {
        // ASCII digits only, as the spec says: "-0", "+5" and " 5" are no retry.
        bool const digits = !value.empty() && std::all_of(value.begin(), value.end(),
                                                          [](char c) { return c >= '0' && c <= '9'; });
        long long ms = 0;
        auto const r = std::from_chars(value.data(), value.data() + value.size(), ms);
        if (digits && r.ec == std::errc{})
            retry_ = std::chrono::milliseconds(ms);
        any_field_ = true;
    }
}

} // namespace duet::client::detail
