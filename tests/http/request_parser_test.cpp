// The server's request (src/transport/http/request): Beast's HTTP/1 parser fills a request that keeps its
// head in one buffer instead of a `bhttp::request` whose basic_fields allocate every field. The server must
// read every request as it did through Beast's own parser: the same method, target, version, keep-alive and
// body, the same fields with every value of a name in the order it came, and the same errors at the same
// limits, however the bytes arrive. (Beast's fields list a repeated name's values together, after the first
// one; the request keeps arrival order. The server only ever looks fields up by name, so the rows are
// compared grouped by name, each group in its own order.)
#include "support/beast_feed.hpp"
#include "transport/http/request.hpp"

#include <boost/beast/http.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <tuple>
#include <vector>

namespace {

namespace bhttp = boost::beast::http;
using duet::test::feed;
using duet::transport::http::request;
using duet::transport::http::request_parser;
using limits = duet::test::parse_limits;

using field_row = std::tuple<bhttp::field, std::string, std::string>;

struct reading {
    boost::system::error_code ec;
    bhttp::verb method = bhttp::verb::unknown;
    std::string target;
    unsigned version = 0;
    bool keep_alive = false;
    std::string body;
    std::vector<field_row> fields;
    bool operator==(reading const&) const = default;
};

// The fields grouped by case-insensitive name (in the order each name first came), each group in order.
void group_by_name(std::vector<field_row>& fields) {
    auto lower = [](std::string s) {
        for (auto& c : s)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return s;
    };
    std::vector<std::string> first_seen;
    for (auto const& f : fields)
        if (std::find(first_seen.begin(), first_seen.end(), lower(std::get<1>(f))) == first_seen.end())
            first_seen.push_back(lower(std::get<1>(f)));
    std::stable_sort(fields.begin(), fields.end(), [&](field_row const& a, field_row const& b) {
        auto rank = [&](field_row const& f) {
            return std::find(first_seen.begin(), first_seen.end(), lower(std::get<1>(f))) -
                   first_seen.begin();
        };
        return rank(a) < rank(b);
    });
}

void PrintTo(reading const& r, std::ostream* os) {
    *os << "ec=" << r.ec.message() << " method=" << bhttp::to_string(r.method) << " target=" << r.target
        << " version=" << r.version << " keep_alive=" << r.keep_alive << " body=" << r.body << " fields=[";
    for (auto const& [n, s, v] : r.fields)
        *os << static_cast<int>(n) << ":" << s << "=" << v << "; ";
    *os << "]";
}

reading through_beast(std::string const& raw, std::size_t step, limits lim = {}) {
    bhttp::request_parser<bhttp::string_body> parser;
    reading r;
    r.ec = feed(parser, raw, step, lim);
    if (r.ec)
        return r;
    auto const& m = parser.get();
    r.method = m.method();
    r.target = std::string(m.target());
    r.version = m.version();
    r.keep_alive = m.keep_alive();
    r.body = m.body();
    for (auto const& f : m)
        r.fields.emplace_back(f.name(), std::string(f.name_string()), std::string(f.value()));
    return r;
}

reading through_duet(std::string const& raw, std::size_t step, limits lim = {}) {
    request_parser parser;
    reading r;
    r.ec = feed(parser, raw, step, lim);
    if (r.ec)
        return r;
    // Released, as the server takes it: the fields must survive the move.
    request const m = parser.release();
    r.method = m.method();
    r.target = std::string(m.target());
    r.version = m.version();
    r.keep_alive = m.keep_alive();
    r.body = std::string(m.body());
    for (auto const& f : m)
        r.fields.emplace_back(f.name(), std::string(f.name_string()), std::string(f.value()));
    return r;
}

std::string modern_post() {
    std::string const body = R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}})";
    return "POST /mcp?x=1 HTTP/1.1\r\n"
           "Host: 127.0.0.1:8080\r\n"
           "User-Agent: test\r\n"
           "Content-Type: application/json\r\n"
           "Accept: application/json, text/event-stream\r\n"
           "MCP-Protocol-Version: 2026-07-28\r\n"
           "Mcp-Method: tools/call\r\n"
           "mcp-name: echo\r\n"
           "X-Empty:\r\n"
           "Content-Length: " +
           std::to_string(body.size()) + "\r\n\r\n" + body;
}

std::string many_fields() {
    std::string raw = "GET /mcp HTTP/1.1\r\nHost: h\r\n";
    for (int i = 0; i < 40; ++i)
        raw += "X-Field-" + std::to_string(i) + ": " + std::string(static_cast<std::size_t>(i) * 7, 'v') +
               "\r\n";
    return raw + "\r\n";
}

struct case_row {
    char const* name;
    std::string raw;
};

