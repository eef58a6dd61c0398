// File: tests/support/beast_feed.hpp
//
// Bytes offered to a Beast HTTP/1 parser as reads of a given size would bring them, for the tests that pin
// our own parsers (the server's request, the client's response) to read exactly as Beast's do.
//
//     bhttp::response_parser<bhttp::string_body> beast;
//     auto const ec = duet::test::feed(beast, raw, 7, {.body = std::nullopt});
#pragma once

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/none.hpp>
#include <boost/system/error_code.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace duet::test {

struct parse_limits {
    std::uint32_t header = 8 * 1024;
    std::optional<std::uint64_t> body = 1024 * 1024; ///< nullopt: no limit
};

/// Feeds `raw` to `parser` `step` bytes at a time: the bytes a put leaves stay buffered and are offered again
/// with the next ones. The parser is eager, as our reads go on past the head into the body. When the bytes
/// run out first, the stream ends as Beast's reads end it: end_of_stream before any byte, else put_eof (a
/// close-delimited body completes; anything else is a partial_message).
template<class Parser>
boost::system::error_code feed(Parser& parser, std::string_view raw, std::size_t step,
                               parse_limits lim = {}) {
    namespace bhttp = boost::beast::http;
    parser.header_limit(lim.header);
    if (lim.body)
        parser.body_limit(*lim.body);
    else
        parser.body_limit(boost::none);
    parser.eager(true);
    boost::beast::flat_buffer buffer;
    std::size_t offered = 0;
    while (!parser.is_done()) {
        boost::system::error_code ec;
        if (offered == raw.size()) {
            if (!parser.got_some())
                return bhttp::error::end_of_stream;
            parser.put_eof(ec);
            return ec;
        }
        auto const n = std::min(step, raw.size() - offered);
        auto out = buffer.prepare(n);
        std::memcpy(out.data(), raw.data() + offered, n);
        buffer.commit(n);
        offered += n;
        auto const used = parser.put(buffer.data(), ec);
        buffer.consume(used);
        if (ec == bhttp::error::need_more)
            continue;
        if (ec)
            return ec;
    }
    return {};
}

} // namespace duet::test
