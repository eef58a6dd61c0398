// Fuzz target over the client's text/event-stream parser (duet/client/detail/sse_parser.hpp). The first two
// bytes choose the bound (none, or 1 to 127 bytes) and how reads cut the stream; the rest is the stream. The
// laws: the events, the last event id, the retry and the overflow are the same however the stream is cut and
// whether or not it starts with a byte order mark; no event's data passes the bound; each event written back
// as SSE reads back the same; and a `retry:` is taken exactly when its value is ASCII digits.
#include <duet/client/detail/sse_parser.hpp>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

using duet::client::detail::sse_event;
using duet::client::detail::sse_parser;

struct reading {
    std::vector<sse_event> events;
    std::string last_id;
    std::optional<long long> retry;
    bool overflowed = false;
};

bool same(sse_event const& a, sse_event const& b) {
    return a.id == b.id && a.event == b.event && a.data == b.data && a.has_data == b.has_data;
}

bool same(reading const& a, reading const& b) {
    return a.last_id == b.last_id && a.retry == b.retry && a.overflowed == b.overflowed &&
           std::equal(a.events.begin(), a.events.end(), b.events.begin(), b.events.end(),
                      [](sse_event const& x, sse_event const& y) { return same(x, y); });
}

// `stream` fed in pieces of 1 to 16 bytes drawn from `seed`, or whole when the seed is 0.
reading read(std::string_view stream, std::size_t max_bytes, std::uint32_t seed) {
    sse_parser p(max_bytes);
    reading r;
    while (!stream.empty()) {
        std::size_t n = stream.size();
        if (seed != 0) {
            seed = seed * 1103515245u + 12345u;
            n = std::min<std::size_t>(n, 1 + (seed >> 16) % 16);
        }
        auto events = p.feed(stream.substr(0, n));
        stream.remove_prefix(n);
        for (auto& e : events)
            r.events.push_back(std::move(e));
    }
    r.last_id = p.last_event_id();
    if (p.retry())
        r.retry = p.retry()->count();
    r.overflowed = p.overflowed();
    return r;
}

// One event as a server would write it.
std::string written(sse_event const& e) {
    std::string out = "id: " + e.id + "\n";
    if (!e.event.empty())
        out += "event: " + e.event + "\n";
    if (e.has_data) {
        std::size_t begin = 0;
        for (auto nl = e.data.find('\n'); nl != std::string::npos; nl = e.data.find('\n', begin)) {
            out += "data: " + e.data.substr(begin, nl - begin) + "\n";
            begin = nl + 1;
        }
        out += "data: " + e.data.substr(begin) + "\n";
    }
    return out + "\n";
}

// Whether `value` (after one optional leading space) is a retry the spec takes, and as what.
std::optional<long long> retry_of(std::string_view value) {
    if (value.starts_with(' '))
        value.remove_prefix(1);
    if (value.empty() ||
        !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
    long long ms = 0;
    auto const r = std::from_chars(value.data(), value.data() + value.size(), ms);
    if (r.ec != std::errc{})
        return std::nullopt; // too large for the clock: ignored
    return ms;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    if (size < 2)
        return 0;
    std::size_t const max_bytes = data[0] & 0x80 ? static_cast<std::size_t>(-1) : std::size_t{1} + data[0];
    std::uint32_t const seed = data[1] | 1u;
    std::string_view const stream(reinterpret_cast<char const*>(data + 2), size - 2);

    auto const whole = read(stream, max_bytes, 0);
    if (!same(whole, read(stream, max_bytes, seed)))
        std::abort();
    if (!stream.starts_with("\xEF\xBB\xBF") &&
        !same(whole, read("\xEF\xBB\xBF" + std::string(stream), max_bytes, seed)))
        std::abort();
    for (auto const& e : whole.events) {
        if (max_bytes != static_cast<std::size_t>(-1) && e.data.size() > max_bytes)
            std::abort();
        auto const back = read(written(e), static_cast<std::size_t>(-1), 0);
        if (back.events.size() != 1 || !same(back.events[0], e))
            std::abort();
    }

    // The stream's first line as a retry value.
    auto const value = stream.substr(0, std::min(stream.find_first_of("\r\n"), std::size_t{24}));
    auto const retry = read("retry:" + std::string(value) + "\n\n", static_cast<std::size_t>(-1), 0).retry;
    if (retry != retry_of(value))
        std::abort();
    return 0;
}
