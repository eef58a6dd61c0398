// The SSE ids of a legacy session's resumable events (store/event_log.hpp): the stream and the sequence
// number, which `Last-Event-ID` brings back.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace duet::transport::http {

/// The SSE id of event `seq` of stream `stream`: "<stream>-<seq>". Sequence 0 names the point before the
/// first event (a priming event's id).
[[nodiscard]] std::string format_event_id(std::uint64_t stream, std::uint64_t seq);

struct event_position {
    std::uint64_t stream;
    std::uint64_t seq;
};
/// The inverse of format_event_id; nullopt for anything else.
[[nodiscard]] std::optional<event_position> parse_event_id(std::string_view id);

} // namespace duet::transport::http
