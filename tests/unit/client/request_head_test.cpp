// The hand-written head of the HTTP client's requests (duet/client/detail/request_head.hpp): for every shape
// the client sends (POST with a JSON-RPC body, the legacy GET stream and its resumption, the closing DELETE;
// configured headers, legacy session fields, modern routing headers) the bytes are exactly those Beast's
// serializer writes for the request the client built before, so servers see no change on the wire.
#include <duet/client/detail/request_head.hpp>

#include <boost/beast/http.hpp>

#include <gtest/gtest.h>

#include <sstream>
#include <utility>
#include <vector>

namespace {

namespace bhttp = boost::beast::http;
using duet::client::detail::append_request_head;
using duet::client::detail::request_fields;
using fields_t = std::vector<std::pair<std::string, std::string>>;

// What the client wrote through Beast: the request built field by field with set(), prepared, serialized.
std::string beast_bytes(bhttp::verb verb, fields_t const& sets, std::string const& body) {
    bhttp::request<bhttp::string_body> req{verb, "/mcp?x=1", 11};
    for (auto const& [k, v] : sets)
        req.set(k, v);
    req.body() = body;
    req.prepare_payload();
    std::ostringstream os;
    os << req;
    return os.str();
}

std::string hand_bytes(bhttp::verb verb, fields_t const& sets, std::string const& body) {
    request_fields f;
    for (auto const& [k, v] : sets)
        f.set(k, v);
    std::string out;
    append_request_head(out, bhttp::to_string(verb), "/mcp?x=1", f, body.size());
    return out + body;
}

fields_t concat(std::initializer_list<fields_t> parts) {
    fields_t out;
    for (auto const& p : parts)
        out.insert(out.end(), p.begin(), p.end());
    return out;
}

TEST(RequestHead, IsByteIdenticalToBeastForEveryShapeTheClientSends) {
    fields_t const base = {{"Host", "127.0.0.1:8080"}, {"User-Agent", "duet-client"}};
    // What an owner may configure on the target (http_target::headers), the odd ones included.
    std::vector<fields_t> const configured = {
        {},
        {{"Authorization", "Bearer abc.def"}},
        {{"accept", "text/plain"}, {"X-Padded", "  spaced\t "}},
        {{"host", "other.example:1"}, {"X-A", "1"}, {"x-a", "2"}},
        {{"Content-Length", "5"}},
        {{"Connection", "close"}},
        {{"Transfer-Encoding", "chunked"}},
        {{"Transfer-Encoding", "gzip, chunked"}},
        {{"Transfer-Encoding", "gzip"}, {"X-After", "te moves"}},
        {{"X-Empty", ""}, {"X-Blank", "   "}},
    };
    std::vector<fields_t> const legacy = {
        {}, {{"Mcp-Session-Id", "0f3c9a1e6b7d4c2a8e5f1b3d7c9a2e4f"}, {"MCP-Protocol-Version", "2025-06-18"}}};
    std::vector<fields_t> const post_extra = {
        {{"Content-Type", "application/json"}, {"Accept", "application/json, text/event-stream"}},
        {{"Content-Type", "application/json"},
         {"Accept", "application/json, text/event-stream"},
         {"MCP-Protocol-Version", "2026-07-28"},
         {"Mcp-Method", "tools/call"},
         {"Mcp-Name", "echo"}},
    };
    std::vector<fields_t> const get_extra = {{{"Accept", "text/event-stream"}},
                                             {{"Accept", "text/event-stream"}, {"Last-Event-ID", "17"}}};
    std::vector<std::string> const bodies = {
        "", R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}})",
        std::string(70000, 'x')};
    int shapes = 0;
    auto check = [&](bhttp::verb verb, fields_t const& sets) {
        for (auto const& body : bodies) {
            auto const expected = beast_bytes(verb, sets, body);
            auto const got = hand_bytes(verb, sets, body);
            ASSERT_EQ(got, expected) << bhttp::to_string(verb) << " with " << sets.size() << " fields, body "
                                     << body.size();
            ++shapes;
        }
    };
    for (auto const& c : configured)
        for (auto const& l : legacy) {
            for (auto const& p : post_extra)
                check(bhttp::verb::post, concat({base, c, l, p}));
            for (auto const& g : get_extra)
                check(bhttp::verb::get, concat({base, c, l, g}));
            check(bhttp::verb::delete_, concat({base, c, l}));
            check(bhttp::verb::put, concat({base, c, l}));
            check(bhttp::verb::options, concat({base, c, l}));
        }
    EXPECT_EQ(shapes, 10 * 2 * 7 * 3);
}

TEST(RequestHead, APostCarriesItsLengthLastAndAGetNone) {
    request_fields f;
    f.set("Host", "h:1");
    f.set("Content-Length", "99");
    f.set("Accept", "text/event-stream");
    std::string post;
    append_request_head(post, "POST", "/mcp", f, 2);
    EXPECT_EQ(post,
              "POST /mcp HTTP/1.1\r\nHost: h:1\r\nAccept: text/event-stream\r\nContent-Length: 2\r\n\r\n");
    std::string get;
    append_request_head(get, "GET", "/mcp", f, 0);
    EXPECT_EQ(get, "GET /mcp HTTP/1.1\r\nHost: h:1\r\nAccept: text/event-stream\r\n\r\n");
}

TEST(RequestHead, SettingANameAgainReplacesItAndMovesItLast) {
    request_fields f;
    f.set("Accept", "a");
    f.set("Host", "h");
    f.set("ACCEPT", " b ");
    ASSERT_EQ(f.items().size(), 2u);
    EXPECT_EQ(f.items()[0].name, "Host");
    EXPECT_EQ(f.items()[1].name, "ACCEPT");
    EXPECT_EQ(f.items()[1].value, "b");
}

} // namespace
