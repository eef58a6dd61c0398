#include <duet/log/log.hpp>

#include <unistd.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <ctime>

namespace duet::log {

namespace {

std::atomic<level> threshold_{level::info};
std::atomic<format> format_{format::text};

void append_json_string(std::string& out, std::string_view s) {
    out += '"';
    for (unsigned char c : s) {
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (c < 0x20) {
                static constexpr char digits[] = "0123456789abcdef";
                out += "\\u00";
                out += digits[c >> 4];
                out += digits[c & 0xf];
            } else {
                out += static_cast<char>(c);
            }
        }
    }
    out += '"';
}

void append_field(std::string& out, std::string_view key, std::string_view value) {
    if (value.empty())
        return;
    out += ",\"";
    out += key;
    out += "\":";
    append_json_string(out, value);
}

// 2026-12-05T10:45:01.123Z
void append_now(std::string& out) {
    auto const now = std::chrono::system_clock::now();
    auto const seconds = std::chrono::system_clock::to_time_t(now);
    auto const ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char text[40];
    auto const n = std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                                 utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, int(ms));
    out.append(text, static_cast<std::size_t>(n));
}

} // namespace

std::optional<level> parse_level(std::string_view text) noexcept {
    if (text == "debug")
        return level::debug;
    if (text == "info")
        return level::info;
    if (text == "warning" || text == "warn")
        return level::warning;
    if (text == "error")
        return level::error;
    return std::nullopt;
}

std::optional<format> parse_format(std::string_view text) noexcept {
    if (text == "text")
        return format::text;
    if (text == "json")
        return format::json;
    return std::nullopt;
}

std::string_view to_string(level l) noexcept {
    switch (l) {
    case level::debug:
        return "debug";
    case level::info:
        return "info";
    case level::warning:
        return "warning";
    case level::error:
        return "error";
    }
    return "info";
}

void configure(format f, level threshold) noexcept {
    format_.store(f, std::memory_order_relaxed);
    threshold_.store(threshold, std::memory_order_relaxed);
}

bool enabled(level l) noexcept {
    return l >= threshold_.load(std::memory_order_relaxed);
}

format current_format() noexcept {
    return format_.load(std::memory_order_relaxed);
}

void append(std::string& out, event const& e, format f) {
    if (f == format::text) {
        out += e.component;
        out += ": ";
        out += e.message.empty() ? e.name : e.message;
        return;
    }
    out += "{\"ts\":\"";
    append_now(out);
    out += "\",\"level\":\"";
    out += to_string(e.severity);
    out += '"';
    append_field(out, "component", e.component);
    append_field(out, "event", e.name);
    append_field(out, "message", e.message);
    append_field(out, "method", e.method);
    append_field(out, "era", e.era);
    append_field(out, "session", e.session);
    append_field(out, "upstream", e.upstream);
    append_field(out, "outcome", e.outcome);
    if (e.latency_ms) {
        char digits[32];
        auto const [end, ec] =
            std::to_chars(digits, digits + sizeof digits, *e.latency_ms, std::chars_format::fixed, 3);
        if (ec == std::errc{})
            out.append(",\"latency_ms\":").append(digits, end);
    }
    append_field(out, "trace_id", e.trace_id);
    out += '}';
}

void write(event const& e) {
    if (!enabled(e.severity))
        return;
    std::string line;
    line.reserve(160);
    append(line, e, current_format());
    line += '\n';
    // One write(2): lines from several threads never interleave.
    std::size_t done = 0;
    while (done < line.size()) {
        auto const n = ::write(STDERR_FILENO, line.data() + done, line.size() - done);
        if (n <= 0)
            return;
        done += static_cast<std::size_t>(n);
    }
}

} // namespace duet::log
