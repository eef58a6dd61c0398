// The hand-written head of a plain response (src/transport/http/response_head): for every shape the server
// sends, the bytes are exactly those Beast's serializer writes for the response the server built before
// (Content-Type when there is a body, the extra fields in order, keep_alive(), prepare_payload()), so clients
// see no change on the wire.
#include "transport/http/response_head.hpp"

#include <boost/beast/http.hpp>

#include <gtest/gtest.h>

#include <sstream>

namespace {

namespace bhttp = boost::beast::http;
using duet::transport::http::append_response_head;
using duet::transport::http::response_head;
using fields_t = std::vector<std::pair<std::string, std::string>>;

// What the server wrote through Beast: the response built as it was, serialized whole.
std::string beast_bytes(unsigned version, bhttp::status status, std::string const& content_type,
                        fields_t const& fields, std::string const& body, bool keep_alive) {
    bhttp::response<bhttp::string_body> res{status, version};
    if (!body.empty())
        res.set(bhttp::field::content_type, content_type);
    for (auto const& [k, v] : fields)
        res.set(k, v);
    res.body() = body;
    res.keep_alive(keep_alive);
    res.prepare_payload();
    std::ostringstream os;
    os << res;
    return os.str();
}

std::string hand_bytes(unsigned version, bhttp::status status, std::string const& content_type,
                       fields_t const& fields, std::string const& body, bool keep_alive) {
    std::string out;
    append_response_head(out, {.version = version,
                               .status = static_cast<unsigned>(status),
                               .content_type = content_type,
                               .fields = fields,
                               .body_size = body.size(),
                               .keep_alive = keep_alive});
    return out + body;
}

TEST(ResponseHead, IsByteIdenticalToBeastForEveryShapeTheServerSends) {
    auto const statuses = {bhttp::status::ok,
                           bhttp::status::accepted,
                           bhttp::status::bad_request,
                           bhttp::status::unauthorized,
                           bhttp::status::forbidden,
                           bhttp::status::not_found,
                           bhttp::status::method_not_allowed,
                           bhttp::status::not_acceptable,
                           bhttp::status::conflict,
                           bhttp::status::payload_too_large,
                           bhttp::status::request_header_fields_too_large,
                           bhttp::status::internal_server_error,
                           bhttp::status::service_unavailable};
    std::vector<fields_t> const field_sets = {
        {},
        {{"Mcp-Session-Id", "0f3c9a1e6b7d4c2a8e5f1b3d7c9a2e4f"}},
        {{"WWW-Authenticate", "Bearer error=\"invalid_token\""}},
        {{"Allow", "GET, POST, DELETE"}},
        {{"Allow", "POST"}, {"X-Extra", "two fields keep their order"}},
    };
    std::vector<std::string> const bodies = {
        "", R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}]}})",
        std::string(70000, 'x')};
    int shapes = 0;
    for (unsigned version : {10u, 11u})
        for (auto status : statuses)
            for (auto const& fields : field_sets)
                for (auto const& body : bodies)
                    for (bool keep_alive : {true, false}) {
                        auto const expected =
                            beast_bytes(version, status, "application/json", fields, body, keep_alive);
                        auto const got =
                            hand_bytes(version, status, "application/json", fields, body, keep_alive);
                        ASSERT_EQ(got, expected) << "HTTP/" << version << " " << static_cast<unsigned>(status)
                                                 << " body " << body.size() << " keep-alive " << keep_alive;
                        ++shapes;
                    }
    EXPECT_EQ(shapes, 2 * 13 * 5 * 3 * 2);
}

TEST(ResponseHead, AnEmptyBodyHasNoContentTypeButALengthOfZero) {
    std::string out;
    append_response_head(out, {.status = 202, .content_type = "application/json"});
    EXPECT_EQ(out, "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n");
}

// Statuses the server never sends, written as Beast writes them all the same (a length of 0 included).
TEST(ResponseHead, StatusesWithoutABodyAreWrittenAsBeastWritesThem) {
    for (auto status : {bhttp::status::no_content, bhttp::status::not_modified, bhttp::status::continue_})
        EXPECT_EQ(hand_bytes(11, status, "application/json", {}, "", true),
                  beast_bytes(11, status, "application/json", {}, "", true))
            << static_cast<unsigned>(status);
}

TEST(ResponseHead, AppendsToWhatIsAlreadyThere) {
    std::string out = "kept";
    append_response_head(out, {.status = 200, .content_type = "text/plain", .body_size = 2});
    EXPECT_EQ(out, "keptHTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n");
}

} // namespace
