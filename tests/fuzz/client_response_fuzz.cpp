// Fuzz target over the HTTP client's response parser (src/client/response_parser.hpp). The first byte picks
// the size of the reads, the second a body bound; the rest is what a server sent. The laws: the response
// reads exactly as through Beast's own parser (status, reason, version, keep-alive, first Content-Type,
// first Mcp-Session-Id, body, and the error) when the reads cut it alike; a whole answer never passes the
// bound the client sets for it; and its body, as JSON-RPC or as an event stream, is read without a crash.
#include <duet/client/detail/sse_parser.hpp>
#include <duet/jsonrpc/codec.hpp>

#include "client/response_parser.hpp"
#include "support/beast_feed.hpp"

#include <boost/beast/http.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace {

namespace bhttp = boost::beast::http;
using duet::client::detail::response_parser;
using duet::test::feed;

struct reading {
    boost::system::error_code ec;
    unsigned status = 0;
    std::string reason;
    unsigned version = 0;
    bool keep_alive = false;
    std::string content_type;
    std::optional<std::string> session_id;
    std::string body;
    bool operator==(reading const&) const = default;
};

reading through_beast(std::string_view raw, std::size_t step, std::optional<std::uint64_t> limit) {
    bhttp::response_parser<bhttp::string_body> parser;
    reading r;
    r.ec = feed(parser, raw, step, {.body = limit});
    if (r.ec)
        return r;
    auto const& m = parser.get();
    r.status = m.result_int();
    r.reason = std::string(m.reason());
    r.version = m.version();
    // The parser's keep-alive, not the message's: a close-delimited body ends the connection whatever the
    // Connection field says, and the client reuses a connection by the parser's word.
    r.keep_alive = parser.keep_alive();
    r.content_type = std::string(m[bhttp::field::content_type]);
    if (auto const it = m.find("Mcp-Session-Id"); it != m.end())
        r.session_id = std::string(it->value());
    r.body = m.body();
    return r;
}

reading through_duet(response_parser& parser, std::string_view raw, std::size_t step,
                     std::optional<std::uint64_t> limit) {
    reading r;
    r.ec = feed(parser, raw, step, {.body = limit});
    if (r.ec)
        return r;
    r.status = parser.status();
    r.reason = std::string(parser.reason());
    r.version = parser.version();
    r.keep_alive = parser.keep_alive();
    r.content_type = std::string(parser.content_type());
    if (auto const sid = parser.session_id())
        r.session_id = std::string(*sid);
    r.body = parser.body();
    return r;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    if (size < 2)
        return 0;
    std::size_t const step = 1 + data[0] % 64;
    // "No limit" is 1 MiB, past anything an input here holds: Beast's string_body reserves the whole declared
    // Content-Length up front, so an unbounded oracle would allocate whatever a header claims (ours grows
    // with the bytes that come, which is what AnnouncedBodiesThatNeverCome pins).
    std::optional<std::uint64_t> const limit =
        data[1] & 0x80 ? std::uint64_t{1} << 20 : std::uint64_t{data[1]} * 8;
    std::string_view const raw(reinterpret_cast<char const*>(data + 2), size - 2);

    response_parser duet;
    auto const ours = through_duet(duet, raw, step, limit);
    if (!(ours == through_beast(raw, step, limit)))
        std::abort();

    // The client's own bound on a whole answer (any but an event stream).
    std::size_t const whole_bound = data[1] % 64;
    response_parser bounded;
    bounded.max_whole_body(whole_bound);
    auto const capped = through_duet(bounded, raw, step, std::nullopt);
    if (!capped.ec && !bounded.event_stream() && capped.body.size() > whole_bound)
        std::abort();

    if (ours.ec)
        return 0;
    if (duet.event_stream()) {
        duet::client::detail::sse_parser sse(4 * 1024 * 1024);
        (void)sse.feed(ours.body);
    } else {
        (void)duet::jsonrpc::parse_frame(ours.body);
    }
    return 0;
}
