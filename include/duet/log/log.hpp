/// @file duet/log/log.hpp
///
/// The process's log: events to stderr (never stdout, which a stdio server speaks on), as human lines or as
/// one JSON object per line (`--log-format json`), at or above a level (`--log-level`). Duet's libraries
/// log through it: a handler that failed, what the HTTP server refused to do, each request the gateway
/// forwards (info), each request answered (debug).
///
///     duet::log::configure(duet::log::format::json, duet::log::level::info);   // once, at start
///     duet::log::write({.severity = duet::log::level::warning, .name = "listener", .message = "..."});
///
/// A JSON line holds "ts" (UTC, RFC 3339 with milliseconds), "level", "component", "event", "message" when
/// there is one, then whichever of method, era, session, upstream, outcome, latency_ms and trace_id the event
/// has.
///
/// @par Thread safety
/// configure() before serving; enabled() and write() from any thread (one write(2) per line).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace duet::log {

enum class level : std::uint8_t { debug, info, warning, error };
enum class format : std::uint8_t { text, json };

[[nodiscard]] std::optional<level> parse_level(std::string_view text) noexcept;
[[nodiscard]] std::optional<format> parse_format(std::string_view text) noexcept;
[[nodiscard]] std::string_view to_string(level l) noexcept;

/// Sets the format and the lowest level written (default: text, info).
void configure(format f, level threshold) noexcept;
[[nodiscard]] bool enabled(level l) noexcept;
[[nodiscard]] format current_format() noexcept;

/// One event; empty fields are left out.
struct event {
    level severity = level::info;
    std::string_view component = "duet"; ///< who says it: "duet", "duet http", "duet gateway"
    std::string_view name;               ///< what happened: "request", "forwarded", "handler_failed", ...
    std::string_view message;            ///< in words: the text format's line is "COMPONENT: MESSAGE"
    std::string_view method;
    std::string_view era;
    std::string_view session;
    std::string_view upstream;
    std::string_view outcome;
    std::optional<double> latency_ms;
    std::string_view trace_id;
};

/// The event as one line without its newline: a JSON object, or "COMPONENT: MESSAGE".
void append(std::string& out, event const& e, format f);
/// Writes the event to stderr in the configured format, when its level is enabled.
void write(event const& e);

} // namespace duet::log
