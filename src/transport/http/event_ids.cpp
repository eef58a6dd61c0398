#include "event_ids.hpp"

#include <charconv>

namespace duet::transport::http {

std::string format_event_id(std::uint64_t stream, std::uint64_t seq) {
    return std::to_string(stream) + "-" + std::to_string(seq);
}

std::optional<event_position> parse_event_id(std::string_view id) {
    auto const dash = id.find('-');
    if (dash == std::string_view::npos || dash == 0 || dash + 1 == id.size())
        return std::nullopt;
    auto number = [](std::string_view s) -> std::optional<std::uint64_t> {
        // Written without leading zeros: "01-2" names no event ("1-2" does), so it is not one's id.
        if (s.size() > 1 && s.front() == '0')
            return std::nullopt;
        std::uint64_t v = 0;
        auto const [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec != std::errc{} || end != s.data() + s.size())
            return std::nullopt;
        return v;
    };
    auto const stream = number(id.substr(0, dash));
    auto const seq = number(id.substr(dash + 1));
    if (!stream || !seq)
        return std::nullopt;
    return event_position{*stream, *seq};
}

} // namespace duet::transport::http