std::vector<case_row> cases() {
    return {
        {"ModernPost", modern_post()},
        {"ChunkedBodyWithExtensionsAndTrailer",
         "POST /mcp HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n"
         "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Sum: 11\r\n\r\n"},
        {"DuplicateFieldsKeepTheirOrder", "POST /mcp HTTP/1.1\r\nHost: h\r\nAccept: a\r\nX-A: 1\r\naccept: "
                                          "b\r\nX-A: 2\r\nContent-Length: 0\r\n\r\n"},
        {"Http10WithoutKeepAlive", "GET / HTTP/1.0\r\nHost: h\r\n\r\n"},
        {"Http10WithKeepAlive", "GET / HTTP/1.0\r\nHost: h\r\nConnection: keep-alive\r\n\r\n"},
        {"Http11Close",
         "DELETE /mcp HTTP/1.1\r\nHost: h\r\nConnection: close\r\nMcp-Session-Id: abc\r\n\r\n"},
        {"UnknownVerb", "PURGE /mcp HTTP/1.1\r\nHost: h\r\n\r\n"},
        {"NoFields", "GET / HTTP/1.1\r\n\r\n"},
        {"ShortHead", "GET / HTTP/1.1\r\nA: b\r\n\r\n"},
        {"FieldsBeyondTheReservedRoom", many_fields()},
        {"ValueWithSurroundingSpaces", "GET / HTTP/1.1\r\nHost:   spaced value  \r\n\r\n"},
    };
}

class SameAsBeast : public ::testing::TestWithParam<std::size_t> {};

TEST_P(SameAsBeast, RequestsReadTheSameWhateverTheReadSize) {
    for (auto const& c : cases()) {
        auto expected = through_beast(c.raw, GetParam());
        ASSERT_FALSE(expected.ec) << c.name << ": " << expected.ec.message();
        auto got = through_duet(c.raw, GetParam());
        group_by_name(expected.fields);
        group_by_name(got.fields);
        EXPECT_EQ(got, expected) << c.name;
    }
}

INSTANTIATE_TEST_SUITE_P(ReadSizes, SameAsBeast, ::testing::Values(1, 7, 64, 100000));

TEST(RequestParser, KeepsEveryFieldOfAModernPostWithItsKnownName) {
    auto const r = through_duet(modern_post(), 100000);
    ASSERT_FALSE(r.ec);
    ASSERT_EQ(r.fields.size(), 9u);
    EXPECT_EQ(r.fields[0], field_row(bhttp::field::host, "Host", "127.0.0.1:8080"));
    EXPECT_EQ(r.fields[5], field_row(bhttp::field::unknown, "Mcp-Method", "tools/call"));
    EXPECT_EQ(r.fields[6], field_row(bhttp::field::unknown, "mcp-name", "echo"));
    EXPECT_EQ(r.fields[7], field_row(bhttp::field::unknown, "X-Empty", ""));
    EXPECT_EQ(r.target, "/mcp?x=1");
    EXPECT_EQ(r.method, bhttp::verb::post);
    EXPECT_TRUE(r.keep_alive);
}

TEST(RequestParser, KeepsRepeatedFieldsInArrivalOrder) {
    auto const r = through_duet("POST /mcp HTTP/1.1\r\nHost: h\r\nAccept: a\r\nX-A: 1\r\naccept: b\r\nX-A: "
                                "2\r\nContent-Length: 0\r\n\r\n",
                                100000);
    ASSERT_FALSE(r.ec);
    std::vector<field_row> const expected{
        {bhttp::field::host, "Host", "h"},   {bhttp::field::accept, "Accept", "a"},
        {bhttp::field::unknown, "X-A", "1"}, {bhttp::field::accept, "accept", "b"},
        {bhttp::field::unknown, "X-A", "2"}, {bhttp::field::content_length, "Content-Length", "0"}};
    EXPECT_EQ(r.fields, expected);
}

TEST(RequestParser, RefusesAHeadOverTheLimitAsBeastDoes) {
    auto const raw = many_fields();
    limits const lim{.header = 256};
    for (std::size_t step : {1u, 100000u}) {
        EXPECT_EQ(through_duet(raw, step, lim).ec, bhttp::error::header_limit);
        EXPECT_EQ(through_beast(raw, step, lim).ec, bhttp::error::header_limit);
    }
}

TEST(RequestParser, RefusesADeclaredBodyOverTheLimitBeforeReadingIt) {
    std::string const raw = "POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\n";
    limits const lim{.body = 99};
    EXPECT_EQ(through_duet(raw, 100000, lim).ec, bhttp::error::body_limit);
    EXPECT_EQ(through_beast(raw, 100000, lim).ec, bhttp::error::body_limit);
}

TEST(RequestParser, RefusesAChunkedBodyThatGrowsOverTheLimit) {
    std::string const raw = "POST /mcp HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: "
                            "chunked\r\n\r\n8\r\n12345678\r\n8\r\n12345678\r\n0\r\n\r\n";
    limits const lim{.body = 10};
    EXPECT_EQ(through_duet(raw, 100000, lim).ec, bhttp::error::body_limit);
    EXPECT_EQ(through_beast(raw, 100000, lim).ec, bhttp::error::body_limit);
}

TEST(RequestParser, ReportsMalformedHeadsWithBeastsErrors) {
    for (std::string const raw : {"GET / HTTP/1.1\r\nBad Name: x\r\n\r\n", "GET / HTTQ/1.1\r\n\r\n",
                                  "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"}) {
        auto const expected = through_beast(raw, 100000).ec;
        ASSERT_TRUE(expected) << raw;
        EXPECT_EQ(through_duet(raw, 100000).ec, expected) << raw;
    }
}

TEST(RequestParser, AVersionOnlyRequestAnswersAnUnreadOne) {
    request const r(10);
    EXPECT_EQ(r.version(), 10u);
    EXPECT_EQ(r.begin(), r.end());
    EXPECT_TRUE(r.target().empty());
    EXPECT_FALSE(r.keep_alive());
}

} // namespace
