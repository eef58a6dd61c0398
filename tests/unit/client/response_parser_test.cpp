// The HTTP client's response parser (src/client/response_parser): Beast's HTTP/1 parser, keeping of the head
// only what the client reads instead of a `bhttp::response` whose basic_fields allocate every field. The
// client must read every response as it did through Beast's own parser: the same status, reason, version,
// keep-alive, first Content-Type, first Mcp-Session-Id and body, and the same errors, however the bytes
// arrive.
#include "client/response_parser.hpp"
#include "support/beast_feed.hpp"

#include <boost/beast/http.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

void PrintTo(reading const& r, std::ostream* os) {
    *os << "ec=" << r.ec.message() << " status=" << r.status << " reason=" << r.reason
        << " version=" << r.version << " keep_alive=" << r.keep_alive << " content_type=" << r.content_type
        << " session_id=" << r.session_id.value_or("(none)") << " body=" << r.body;
}

reading through_beast(std::string const& raw, std::size_t step, std::optional<std::uint64_t> limit) {
    bhttp::response_parser<bhttp::string_body> parser;
    reading r;
    r.ec = feed(parser, raw, step, {.body = limit});
    if (r.ec)
        return r;
    auto const& m = parser.get();
    r.status = m.result_int();
    r.reason = std::string(m.reason());
    r.version = m.version();
    r.keep_alive = m.keep_alive();
    r.content_type = std::string(m[bhttp::field::content_type]);
    if (auto const it = m.find("Mcp-Session-Id"); it != m.end())
        r.session_id = std::string(it->value());
    r.body = m.body();
    return r;
}

