#include <duet/protocol/base64.hpp>
#include <duet/protocol/header_codec.hpp>

namespace duet::protocol {

namespace {

constexpr std::string_view prefix = "=?base64?";
constexpr std::string_view suffix = "?=";

bool looks_like_sentinel(std::string_view v) noexcept {
    return v.size() >= prefix.size() + suffix.size() && v.starts_with(prefix) && v.ends_with(suffix);
}

} // namespace

bool needs_header_encoding(std::string_view value) noexcept {
    if (value.empty())
        return false;
    if (value.front() == ' ' || value.back() == ' ' || value.front() == '\t' || value.back() == '\t')
        return true;
    for (unsigned char c : value)
        if (c < 0x20 || c >= 0x7F)
            return true;
    return looks_like_sentinel(value);
}

std::string encode_header_value(std::string_view value) {
    if (!needs_header_encoding(value))
        return std::string(value);
    std::string out(prefix);
    out += base64_encode(value);
    out += suffix;
    return out;
}

std::optional<std::string> decode_header_value(std::string_view header) {
    for (unsigned char c : header)
        if ((c < 0x20 && c != '\t') || c >= 0x7F)
            return std::nullopt;
    if (!looks_like_sentinel(header))
        return std::string(header);
    return base64_decode(header.substr(prefix.size(), header.size() - prefix.size() - suffix.size()));
}

bool iequals(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size())
        return false;
    // Clients mostly spell a header name as the spec does: one memcmp settles it.
    if (a == b)
        return true;
    for (std::size_t i = 0; i < a.size(); ++i) {
        char const x = a[i];
        char const y = b[i];
        // Bytes that differ match only as the two cases of one ASCII letter (they differ in bit 0x20).
        if (x != y) {
            auto const lower = static_cast<unsigned char>(x | 0x20);
            if (lower != static_cast<unsigned char>(y | 0x20) || lower < 'a' || lower > 'z')
                return false;
        }
    }
    return true;
}

} // namespace duet::protocol
