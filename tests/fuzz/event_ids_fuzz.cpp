// Fuzz target over the SSE event ids of legacy session streams (src/transport/http/event_ids.hpp), which come
// back from clients in Last-Event-ID. The laws: an id parse_event_id accepts is exactly the text
// format_event_id writes for its position, and every formatted position parses back to itself.
#include "transport/http/event_ids.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

using namespace duet::transport::http;

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    std::string_view const id(reinterpret_cast<char const*>(data), size);
    if (auto const p = parse_event_id(id); p && format_event_id(p->stream, p->seq) != id)
        std::abort();
    // The first 16 bytes as a position: formatted, it parses back to itself.
    if (size >= 16) {
        std::uint64_t stream = 0, seq = 0;
        std::memcpy(&stream, data, 8);
        std::memcpy(&seq, data + 8, 8);
        auto const back = parse_event_id(format_event_id(stream, seq));
        if (!back || back->stream != stream || back->seq != seq)
            std::abort();
    }
    return 0;
}