reading through_duet(std::string const& raw, std::size_t step, std::optional<std::uint64_t> limit) {
    response_parser parser;
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

struct sample {
    char const* name;
    std::string raw;
    std::optional<std::uint64_t> body_limit = std::nullopt;
};

void PrintTo(sample const& s, std::ostream* os) {
    *os << s.name;
}

std::vector<sample> const samples{
    {"NodeJsonAnswer",
     "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nmcp-session-id: 3f2a\r\n"
     "content-length: 78\r\nDate: Tue, 01 Dec 2026 21:48:23 GMT\r\nConnection: keep-alive\r\n"
     "Keep-Alive: timeout=120\r\n\r\n"
     R"({"result":{"content":[{"type":"text","text":"hello"}]},"jsonrpc":"2.0","id":3})"},
    {"ChunkedJsonWithTrailer", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                               "Transfer-Encoding: chunked\r\n\r\n"
                               "7\r\n{\"id\":1\r\n"
                               "6;ext=1\r\n,\"x\":2\r\n"
                               "1\r\n}\r\n0\r\nX-Trailer: t\r\n\r\n"},
    {"EventStream", "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                    "Transfer-Encoding: chunked\r\n\r\n"
                    "1a\r\nid: 1\ndata: {\"id\":1}\n\n\r\n"
                    "0\r\n\r\n"},
    {"CloseDelimitedBody", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
                           R"({"jsonrpc":"2.0","id":9,"result":{}})"},
    {"Http10WithoutKeepAlive",
     "HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"},
    {"Http10WithKeepAlive", "HTTP/1.0 202 Accepted\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n"},
    {"EmptyReasonTakesTheStandardOne", "HTTP/1.1 404 \r\nContent-Length: 0\r\n\r\n"},
    {"ReasonAsSent", "HTTP/1.1 401 Who Are You\r\nWWW-Authenticate: Bearer\r\nContent-Length: 0\r\n\r\n"},
    {"UnknownStatus", "HTTP/1.1 299 Odd\r\nContent-Length: 0\r\n\r\n"},
    {"NoContent", "HTTP/1.1 204 No Content\r\nContent-Type: application/json\r\n\r\n"},
    {"FirstOfRepeatedFields",
     "HTTP/1.1 200 OK\r\nMCP-SESSION-ID: first\r\ncontent-TYPE: text/plain\r\n"
     "Mcp-Session-Id: second\r\nContent-Type: application/json\r\nContent-Length: 1\r\n"
     "\r\nx"},
    {"EmptySessionId", "HTTP/1.1 200 OK\r\nMcp-Session-Id:\r\nContent-Length: 0\r\n\r\n"},
    {"ErrorBody", "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: 60\r\n\r\n"
                  R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":""}})"},
    {"OverTheBodyLimit", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789", 4},
    {"ChunkedOverTheBodyLimit",
     "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\na\r\n0123456789\r\n0\r\n\r\n", 4},
    {"HeadOverTheLimit", "HTTP/1.1 200 OK\r\nX-Big: " + std::string(9000, 'a') + "\r\n\r\n"},
    {"MalformedStatusLine", "HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n"},
    {"NotHttp", "SSH-2.0-OpenSSH\r\n\r\n"},
    {"BadContentLength", "HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n"},
    {"TruncatedBody", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n01234"},
    {"TruncatedChunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\na\r\n01234"},
    {"EmptyFirstContentType", "HTTP/1.1 200 OK\r\nContent-Type:\r\nContent-Type: text/event-stream\r\n"
                              "Content-Length: 2\r\n\r\n{}"},
};

std::string const& raw_of(std::string_view name) {
    auto const it =
        std::find_if(samples.begin(), samples.end(), [&](sample const& s) { return s.name == name; });
    return it->raw;
}

class ResponseParser : public ::testing::TestWithParam<sample> {};

TEST_P(ResponseParser, ReadsAResponseAsBeastsOwnParserDoesForEveryReadSize) {
    for (std::size_t const step : {std::size_t{1}, std::size_t{7}, std::size_t{64}, std::size_t{100000}}) {
        auto const beast = through_beast(GetParam().raw, step, GetParam().body_limit);
        auto const duet = through_duet(GetParam().raw, step, GetParam().body_limit);
        EXPECT_EQ(duet, beast) << "reads of " << step << " bytes";
    }
}

INSTANTIATE_TEST_SUITE_P(Samples, ResponseParser, ::testing::ValuesIn(samples),
                         [](auto const& row) { return std::string(row.param.name); });

// The samples above must mean something: the readings they compare are the ones expected, not two equal
// failures.
TEST(ResponseParserReadings, TheSamplesReadAsTheirNamesSay) {
    auto const json = through_duet(raw_of("NodeJsonAnswer"), 64, std::nullopt);
    EXPECT_FALSE(json.ec);
    EXPECT_EQ(json.status, 200u);
    EXPECT_TRUE(json.keep_alive);
    EXPECT_EQ(json.content_type, "application/json");
    EXPECT_EQ(json.session_id, "3f2a");
    EXPECT_EQ(json.body.size(), 78u);

    auto const chunked = through_duet(raw_of("ChunkedJsonWithTrailer"), 7, std::nullopt);
    EXPECT_FALSE(chunked.ec);
    EXPECT_EQ(chunked.body, R"({"id":1,"x":2})");

    auto const closing = through_duet(raw_of("CloseDelimitedBody"), 1, std::nullopt);
    EXPECT_FALSE(closing.ec);
    EXPECT_FALSE(closing.keep_alive);
    EXPECT_EQ(closing.body, R"({"jsonrpc":"2.0","id":9,"result":{}})");

    auto const empty_reason = through_duet(raw_of("EmptyReasonTakesTheStandardOne"), 100000, std::nullopt);
    EXPECT_EQ(empty_reason.reason, "Not Found");

    auto const repeated = through_duet(raw_of("FirstOfRepeatedFields"), 100000, std::nullopt);
    EXPECT_FALSE(repeated.ec) << repeated.ec.message();
    EXPECT_EQ(repeated.session_id, "first");
    EXPECT_EQ(repeated.content_type, "text/plain");

    EXPECT_EQ(through_duet(raw_of("OverTheBodyLimit"), 100000, 4).ec, bhttp::error::body_limit);
    EXPECT_EQ(through_duet(raw_of("HeadOverTheLimit"), 100000, std::nullopt).ec, bhttp::error::header_limit);
    EXPECT_EQ(through_duet(raw_of("TruncatedBody"), 100000, std::nullopt).ec, bhttp::error::partial_message);
}

// The client's own bound on a whole answer (client_options::max_message_bytes), beside Beast's body_limit
// which it leaves off: a longer body, declared or chunked, fails as body_limit before it is kept, whatever
// the read size, and an event stream (a long-lived stream of many messages) is never bounded here.
// The first Content-Type is the answer's, even an empty one: a second one saying text/event-stream does not
// make the answer a stream (as Beast's fields, which find the first, read it).
TEST(ResponseParserReadings, TheFirstContentTypeCountsEvenWhenEmpty) {
    response_parser parser;
    ASSERT_FALSE(feed(parser, raw_of("EmptyFirstContentType"), 64, {.body = std::nullopt}));
    EXPECT_EQ(parser.content_type(), "");
    EXPECT_FALSE(parser.event_stream());
    EXPECT_EQ(parser.body(), "{}");
}

TEST(ResponseParserReadings, AWholeBodyOverTheClientsBoundFailsButAStreamDoesNot) {
    auto const bounded = [](std::string_view name, std::size_t step) {
        response_parser parser;
        parser.max_whole_body(4);
        return feed(parser, raw_of(name), step, {.body = std::nullopt});
    };
    for (std::size_t const step : {std::size_t{1}, std::size_t{100000}}) {
        EXPECT_EQ(bounded("OverTheBodyLimit", step), bhttp::error::body_limit) << step;
        EXPECT_EQ(bounded("ChunkedOverTheBodyLimit", step), bhttp::error::body_limit) << step;
        EXPECT_EQ(bounded("EventStream", step), through_duet(raw_of("EventStream"), step, std::nullopt).ec)
            << "an event stream reads as without the bound, " << step;
        EXPECT_FALSE(bounded("Http10WithoutKeepAlive", step)) << "a body within the bound, " << step;
    }
}

} // namespace
