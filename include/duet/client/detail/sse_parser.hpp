// File: duet/client/detail/sse_parser.hpp
//
// An incremental parser for text/event-stream (the WHATWG rules the Streamable HTTP transport uses): bytes in
// as they arrive, complete events out. Tracks the last event id and the server's `retry` so a legacy client
// can resume with Last-Event-ID after the delay the server asked for. Accepts "\n", "\r\n" and "\r" line
// ends, and drops a byte order mark at the stream's start.
//
//     sse_parser p;
//     for(auto& e : p.feed(chunk)) deliver(e.data);
//     p.last_event_id(); p.retry();
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace duet::client::detail {

struct sse_event {
    std::string id;    ///< the event's `id:` (empty when none)
    std::string event; ///< the `event:` type (empty: "message")
    std::string data;  ///< `data:` lines joined with "\n"
    bool has_data = false;
};

class sse_parser {
public:
    /// `max_bytes`: the longest line, and the most data one event gathers; past either the parser stops
    /// (overflowed()) instead of holding more of what a server sends without end.
    explicit sse_parser(std::size_t max_bytes = static_cast<std::size_t>(-1)) : max_bytes_(max_bytes) {}

    /// Consumes bytes; returns the events they completed (including those without data, e.g. priming
    /// events that only carry an id and a retry). Nothing once overflowed.
    std::vector<sse_event> feed(std::string_view bytes);
    /// A line or an event's data went over max_bytes: the stream cannot be read on.
    [[nodiscard]] bool overflowed() const noexcept { return overflowed_; }
    /// The last `id:` seen (persists across events, as the spec says).
    [[nodiscard]] std::string const& last_event_id() const noexcept { return last_id_; }
    /// The last valid `retry:` in milliseconds.
    [[nodiscard]] std::optional<std::chrono::milliseconds> retry() const noexcept { return retry_; }

private:
    void consume(std::string_view bytes);
    void line(std::string_view l);
    std::size_t max_bytes_;
    bool overflowed_ = false;
    std::string buffer_;
    bool skip_lf_ = false;     // a "\r" ended the last line; a following "\n" belongs to it
    bool bom_pending_ = true;  // at the stream's start: a byte order mark there is dropped
    std::size_t bom_seen_ = 0; // bytes of the mark seen so far
    sse_event current_;
    bool any_field_ = false;
    std::vector<sse_event> out_;
    std::string last_id_;
    std::optional<std::chrono::milliseconds> retry_;
};

} // namespace duet::client::detail
