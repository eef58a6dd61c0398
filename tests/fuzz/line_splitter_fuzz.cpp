// Fuzz target over the stdio line splitter (src/support/line_splitter.hpp), both ends of stdio. The first
// bytes choose the longest line, the first buffer and the sizes of the reads; the rest is the stream. What
// the splitter hands on must be what a plain reference split of the whole stream says, however the reads cut
// it: each line less one trailing '\r', blank lines dropped, a line over the bound reported once (as soon as
// its bytes pass the bound, newline or not), and the bytes after the last newline left unfinished.
#include "support/line_splitter.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr std::string_view oversized = "<oversized>";

struct expected_split {
    std::vector<std::string> events;
    std::string unfinished;
};

expected_split reference(std::string_view stream, std::size_t max_line) {
    expected_split out;
    std::size_t begin = 0;
    for (auto nl = stream.find('\n'); nl != std::string_view::npos; nl = stream.find('\n', begin)) {
        auto line = stream.substr(begin, nl - begin);
        begin = nl + 1;
        if (line.size() > max_line) {
            out.events.emplace_back(oversized);
            continue;
        }
        if (line.ends_with('\r'))
            line.remove_suffix(1);
        if (!line.empty())
            out.events.emplace_back(line);
    }
    auto const tail = stream.substr(begin);
    if (tail.size() > max_line)
        out.events.emplace_back(oversized);
    else
        out.unfinished = tail;
    return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    if (size < 3)
        return 0;
    // A bound of 0 to 62 bytes, or none at all; a first buffer of 0 to 31 bytes, or one over the bound as the
    // client sizes it (which wraps to 0 when there is no bound); reads of varied sizes.
    std::size_t const max_line = data[0] % 64 == 63 ? static_cast<std::size_t>(-1) : data[0] % 64;
    std::size_t const first_buffer = data[1] & 0x80 ? max_line + 1 : data[1] % 32;
    std::uint32_t sizes = data[2] | 1u;
    std::string_view stream(reinterpret_cast<char const*>(data + 3), size - 3);
    auto const want = reference(stream, max_line);

    duet::support::line_splitter split(max_line, first_buffer);
    std::vector<std::string> got;
    while (!stream.empty()) {
        auto const room = split.space();
        if (room.empty())
            std::abort(); // space() is never empty
        sizes = sizes * 1103515245u + 12345u;
        auto const n = std::min({room.size(), stream.size(), std::size_t{1} + (sizes >> 16) % 23});
        std::copy_n(stream.data(), n, room.data());
        stream.remove_prefix(n);
        split.commit(
            n, [&](std::string_view line) { got.emplace_back(line); }, [&] { got.emplace_back(oversized); });
    }
    if (got != want.events || split.unfinished() != want.unfinished)
        std::abort();
    return 0;
}
